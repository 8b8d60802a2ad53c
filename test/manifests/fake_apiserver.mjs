// A fake kube-apiserver for the DRA front end's tests: the slice of the API the plugin uses
// (ResourceSlices, ResourceClaims, Nodes and their status, events.k8s.io/v1 Events), over real
// TLS with a bearer token, with the real server's unkind parts on demand: 401 after a token
// rotation, 409 on a stale resourceVersion, 410 for a watch from a compacted resourceVersion,
// dropped watches, an API server that is down, injected 403/429/500. Every slice written is checked
// against the official schema (kubernetes-models), strict field validation and
// kube-apiserver's own validation of the release it runs as (kube_validation.mjs, a port of
// pkg/apis/resource/validation); a write that fails is answered as the real server answers
// it (422 Invalid with the field errors, 400 for a malformed quantity, 500 where that
// release's Go code panics) and recorded, so a test asserts none. Events are decoded and
// validated as kube-apiserver does it (event_validation.mjs, a port of
// pkg/apis/core/validation/events.go and the event strategy), refused the same way and
// recorded in the same place. Authorization is the bearer token alone unless a test turns on
// RBAC (POST /rbac): then every request is authorized as kube-apiserver's RBAC authorizer does
// it for the DRA driver's service account with the rules of a ClusterRole manifest
// (rbac_authorizer.mjs), refused 403 as the real server refuses, and the resourceclaims/status
// strategy's granular authorization of 1.36+ applies (claim_status_authz.mjs). A node's
// status can be set as its kubelet writes it and patched as an operator does it (JSON patch on
// nodes/status: json_patch.mjs, node_status.mjs), and the admin API answers kube-scheduler's
// verdict for a pod asking an extended resource on it (extended_resource_rule.mjs).
//
// Usage: node fake_apiserver.mjs <state dir> [--bookmark-ms N] [--release 1.34|1.35|1.36|1.37]
//        [--gates Gate=true,Gate=false]   (kube-apiserver's --feature-gates, over the defaults)
// The release (default 1.37) sets the feature gates at that release's defaults: a write
// loses the fields of a disabled gate as the real server's strategy drops them, and the
// validation is that release's (kube_release.mjs and kube_validation.mjs name the upstream
// code). A gate locked to its default at that release (DRAAdminAccess from 1.36,
// DRAExtendedResource from 1.37) cannot be set otherwise: the server exits 1 with featuregate's message, as kube-apiserver does.
// Writes <state dir>/ca.crt and <state dir>/token, then prints one line of JSON:
// {"apiPort": N, "adminPort": M}. The admin API (plain HTTP on 127.0.0.1) drives faults:
//   POST /token {token}          rotate: only the new token is accepted from now on
//   POST /fault {method, match, code, count}   the next `count` matching requests fail;
//                                with `body`, `bytes` or `endless` they get a broken answer;
//                                with `hold`, the failure waits for /release
//   POST /claims <ResourceClaim> store (or replace) a claim; answers it with uid. Stored as a
//                                client writes it: created (resourceclaim strategy), then its
//                                status written (status strategy); a claim of that name
//                                already stored is the old object of both. Of the strategies
//                                the fake has DRA admin access (kube_release.mjs): with
//                                DRAAdminAccess off the adminAccess fields are dropped
//                                (stats.dropped), and a claim whose request (or allocation
//                                result) asks for admin access in a namespace without the
//                                label resource.kubernetes.io/admin-access: "true" is refused
//                                422 Invalid, `ResourceClaim.resource.k8s.io "<name>" is
//                                invalid: spec.devices.requests[<i>].adminAccess: Forbidden:
//                                admin access to devices requires the
//                                `resource.kubernetes.io/admin-access: true` label on the
//                                containing namespace` (for the status:
//                                status.allocation.devices.results[<i>].adminAccess), recorded
//                                in stats.invalid. The status strategy's DRAResourceClaimDeviceStatus
//                                part applies too (claim_status_validation.mjs): with the gate
//                                off status.devices is dropped (stats.dropped["resourceclaims
//                                status.devices"]) unless the stored claim has entries, and entries
//                                of devices no longer allocated go. (Its other drops, consumable
//                                capacity and binding conditions, and ValidateResourceClaimStatus-
//                                Update run on the resourceclaims/status API below, not here.)
//                                A claim stored here forgets its server-side apply owners.
//   POST /namespaces {name, labels}  create or replace a namespace with these labels (how an
//                                administrator labels one for admin access); answers the
//                                Namespace. A namespace never posted exists, unlabelled.
//   GET  /namespaces             the namespaces posted
//   POST /deviceclasses <DeviceClass>  store a device class (schema-checked)
//   POST /node-status {name, capacity, allocatable}  set the node's status.capacity and
//                                status.allocatable (maps of resource name -> quantity) as its
//                                kubelet writes them: decoded (each quantity parsed, 400 when one
//                                does not, stored canonically: "1000m" is "1"), defaulted (an
//                                absent allocatable is the capacity: SetDefaults_NodeStatus),
//                                ValidateNodeResources (422 `Node "<name>" is invalid: ...`); the
//                                node stored if need be (the synthetic node's name and uid, a
//                                creationTimestamp), its resourceVersion bumped. Answers the Node.
//                                Not recorded in stats.invalid (the kubelet's writes, not the
//                                plugin's).
//   GET  /node-status[?name=N]   the stored nodes, or node N (404 when not stored)
//   POST /schedule-extended {node, resource, requested[, devices]}  kube-scheduler's verdict for
//                                a pod on `node` asking `limits: <resource>: <requested>` (default
//                                1): {servedBy: "devicePlugin" | "dra" | "none", reason, release,
//                                DRAExtendedResource[, deviceClass]}, from NodeResourcesFit and
//                                DynamicResources as extended_resource_rule.mjs ports them per
//                                release (scheduleExtendedResource), at the fake's release and
//                                gates (DRAExtendedResource: kube_release.mjs, locked on at 1.37),
//                                over the stored node (a node never stored: an empty status) and
//                                the DeviceClasses posted (spec.extendedResourceName). "none" is a
//                                Pending pod, `reason` the scheduler's text ("Insufficient
//                                rdma/hca_shared_devices_a", fit.go); for "dra" and "devicePlugin"
//                                it is the fake's account. `devices`: the devices the class's
//                                driver publishes for the node (omitted: allocation assumed to
//                                succeed; too few: "cannot allocate all claims"). 400 for a
//                                malformed request.
//   POST /allocate <ResourceClaim>  create it as POST /claims does (the same admin-access
//                                refusal, before any allocation), allocate it as the
//                                scheduler would (dra_allocator.mjs: shares, consumed
//                                capacity, taints, admin access per DRAAdminAccess and
//                                DRADeviceTaints), write the allocation as its status and
//                                store it; a claim that does not fit is answered 409
//                                Unschedulable with the allocator's reason
//   POST /deallocate {namespace, name}  delete a claim: its capacity is free again
//   GET  /claim-status-owners    server-side apply's owners of status.devices entries (see the
//                                resourceclaims/status API): {"<ns>/<name>": {"<driver>/<pool>/
//                                <device>[/<shareID>]": {manager, fields: [top-level fields]}}}
//   POST /wipe {fieldSelector}   delete-collection, as the kubelet does at its start
//   POST /hold | /release       park create/update answers (stored, event sent) / send them
//   POST /drop-watches | /compact | /down | /up | /bookmark | /tick (another object's write)
//   POST /short-watches {on}     every watch ends as soon as it opens (200, no events)
//   POST /black-hole-watches {on} open watches (and new ones) get nothing more: no event,
//                                no bookmark, no end (a half-open connection)
//   POST /outage {on}            every request answered 503 (counted), watches cut
//   POST /claim-delay {ms}       every claim GET answers `ms` late (stats count them in flight)
//   POST /gates {name: bool}     flip feature gates (an upgrade, or an operator's flag); a
//                                gate locked at the release is refused 400 with featuregate's
//                                "cannot set feature gate G to V, feature is locked to D"
//   POST /kube-release {release} become another release, its gates at their defaults
//   POST /rbac {file, driver, node}  from now on authorize every API request with the valid
//                                token as kube-apiserver's RBAC authorizer does
//                                (rbac_authorizer.mjs: RequestInfoFactory's attributes, RBAC's
//                                RuleAllows), for the user system:serviceaccount:kube-system:
//                                rdma-shared-dp, with the rules of every ClusterRole in the YAML
//                                manifest `file` (bindings taken as given; other kinds skipped),
//                                each resourceNames entry "rdma.k8s-rdma-shared-dp.io" replaced
//                                by `driver`; `node`: the node name the token carries (the bound
//                                service-account token's node claim, user extra
//                                authentication.kubernetes.io/node-name; none when omitted).
//                                A refused request: 403 with kube-apiserver's Status (reason
//                                Forbidden, `<resource>.<group> "<name>" is forbidden: User
//                                "system:serviceaccount:kube-system:rdma-shared-dp" cannot <verb>
//                                resource "<resource>[/<sub>]" in API group "<group>" in the
//                                namespace "<ns>"`; without a name `<resource>.<group> is
//                                forbidden: ...`, cluster-scoped `... at the cluster scope`, the
//                                core group `<resource> ...` and `in API group ""`; details
//                                {name, group, kind} without the empty ones), counted in
//                                stats.forbidden ("<verb> <resource>[/<sub>] <ns>/<name>:
//                                <message>"). It also turns on the resourceclaims/status
//                                strategy's granular authorization of 1.36+ (below). 400 for a
//                                file that cannot be read or parsed. Answers {on, user, rules}.
//   DELETE /rbac                 back to the bearer token alone; GET /rbac: {on, user, rules}
//                                (admin requests are never authorized)
//   POST /await {until, timeoutMs}  answers once the JavaScript expression `until` over
//                                (stats, slices, watches) holds, or {ok:false} at the timeout:
//                                tests wait on the server's state, never on a clock
//   POST /apf {budget, burst, retryAfter, listDelayMs}  API Priority and Fairness as a fleet
//                                meets it: `budget` requests a second (a token bucket of
//                                `burst`), past it 429 with Retry-After `retryAfter`; LISTs
//                                answer up to `listDelayMs` late as the bucket empties; a
//                                client that comes back before its Retry-After is counted
//                                (stats.earlyRetries); budget 0 turns it off
//   GET  /stats | /slices | /requests (each API request: t ms, method, url, code)
//   GET  /claims                 every stored ResourceClaim, status (allocation, devices) included;
//                                stats.claimStatusApplies / claimStatusWrites / claimStatusNoops
//                                count the resourceclaims/status applies below
//   GET  /events                 every stored events.k8s.io/v1 Event (server fields filled)
//   GET  /series                 requests per second since start, by kind (fleet_bench)
//   GET  /nodes                  per node: slices, devices, last write's and wipe's times,
//                                first write and writes since the last /mark
//   POST /mark                   start the per-node first write and write count over
//   POST /wipe-wave {nodes, spreadMs}  wipe each node's slices, spread evenly over spreadMs
//   POST /time-scale {scale}     the server's own timers (watch timeoutSeconds, bookmarks) run
//                                `scale` times as fast from now on, open watches' ends moved
// The events.k8s.io/v1 API (the same token, faults, /outage, /apf budget and /hold as the rest):
//   POST /apis/events.k8s.io/v1/namespaces/{ns}/events   create: 201 with the stored Event (uid,
//        resourceVersion, creationTimestamp filled, generateName honoured, dryRun=All), 422 Invalid
//        / 400 BadRequest as the real server answers (recorded in stats.invalid), 409 AlreadyExists
//        for a name taken in the namespace, 500 for a resourceVersion set on create;
//        stats.eventCreates counts the Events stored
//   GET  /apis/events.k8s.io/v1/namespaces/{ns}/events and /apis/events.k8s.io/v1/events
//        EventList (fieldSelector as the events.k8s.io/v1 field labels: regarding.name, reason,
//        reportingController, type, ...); GET .../namespaces/{ns}/events/{name}: one, or 404
// ResourceClaims (resource.k8s.io/v1; the same token, faults, /outage, /apf budget and /hold):
//   GET  /apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims/{name}  the claim (stats.claimGets,
//        /claim-delay), or 404
//   GET  .../resourceclaims/{name}/status  the claim, or 404
//   PATCH .../resourceclaims/{name}/status  with Content-Type: application/apply-patch+yaml and
//        ?fieldManager=<name>[&force=true][&dryRun=All]: server-side apply of status.devices, as a DRA
//        driver writes device status (KEP-4817). The body is the JSON form of an apply configuration:
//          {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
//           "metadata": {"name": N, "namespace": NS[, "resourceVersion": RV]},
//           "status": {"devices": [{"driver": D, "pool": P, "device": DEV[, "shareID": UUID],
//             "conditions": [{"type": "Ready", "status": "True", "reason": "R", "message": "",
//                             "lastTransitionTime": "2026-01-02T03:04:05Z"}],
//             "data": {...any JSON object...},
//             "networkData": {"interfaceName": "net1", "hardwareAddress": "ea:9f:cb:40:b1:7b",
//                             "ips": ["10.9.8.7/24", "2001:db8::7/64"]}}]}}
//        Entries are merged by (driver, pool, device, shareID) per field manager, then the status
//        strategy (spec/metadata as stored, status.devices dropped with DRAResourceClaimDeviceStatus
//        off unless stored, shareID with DRAConsumableCapacity off unless in use, stale entries of
//        deallocated devices) and ValidateResourceClaimStatusUpdate at the fake's release
//        (claim_status_validation.mjs: an entry must name an allocated device, at most 8 conditions,
//        canonical CIDR addresses, 16 of them, interfaceName <= 256 and hardwareAddress <= 128 bytes,
//        data a JSON object <= 10 KiB, ...). Answers: 200 with the stored claim (resourceVersion
//        bumped, stats.claimStatusWrites; a no-op keeps it, stats.claimStatusNoops); 422 Invalid
//        (`ResourceClaim.resource.k8s.io "<name>" is invalid: [status.devices[0].networkData.ips[0]:
//        Invalid value: ...]`) and 422 for PatchOptions (`PatchOptions.meta.k8s.io "" is invalid:
//        fieldManager: Required value: is required for apply patch`); 404 NotFound for a missing
//        claim; 409 Conflict when metadata.resourceVersion is set and stale (stats.conflicts), or
//        when, without force=true, it changes a field another manager owns; 400 BadRequest for a
//        wrong apiVersion/kind, name or namespace, a body that is not JSON, other status fields;
//        500 for an undeclared field or a wrong type; 415 for other patch types (not modelled).
//        Refusals other than 404/409 are recorded in stats.invalid. What of server-side apply is
//        approximated is listed at claimStatusApi below. A metadata.uid other than the stored one
//        is 422 (`metadata.uid: Invalid value: "<uid>": field is immutable`). With /rbac, the
//        granular status authorization of 1.36+ (DRAResourceClaimGranularStatusAuthorization):
//        changing a driver's entries needs associated-node:patch (the token's node is the claim's
//        one allocated node) or arbitrary-node:patch on resourceclaims/driver named by the
//        driver, else 422 with a status.devices Forbidden cause (claimStatusApi below); without
//        /rbac any token holder may write any driver's entries.
// Nodes (core v1; the same token, faults, /outage, /apf budget, /hold and /rbac):
//   GET  /api/v1/nodes/{name} and /api/v1/nodes/{name}/status  the stored node (with
//        metadata.resourceVersion, status.capacity/allocatable, the zero daemonEndpoints and
//        nodeInfo every v1.Node carries), or, for a node never stored, the synthetic
//        {kind, apiVersion, metadata: {name, uid}} (uid: the md5 of the name)
//   PATCH /api/v1/nodes/{name}/status  with Content-Type application/json-patch+json
//        (?fieldValidation, ?dryRun=All, ?fieldManager): kube-apiserver's JSON patch of the node
//        (RFC 6902 as gopkg.in/evanphx/json-patch.v4 applies it: add, remove, replace, move, copy,
//        test; ~0/~1 escapes; negative array indices), the decoding of the result, the generic
//        registry's update and the node status strategy (spec kept, metadata may change,
//        ValidateNodeUpdate: quantities non-negative, an extended resource's an integer; resource
//        names are not checked upstream, so not here). Answers 200 with the stored node
//        (resourceVersion bumped; a patch that changes nothing keeps it; stats.nodeStatusPatches
//        counts both); a failing `test` and a `remove` of a missing path are alike 422 Invalid
//        "the server rejected our request due to an error in our request", details {} (patch.go
//        gives the library's error to NewGenericServerResponse, which keeps no cause): a failed
//        test is counted in stats.nodeStatusTestFailures (a guard doing its job), every other
//        refusal recorded in stats.invalid (for an Apply failure with the library's text
//        appended). A quantity that does not parse: 422 ` "" is invalid: patch: Invalid value:
//        "<patched JSON>": quantities must match the regular expression ...`; a negative one: 422
//        `Node "<name>" is invalid: status.capacity.<res>: Invalid value: "-1": must be greater
//        than or equal to 0`; a stale resourceVersion the patch set: 409; a renamed object: 400;
//        another patch type: 415. The steps, and what is approximated or not ported, are listed
//        at nodeStatusApi below, json_patch.mjs and node_status.mjs.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DeviceClass, ResourceClaim, ResourceSlice } from "kubernetes-models/resource.k8s.io/v1";
import { parseAllDocuments } from "yaml";
import { allocate } from "./dra_allocator.mjs";
import { checkStrict, dropUnknown, resourceV1 } from "./strict_fields.mjs";
import {
  beforeUpdateMeta, claimPrepareForCreate, claimPrepareForUpdate, claimStatusPrepareForUpdate, claimStatusValidateAdmin,
  claimValidateAdmin, dropDisabledFields, gateDefaults, lockedGateError,
} from "./kube_release.mjs";
import {
  FieldError, GoPanic, QuantityParseError, ValidateResourceSlice, ValidateResourceSliceUpdate, checkQuantities, forbidden, generateName,
  goJSON, goQuote, invalidStatus, notSupported, resourceSliceWarnings, validateCommonFields,
} from "./kube_validation.mjs";
import {
  claimStatusPrepareForUpdate as claimStatusStrategyPrepare, claimStatusValidateUpdate, dropDeallocatedStatusDevices,
  dropDisabledDRAResourceClaimDeviceStatusFields, validateFieldManager,
} from "./claim_status_validation.mjs";
import { clusterRoleRules, draServiceAccountUser, forbiddenStatus, newRequestInfo, rbacAuthorizer } from "./rbac_authorizer.mjs";
import { JSONPatchDecodeError, JSONPatchError, applyFailedStatus, applyPatch, decodePatch } from "./json_patch.mjs";
import {
  adminNodeStatus, canonicalLists, decodeNodeStatus, encodeNode, nodeInvalidRefusal, nodeStatusPrepareForUpdate,
  nodeStatusValidateUpdate, normalizeStored, patchDecodeRefusal,
} from "./node_status.mjs";
import { scheduleExtendedResource } from "./extended_resource_rule.mjs";
import {
  EVENTS_V1, FieldSelectorError, beforeCreateEvent, checkEventDecodes, eventAlreadyExistsStatus, eventBadRequestStatus,
  eventMatchesFields, eventNotFoundStatus, parseEventFieldSelector,
} from "./event_validation.mjs";
import { statusFailure } from "./api_status.mjs";

const dir = process.argv[2];
const argOf = (flag) => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
const bookmarkMs = Number(argOf("--bookmark-ms") || 0);
let release = argOf("--release") ?? "1.37";
const gates = gateDefaults(release);
for (const kv of (argOf("--gates") ?? "").split(",").filter(Boolean)) {
  const [gate, value] = kv.split("=");
  const locked = lockedGateError(release, gate, value === "true");
  if (locked) {
    console.error(`invalid argument "${kv}" for "--feature-gates" flag: ${locked}`);
    process.exit(1);
  }
  gates[gate] = value === "true";
}
fs.mkdirSync(dir, { recursive: true });
execFileSync("openssl", [
  "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=kubernetes",
  "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc",
  "-keyout", path.join(dir, "tls.key"), "-out", path.join(dir, "ca.crt"),
], { stdio: "ignore" });

let token = crypto.randomBytes(16).toString("hex");
fs.writeFileSync(path.join(dir, "token"), token);

const SLICES = "/apis/resource.k8s.io/v1/resourceslices";
let rv = 100;
let compactedRv = 0;
const slices = new Map(); // name -> object
const claims = new Map(); // ns/name -> object
// name -> Namespace posted to the admin API (POST /namespaces). The claim strategies look a
// namespace up (nsClient.Get) only for admin access; one never posted exists, unlabelled
// (the fake has no namespace lifecycle: claims are stored in any namespace).
const namespaces = new Map();
const getNamespace = (name) => namespaces.get(name) ?? { apiVersion: "v1", kind: "Namespace", metadata: { name, labels: {} } };
const classes = new Map(); // name -> DeviceClass
// name -> Node as the API writes it (node_status.mjs encodeNode): set by the admin API
// (POST /node-status) or created by a node's first nodes/status PATCH. A node not here is the
// synthetic one GET /api/v1/nodes/{name} has always answered (name and uid only).
const nodes = new Map();
const NODE_STATUS = /^\/api\/v1\/nodes\/([^/]+)\/status$/;
const NODE_TYPE = path.join(path.dirname(fileURLToPath(import.meta.url)), "node_modules/kubernetes-models/v1/Node.d.ts");
const nodeUid = (name) => crypto.createHash("md5").update(name).digest("hex");
const syntheticNode = (name) => ({ kind: "Node", apiVersion: "v1", metadata: { name, uid: nodeUid(name) } });
// A node stored for the first time: the synthetic one's name and uid, the current revision.
const newNode = (name) => encodeNode({ metadata: { name, uid: nodeUid(name), resourceVersion: String(rv),
  creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z") } });
const EVENTS = /^\/apis\/events\.k8s\.io\/v1\/(?:namespaces\/([^/]+)\/)?events(?:\/([^/]+))?$/;
const CLAIM_STATUS = /^\/apis\/resource\.k8s\.io\/v1\/namespaces\/([^/]+)\/resourceclaims\/([^/]+)\/status$/;
// ns/name -> Map(entry key -> {manager, fields}): which server-side apply manager applied
// each status.devices entry, and which of its fields (managedFields, approximated per entry).
const claimStatusOwners = new Map();
const eventObjects = new Map(); // ns/name -> events.k8s.io/v1 Event (not the watch events below)
const EVENT_TYPE = path.join(path.dirname(fileURLToPath(import.meta.url)), "node_modules/kubernetes-models/events.k8s.io/v1/Event.d.ts");
// A first-in first-out window whose oldest entry goes in O(1): Array.shift copies a large
// array's whole backing store (V8 cannot trim one in large-object space), which at 5,000
// nodes cost the server seconds (fleet_bench).
class Fifo {
  constructor() { this.buf = []; this.head = 0; }
  get length() { return this.buf.length - this.head; }
  push(x) { this.buf.push(x); }
  shift() {
    if (this.head >= this.buf.length) return undefined;
    const x = this.buf[this.head];
    this.buf[this.head++] = undefined; // what went out is not kept alive until compaction
    if (this.head >= 4096 && this.head * 2 >= this.buf.length) {
      this.buf = this.buf.slice(this.head);
      this.head = 0;
    }
    return x;
  }
  clear() { this.buf = []; this.head = 0; }
  toArray() { return this.buf.slice(this.head); }
  *[Symbol.iterator]() { for (let i = this.head; i < this.buf.length; i++) yield this.buf[i]; }
}
const events = new Fifo(); // {rv, type, object, node}, the last kEventWindow (the watch cache)
const eventsByNode = new Map(); // node -> the same events of that node's slices
// kube-apiserver's watch cache keeps a window of events; a watch from before it is 410
// Expired (staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go). A fleet's
// cold start writes tens of thousands; the window keeps replays and memory bounded.
const kEventWindow = Number(argOf("--event-window") || 50000);
const watches = new Set(); // {res, selector}
// Watches and slices indexed by spec.nodeName: a fleet of 5,000 nodes each watching its
// own slices would otherwise cost every event 5,000 selector checks.
const watchesByNode = new Map(); // node -> Set of watches selecting that node
const watchesAnyNode = new Set(); // watches without a nodeName selector
const sliceNamesByNode = new Map(); // node -> Set of slice names
// node -> {lastWriteAt, wipedAt, firstWriteAt, writes} (ms, performance.now()); the last
// two count from the latest /mark
const nodeInfo = new Map();
const infoOf = (node) => {
  if (!nodeInfo.has(node)) nodeInfo.set(node, { lastWriteAt: 0, wipedAt: 0, firstWriteAt: 0, writes: 0 });
  return nodeInfo.get(node);
};
const faults = [];
let down = false;
const stats = {
  requests: 0, writes: 0, creates: 0, updates: 0, deletes: 0, conflicts: 0, unauthorized: 0,
  claimStatusWrites: 0, claimStatusNoops: 0, claimStatusApplies: 0, nodeStatusPatches: 0, nodeStatusTestFailures: 0,
  watchesOpened: 0, lastWatchFrom: 0, lists: 0, claimGets: 0, invalid: [], byUserAgent: {},
  held: 0, throttled: 0, refused: 0, earlyRetries: 0, eventCreates: 0, forbidden: [],
  served: { list: 0, watch: 0, write: 0, probe: 0, get: 0 }, release, gates, dropped: {}, unknownFields: {}, dryRuns: 0, maxWritesPerSecond: 0, claimGetsInFlight: 0, maxClaimGetsInFlight: 0,
};

function status(res, code, reason, message) {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify(statusFailure(code, reason, message).status));
}

// A refused write as validateSlice describes it: a Status (422, 400) or, for a panic, the
// plain-text 500 of apiserver's WithPanicRecovery filter.
function refuse(res, bad) {
  if (bad.text) {
    res.writeHead(bad.code, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" });
    return res.end(bad.text + "\n");
  }
  res.writeHead(bad.code, { "content-type": "application/json" });
  res.end(JSON.stringify(bad.status));
}

function selectorOf(query) {
  const sel = {};
  for (const part of (query.get("fieldSelector") ?? "").split(",").filter(Boolean)) {
    const [k, v] = part.split("=");
    sel[k] = v;
  }
  return sel;
}

const nodeOfSlice = (obj) => obj?.spec?.nodeName ?? "";
function putSlice(obj) {
  const old = slices.get(obj.metadata.name);
  if (old) dropSliceIndex(old);
  slices.set(obj.metadata.name, obj);
  const node = nodeOfSlice(obj);
  if (!sliceNamesByNode.has(node)) sliceNamesByNode.set(node, new Set());
  sliceNamesByNode.get(node).add(obj.metadata.name);
  noteWrite(node);
}
function dropSliceIndex(obj) {
  sliceNamesByNode.get(nodeOfSlice(obj))?.delete(obj.metadata.name);
}
function removeSlice(obj) {
  slices.delete(obj.metadata.name);
  dropSliceIndex(obj);
}
function noteWrite(node) {
  const info = infoOf(node);
  info.lastWriteAt = performance.now();
  info.firstWriteAt ||= info.lastWriteAt;
  info.writes++;
}
// The slices a selector can match: only its node's when it names one.
function candidates(sel) {
  if (sel["spec.nodeName"] === undefined) return [...slices.values()];
  return [...(sliceNamesByNode.get(sel["spec.nodeName"]) ?? [])].map((n) => slices.get(n));
}

function matches(obj, sel) {
  for (const [k, v] of Object.entries(sel)) {
    const got = k.split(".").reduce((o, p) => (o ? o[p] : undefined), obj);
    if (got !== v) return false;
  }
  return true;
}

const waiters = new Set(); // {fn, res, timer}
function view() {
  return { stats: { ...stats, rv, watchesOpen: watches.size }, slices: [...slices.values()] };
}
function settle() {
  for (const w of [...waiters]) {
    let ok = false;
    try {
      // The slices only for an expression that reads them (a fleet's are tens of MB).
      ok = Boolean(w.fn({ ...stats, rv, watchesOpen: watches.size }, w.slices ? [...slices.values()] : []));
    } catch {
      ok = false;
    }
    if (ok) {
      waiters.delete(w);
      clearTimeout(w.timer);
      w.res.writeHead(200, { "content-type": "application/json" });
      w.res.end(JSON.stringify({ ok: true, ...view() }));
    }
  }
}

// A create's or update's answer; while writes are held (/hold), it waits for /release
// after the write is stored and its watch event sent: the client hears of its own write
// only after whatever a test does next (a wipe, say), as a slow network can order them.
let holdWrites = false;
let claimDelayMs = 0; // /claim-delay: every claim GET answers this late
let outage = false; // /outage: every API request is answered 503 (and counted)
let shortWatches = false; // /short-watches: every watch ends as soon as it opens
let blackHole = false; // /black-hole-watches: watches stay open and silent
const heldWrites = [];
// Every stored write (create, update, delete) also feeds the worst rate seen: the most
// writes within any one second (a sliding window), for the benchmarks' write ceiling.
const recentWrites = [];
function countWrite() {
  stats.writes++;
  const now = performance.now();
  recentWrites.push(now);
  while (recentWrites.length && recentWrites[0] <= now - 1000) recentWrites.shift();
  stats.maxWritesPerSecond = Math.max(stats.maxWritesPerSecond, recentWrites.length);
}

function answerWrite(res, code, obj, warnings = []) {
  const send = () => {
    res.writeHead(code, { "content-type": "application/json", ...warningHeaders(warnings) });
    res.end(JSON.stringify(obj));
  };
  if (!holdWrites) return send();
  heldWrites.push(send);
  stats.held = heldWrites.length;
  setImmediate(settle);
}

function record(type, object) {
  const node = nodeOfSlice(object);
  const e = { rv, type, object: structuredClone(object), node };
  events.push(e);
  if (!eventsByNode.has(node)) eventsByNode.set(node, []);
  eventsByNode.get(node).push(e);
  while (events.length > kEventWindow) {
    const old = events.shift();
    eventsByNode.get(old.node).shift(); // the node's oldest too: both are in rv order
    compactedRv = old.rv;
  }
  setImmediate(settle);
  const line = JSON.stringify({ type, object }) + "\n";
  for (const set of [watchesByNode.get(node), watchesAnyNode]) {
    for (const w of set ?? []) {
      if (!w.silent && !w.res.writableEnded && matches(object, w.selector)) w.res.write(line);
    }
  }
}
function addWatch(w) {
  watches.add(w);
  const node = w.selector["spec.nodeName"];
  if (node === undefined) return watchesAnyNode.add(w);
  if (!watchesByNode.has(node)) watchesByNode.set(node, new Set());
  watchesByNode.get(node).add(w);
}
// The server ends a watch: out of the set as it ends, not at its "close", since an event or
// a bookmark in between would be written after the end (Node throws
// ERR_STREAM_WRITE_AFTER_END).
function endWatch(w) {
  deleteWatch(w);
  w.res.end();
}
function deleteWatch(w) {
  watches.delete(w);
  watchesAnyNode.delete(w);
  watchesByNode.get(w.selector["spec.nodeName"])?.delete(w);
}

// The server's write path for a slice: decoding drops fields the type does not declare,
// with a warning (fieldValidation's default, Warn: apiserver's handlers/create.go and
// update.go); on update rest.BeforeUpdate keeps the stored UID, timestamps and generation;
// strategy.go PrepareForCreate/PrepareForUpdate drops the disabled gates' fields; then
// validation, and the strategy's warnings. `old`: null on create. Returns [refusal or
// null, warnings].
function admitSlice(obj, old) {
  const warnings = [];
  for (const path of dropUnknown(obj, resourceV1("ResourceSlice"))) {
    stats.unknownFields[path] = (stats.unknownFields[path] ?? 0) + 1;
    warnings.push(`unknown field "${path.slice(1).replaceAll("/", ".")}"`);
  }
  if (old) beforeUpdateMeta(obj, old);
  for (const path of dropDisabledFields(gates, obj, old)) stats.dropped[path] = (stats.dropped[path] ?? 0) + 1;
  const bad = validateSlice(obj, old);
  if (!bad) warnings.push(...resourceSliceWarnings(obj));
  return [bad, warnings];
}

// A warning as the apiserver sends it: `Warning: 299 - "<text>"` (k8s.io/apiserver/pkg/
// warning, one header line per warning).
function warningHeaders(warnings) {
  return warnings.length ? { warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) } : {};
}

// Decoding's quantity parsing, the schema (unknown fields: already dropped by decoding),
// then kube-apiserver's validation at `release` (ValidateResourceSlice, or
// ValidateResourceSliceUpdate against the stored object, plus the generic registry's
// object-meta checks of rest.BeforeCreate/BeforeUpdate), then this plugin's own rule.
// Returns null, or {code, message, status | text}.
function validateSlice(obj, old) {
  const invalid = (message) => statusFailure(422, "Invalid", message);
  let errs;
  try {
    checkQuantities(obj); // decoding: a malformed quantity never reaches validation
    try {
      new ResourceSlice(obj).validate();
    } catch (e) {
      return invalid(e.message.split("\n")[0]);
    }
    const opts = { release, gates };
    if (old) {
      errs = [...validateCommonFields(obj, old), ...ValidateResourceSliceUpdate(obj, old, opts)];
    } else {
      errs = ValidateResourceSlice(obj, opts);
      if (errs.length === 0) errs = validateCommonFields(obj, null);
    }
  } catch (e) {
    if (e instanceof QuantityParseError) {
      const message = `ResourceSlice in version "v1" cannot be handled as a ResourceSlice: ${e.message}`;
      return statusFailure(400, "BadRequest", message);
    }
    if (e instanceof GoPanic) {
      return { code: 500, message: `apiserver panic (${e.message})`, text: "This request caused apiserver to panic. Look in the logs for details." };
    }
    throw e;
  }
  if (errs.length) {
    const st = invalidStatus("ResourceSlice", "resource.k8s.io", obj.metadata?.name ?? "", errs);
    return { code: 422, message: st.message, status: st };
  }
  if (!obj.spec.nodeName) return invalid("spec.nodeName: the plugin publishes node-local slices only");
  return null;
}

// The claim strategies' admin-access part (kube_release.mjs) for a claim written through the
// admin API: the spec as created (resourceclaimStrategy PrepareForCreate and Validate) or,
// over a stored claim `old`, updated (PrepareForUpdate; the immutable spec is not checked
// again), then `status` written (resourceclaimStatusStrategy PrepareForUpdate and
// ValidateUpdate) over what that left. `claim` is changed in place. Returns a refusal as the
// generic registry answers a strategy's field errors (422 Invalid), or null.
function admitClaimSpec(claim, old) {
  const dropped = old ? claimPrepareForUpdate(gates, claim, old) : claimPrepareForCreate(gates, claim);
  noteClaimDrops(dropped);
  return claimRefusal(claim, old ? [] : claimValidateAdmin(claim, getNamespace));
}
function admitClaimStatus(claim, status) {
  const before = structuredClone(claim);
  if (status === undefined) {
    delete claim.status;
    return null;
  }
  claim.status = status;
  noteClaimDrops(claimStatusPrepareForUpdate(gates, claim, before));
  // The status strategy's DRAResourceClaimDeviceStatus part (claim_status_validation.mjs):
  // status.devices goes with the gate off unless the stored claim has some, and entries of
  // devices no longer allocated go.
  noteClaimDrops([...dropDisabledDRAResourceClaimDeviceStatusFields(gates, claim, before)]);
  noteClaimDrops(dropDeallocatedStatusDevices(gates, claim, before));
  return claimRefusal(claim, claimStatusValidateAdmin(claim, before, getNamespace));
}
function noteClaimDrops(paths) {
  for (const p of paths) stats.dropped[`resourceclaims ${p}`] = (stats.dropped[`resourceclaims ${p}`] ?? 0) + 1;
}
function claimRefusal(claim, errs) {
  if (!errs.length) return null;
  const st = invalidStatus("ResourceClaim", "resource.k8s.io", claim.metadata?.name ?? "", errs);
  return { code: 422, message: st.message, status: st };
}

function stamp(obj, existing) {
  rv++;
  obj.metadata.resourceVersion = String(rv);
  obj.metadata.uid = existing?.metadata.uid ?? crypto.randomUUID();
  obj.metadata.creationTimestamp = existing?.metadata.creationTimestamp ?? new Date().toISOString();
  obj.metadata.generation = (existing?.metadata.generation ?? 0) + 1;
}

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString()));
  });
}

// A broken peer's answers (a proxy, a bug): `body` (raw text, with `code`, default 200),
// `bytes` (an answer of that many bytes of JSON-less filler), `endless` (200, then filler
// without a newline until the client hangs up).
function brokenAnswer(f, res) {
  if (f.endless) {
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    const chunk = "x".repeat(64 * 1024);
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) {}
      if (!res.destroyed) res.once("drain", pump);
    };
    res.on("close", () => res.removeAllListeners("drain"));
    return pump();
  }
  if (f.bytes) {
    res.writeHead(f.code ?? 200, { "content-type": "application/json", "content-length": f.bytes });
    const chunk = Buffer.alloc(Math.min(f.bytes, 1 << 20), "x");
    let left = f.bytes;
    const pump = () => {
      while (left > 0 && !res.destroyed) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return res.once("drain", pump);
      }
      res.end();
    };
    return pump();
  }
  res.writeHead(f.code ?? 200, { "content-type": "application/json" });
  res.end(f.body);
}

function injected(req, res) {
  const i = faults.findIndex((f) => (!f.method || f.method === req.method) && req.url.includes(f.match ?? ""));
  if (i < 0) return false;
  const f = faults[i];
  if (--f.count <= 0) faults.splice(i, 1);
  stats.faultsServed = (stats.faultsServed ?? 0) + 1;
  if (f.body !== undefined || f.bytes || f.endless) return brokenAnswer(f, res), true;
  const reasons = { 401: "Unauthorized", 403: "Forbidden", 409: "Conflict", 410: "Expired", 429: "TooManyRequests", 500: "InternalError" };
  // A 429 carries Retry-After as the real server's throttles send it (apiserver
  // pkg/server/filters/maxinflight.go tooManyRequests: "1"; priority-and-fairness.go: longer).
  if (f.code === 429) res.setHeader("retry-after", String(f.retryAfter ?? 1));
  const send = () => status(res, f.code, reasons[f.code] ?? "Unknown", `injected ${f.code}`);
  if (!f.hold) return send(), true;
  // {hold: true}: the failure is parked like a held write until /release, so a test can act
  // while the client's failed request is still in flight (a slow network's ordering).
  heldWrites.push(send);
  stats.held = heldWrites.length;
  setImmediate(settle);
  return true;
}

function watch(req, res, query) {
  const selector = selectorOf(query);
  const from = Number(query.get("resourceVersion") || 0);
  stats.watchesOpened++;
  stats.lastWatchFrom = from;
  res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
  // The real server flushes the headers of a watch at once (apiserver's watch handler
  // writes the status and flushes before any event).
  res.flushHeaders();
  if (shortWatches) return res.end(); // a server (or proxy) that ends every watch at once
  if (blackHole) {
    // Headers came through, then nothing: the peer vanished without a FIN or RST.
    const w = { res, selector, silent: true };
    addWatch(w);
    res.on("close", () => deleteWatch(w));
    return;
  }
  if (from && from < compactedRv) {
    res.end(JSON.stringify({ type: "ERROR", object: { kind: "Status", apiVersion: "v1", status: "Failure",
      message: `too old resource version: ${from} (${compactedRv})`, reason: "Expired", code: 410 } }) + "\n");
    return;
  }
  const node = selector["spec.nodeName"];
  for (const e of node === undefined ? events : eventsByNode.get(node) ?? []) {
    if (e.rv > from && matches(e.object, selector)) res.write(JSON.stringify({ type: e.type, object: e.object }) + "\n");
  }
  const w = { res, selector, bookmarks: query.get("allowWatchBookmarks") === "true" };
  addWatch(w);
  setImmediate(settle);
  const timeout = Number(query.get("timeoutSeconds") || 0);
  if (timeout) {
    w.endsAt = scaledNow() + timeout * 1000;
    armWatchEnd(w);
  }
  res.on("close", () => {
    deleteWatch(w);
    if (w.timer) clearTimeout(w.timer);
    setImmediate(settle);
  });
}

// The server's own timers (a watch's timeoutSeconds, the bookmark interval) run on a clock
// that /time-scale speeds up, so that fleet_bench measures ten minutes of a steady fleet in
// one; what a load meets (APF's budget, Retry-After, /series) stays in real seconds.
let timeScale = 1;
let scaledAt = 0; // the scaled clock at the last change of scale (ms) ...
let realAt = performance.now(); // ... and the real one
const scaledNow = () => scaledAt + (performance.now() - realAt) * timeScale;
function armWatchEnd(w) {
  if (w.timer) clearTimeout(w.timer);
  const left = (w.endsAt - scaledNow()) / timeScale;
  // setTimeout fires at once past 2^31-1 ms: a longer wait is taken in steps.
  w.timer = setTimeout(() => (scaledNow() < w.endsAt ? armWatchEnd(w) : endWatch(w)),
    Math.min(Math.max(0, left), 2 ** 31 - 1));
}

function bookmark() {
  for (const w of watches) {
    if (w.bookmarks && !w.silent && !w.res.writableEnded) {
      w.res.write(JSON.stringify({ type: "BOOKMARK", object: { kind: "ResourceSlice",
        apiVersion: "resource.k8s.io/v1", metadata: { resourceVersion: String(rv) } } }) + "\n");
    }
  }
}
let bookmarkTimer = bookmarkMs ? setInterval(bookmark, bookmarkMs).unref() : null;
function setTimeScale(scale) {
  scaledAt = scaledNow();
  realAt = performance.now();
  timeScale = scale;
  for (const w of watches) if (w.endsAt !== undefined) armWatchEnd(w);
  if (bookmarkTimer) {
    clearInterval(bookmarkTimer);
    bookmarkTimer = setInterval(bookmark, bookmarkMs / scale).unref();
  }
}

// API Priority and Fairness, as much of it as a fleet of one driver's clients meets (they
// all land in one priority level and flow: staging/src/k8s.io/apiserver/pkg/server/filters/
// priority-and-fairness.go): past the level's rate, a request is rejected 429 with
// Retry-After. A token bucket of `burst` refilled at `budget` a second stands for the seats.
const apf = { budget: 0, burst: 0, retryAfter: 1, listDelayMs: 0, tokens: 0, refilledAt: 0 };
const notBefore = new Map(); // client (user agent + reader/writer) -> ms its Retry-After ends
function apfAdmit(now) {
  if (!apf.budget) return true;
  apf.tokens = Math.min(apf.burst, apf.tokens + ((now - apf.refilledAt) * apf.budget) / 1000);
  apf.refilledAt = now;
  if (apf.tokens < 1) return false;
  apf.tokens -= 1;
  return true;
}
// Requests per second since the server started, by kind: what fleet_bench plots.
const t0 = performance.now();
const at = () => performance.now() - t0; // the clock of /series, /nodes and `at` answers (ms)
const series = [];
// Each second: every request that arrived, those refused (outage) and throttled (429),
// and the ones served by kind.
function secondOf(now) {
  const i = Math.floor((now - t0) / 1000);
  while (series.length <= i) series.push({ requests: 0, throttled: 0, refused: 0, list: 0, watch: 0, write: 0, probe: 0, get: 0 });
  return series[i];
}
function kindOf(req, url) {
  if (url.pathname === SLICES && req.method === "GET") {
    return url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1" ? "watch" : "list";
  }
  if (url.pathname.startsWith(SLICES) && req.method !== "GET") return url.searchParams.get("dryRun") ? "probe" : "write";
  if (CLAIM_STATUS.test(url.pathname) && req.method === "PATCH") return url.searchParams.get("dryRun") ? "probe" : "write";
  if (NODE_STATUS.test(url.pathname) && req.method === "PATCH") return url.searchParams.get("dryRun") ? "probe" : "write";
  const event = url.pathname.match(EVENTS);
  if (event && req.method === "POST") return url.searchParams.get("dryRun") ? "probe" : "write";
  if (event && req.method === "GET" && event[2] === undefined) return "list";
  return "get";
}

// RBAC (admin POST /rbac): null, or {rules, user, node, authorize}. While set, every API request
// is authorized as kube-apiserver's WithAuthorization filter does it, after authentication and
// API Priority and Fairness (its place in DefaultBuildHandlerChain), by RBAC over the rules of
// the ClusterRoles of the loaded manifest (rbac_authorizer.mjs), for the DRA driver's service
// account; the status strategy's granular authorization uses the same authorizer.
let rbac = null;
// The driver name the project's manifests give resourceNames (images/components/dra/rbac.yaml):
// /rbac's `driver` replaces it, as an operator with another --dra-driver-name would.
const MANIFEST_DRIVER = "rdma.k8s-rdma-shared-dp.io";

// The request's attributes for the authorizer (RequestInfoFactory.NewRequestInfo and the
// authenticated user); null without RBAC.
function requestAttributes(req) {
  if (!rbac) return null;
  return { ...newRequestInfo(req.method, new URL(req.url, "https://x")), user: rbac.user };
}

// WithAuthorization (with WithRequestInfo before it): true when the request may go on; else it
// is answered, 403 Forbidden with responsewriters.Forbidden's Status (counted in
// stats.forbidden: "<verb> <resource>[/<subresource>] <namespace>/<name>: <message>"), or 500
// when the request info cannot be built.
function authorized(req, res) {
  const attrs = requestAttributes(req);
  if (attrs.error) {
    const text = `Internal Server Error: ${goQuote(req.url)}: failed to create RequestInfo: ${attrs.error}`;
    res.writeHead(500, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" });
    res.end(text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;") + "\n");
    return false;
  }
  const { decision, reason } = rbac.authorize(attrs);
  if (decision === "Allow") return true;
  const st = forbiddenStatus(attrs, reason);
  const what = attrs.resourceRequest
    ? `${attrs.resource}${attrs.subresource ? `/${attrs.subresource}` : ""} ${attrs.namespace}/${attrs.name}` : attrs.path;
  stats.forbidden.push(`${attrs.verb} ${what}: ${st.message}`);
  res.writeHead(403, { "content-type": "application/json", "x-content-type-options": "nosniff" });
  res.end(JSON.stringify(st));
  return false;
}

async function api(req, res) {
  res.on("finish", settle);
  stats.requests++;
  const ua = req.headers["user-agent"] ?? "";
  stats.byUserAgent[ua] = (stats.byUserAgent[ua] ?? 0) + 1;
  if (req.headers.authorization !== `Bearer ${token}`) {
    stats.unauthorized++;
    return status(res, 401, "Unauthorized", "Unauthorized");
  }
  const now = performance.now();
  const kind = kindOf(req, new URL(req.url, "https://x"));
  const second = secondOf(now);
  second.requests++;
  // A client is the user agent's reader (lists and watches) or writer (everything else):
  // the publisher's two connections, each with its own schedule.
  const client = `${ua}|${kind === "list" || kind === "watch" ? "r" : "w"}`;
  if (notBefore.has(client)) {
    if (now < notBefore.get(client)) stats.earlyRetries++;
    notBefore.delete(client);
  }
  if (outage) {
    second.refused++;
    stats.refused++;
    return status(res, 503, "ServiceUnavailable", "the API server is overloaded (/outage)");
  }
  if (!apfAdmit(now)) {
    second.throttled++;
    stats.throttled++;
    notBefore.set(client, now + apf.retryAfter * 1000);
    res.setHeader("retry-after", String(apf.retryAfter));
    return status(res, 429, "TooManyRequests", "Too many requests, please try again later.");
  }
  second[kind]++;
  stats.served[kind]++;
  if (rbac && !authorized(req, res)) return;
  if (injected(req, res)) return;
  const url = new URL(req.url, "https://x");
  const q = url.searchParams;
  const p = url.pathname;
  let m;
  if (req.method === "GET" && (m = p.match(/^\/api\/v1\/nodes\/([^/]+)$/))) {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify(nodes.get(m[1]) ?? syntheticNode(m[1])));
  }
  if ((m = p.match(NODE_STATUS))) return nodeStatusApi(req, res, m[1], q);
  if (req.method === "GET" && (m = p.match(/^\/apis\/resource\.k8s\.io\/v1\/namespaces\/([^/]+)\/resourceclaims\/([^/]+)$/))) {
    stats.claimGets++;
    if (claimDelayMs) {
      // A slow API server: the answer comes after the delay; in-flight reads are counted.
      stats.claimGetsInFlight++;
      stats.maxClaimGetsInFlight = Math.max(stats.maxClaimGetsInFlight, stats.claimGetsInFlight);
      setImmediate(settle);
      await new Promise((r) => setTimeout(r, claimDelayMs));
      stats.claimGetsInFlight--;
    }
    const c = claims.get(`${m[1]}/${m[2]}`);
    if (!c) return status(res, 404, "NotFound", `resourceclaims.resource.k8s.io "${m[2]}" not found`);
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify(c));
  }
  if (p === SLICES && req.method === "GET") {
    if (q.get("watch") === "true" || q.get("watch") === "1") return watch(req, res, q);
    stats.lists++;
    if (apf.budget && apf.listDelayMs) {
      // A server near its limit answers LISTs late: the emptier the bucket, the later.
      await new Promise((r) => setTimeout(r, apf.listDelayMs * (1 - apf.tokens / apf.burst)));
    }
    const sel = selectorOf(q);
    const items = candidates(sel).filter((s) => matches(s, sel));
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({ kind: "ResourceSliceList", apiVersion: "resource.k8s.io/v1",
      metadata: { resourceVersion: String(rv) }, items }));
  }
  if (p === SLICES && req.method === "POST") {
    const obj = JSON.parse(await readBody(req));
    // rest.BeforeCreate names the object before validating it (names.SimpleNameGenerator).
    obj.metadata ??= {};
    if (!obj.metadata.name && obj.metadata.generateName) obj.metadata.name = generateName(obj.metadata.generateName);
    const [bad, warnings] = admitSlice(obj, null);
    if (bad) {
      stats.invalid.push(bad.message);
      return refuse(res, bad);
    }
    if (slices.has(obj.metadata.name)) return status(res, 409, "AlreadyExists", `"${obj.metadata.name}" already exists`);
    if (q.get("dryRun") === "All") {
      // Admission, strategy and validation ran; nothing is stored and no event is sent
      // (apiserver's dry-run: staging/src/k8s.io/apiserver/pkg/registry/generic/registry).
      stats.dryRuns = (stats.dryRuns ?? 0) + 1;
      obj.metadata.uid = crypto.randomUUID();
      obj.metadata.creationTimestamp = new Date().toISOString();
      res.writeHead(201, { "content-type": "application/json", ...warningHeaders(warnings) });
      return res.end(JSON.stringify(obj));
    }
    stamp(obj);
    putSlice(obj);
    countWrite();
    stats.creates++;
    record("ADDED", obj);
    return answerWrite(res, 201, obj, warnings);
  }
  if ((m = p.match(EVENTS))) return eventsApi(req, res, m[1], m[2], q);
  if ((m = p.match(CLAIM_STATUS))) return claimStatusApi(req, res, m[1], m[2], q);
  if ((m = p.match(/^\/apis\/resource\.k8s\.io\/v1\/resourceslices\/([^/]+)$/))) {
    const existing = slices.get(m[1]);
    if (req.method === "PUT") {
      const obj = JSON.parse(await readBody(req));
      if (!existing) return status(res, 404, "NotFound", `resourceslices "${m[1]}" not found`);
      // The registry's Update compares resource versions before validating; an update
      // without one is unconditional (the strategy's AllowUnconditionalUpdate).
      obj.metadata ??= {};
      if (!obj.metadata.resourceVersion) obj.metadata.resourceVersion = existing.metadata.resourceVersion;
      if (obj.metadata.resourceVersion !== existing.metadata.resourceVersion) {
        stats.conflicts++;
        return status(res, 409, "Conflict", `Operation cannot be fulfilled on resourceslices "${m[1]}": the object has been modified; please apply your changes to the latest version and try again`);
      }
      const [bad, warnings] = admitSlice(obj, existing);
      if (bad) {
        stats.invalid.push(bad.message);
        return refuse(res, bad);
      }
      stamp(obj, existing);
      putSlice(obj);
      countWrite();
      stats.updates++;
      record("MODIFIED", obj);
      return answerWrite(res, 200, obj, warnings);
    }
    if (req.method === "DELETE") {
      if (!existing) return status(res, 404, "NotFound", `resourceslices "${m[1]}" not found`);
      removeSlice(existing);
      noteWrite(nodeOfSlice(existing));
      rv++;
      countWrite();
      stats.deletes++;
      record("DELETED", existing);
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(existing));
    }
  }
  status(res, 404, "NotFound", `fake apiserver: no route for ${req.method} ${p}`);
}

// --- resourceclaims/status: what a DRA driver writes (KEP-4817) ----------------------------
//
// GET returns the claim. PATCH with Content-Type application/apply-patch+yaml is server-side
// apply of the body (JSON, which is YAML) by ?fieldManager=<name> (&force=true, &dryRun=All):
// its status.devices entries are merged into the stored claim as server-side apply merges a
// list with map keys (driver, pool, device, shareID: +listType=map in
// staging/src/k8s.io/api/resource/v1/types.go), then the claim goes through the status
// strategy and ValidateResourceClaimStatusUpdate (claim_status_validation.mjs) as a status
// update: 200 with the stored claim, 422 Invalid, 409 Conflict, 404 NotFound.
//
// Server-side apply, as approximated here (structured-merge-diff is not ported):
//  - Ownership is kept per status.devices entry (the manager that last applied it and the
//    entry's top-level fields it applied), not per field path; managedFields are not kept in
//    the object. GET /claim-status-owners (admin) shows it.
//  - An entry the manager applies is merged into the stored one: the fields it applies are
//    set, the fields it applied before and no longer does are removed, fields of others are
//    kept. An entry it applied before and no longer applies is removed whole (structured-
//    merge-diff removes only the manager's fields and keeps the entry while another manager
//    owns some). New entries are appended in the applied order; stored ones keep their place.
//  - Without force=true, applying a different value to a field of an entry another manager
//    owns (or that was written by the admin API: manager "fake-admin", an Update) is a 409
//    Conflict ("Apply failed with N conflict(s): ...", per field as structured-merge-diff
//    reports it, the path in its key notation); with force=true the entry changes owner.
//  - Only status.devices may be applied; another status field in the body is refused 400
//    (the fake does not model applying status.allocation or status.reservedFor). metadata
//    other than name, namespace, resourceVersion and uid is ignored (the status strategy
//    resets it), spec is ignored (reset field of the status subresource). A uid is kept as
//    the object's and must be the stored one (rest.BeforeUpdate, validateCommonFields): a
//    different one is 422 `metadata.uid: Invalid value: "<uid>": field is immutable`, so an
//    apply that names the uid it read never writes into a claim re-created under its name.
//  - A field the type does not declare, or a value of the wrong type, is a 500 (structured-
//    merge-diff's "failed to create typed patch object", not a Status error; the text is
//    approximated).
//  - A YAML body that is not JSON is refused 400 (the fake parses JSON only), as are the other
//    patch types (json-patch, merge-patch, strategic-merge-patch: 415, not modelled).
//  - A no-op apply (nothing changes, the same owners) stores nothing: resourceVersion stays,
//    stats.claimStatusNoops counts it; a write bumps resourceVersion (stats.claimStatusWrites).
//  - Authorization: without /rbac none beyond the bearer token. With /rbac the request itself
//    needs `patch` on resourceclaims/status (403 otherwise, before any of this), and from 1.36,
//    with DRAResourceClaimGranularStatusAuthorization on, the status strategy's granular check
//    (claim_status_authz.mjs) wants, for each driver whose status.devices entries the apply
//    adds, changes or removes, `associated-node:patch` (the token's node is the one node the
//    claim's allocation is confined to) or `arbitrary-node:patch` on resourceclaims/driver
//    named by the driver, else 422 Invalid, `ResourceClaim.resource.k8s.io "<name>" is
//    invalid: status.devices: Forbidden: changing status.devices requires
//    resource="resourceclaims/driver", verb="[associated-node:patch arbitrary-node:patch]"
//    permission: resourceclaims.resource.k8s.io "<driver>" is forbidden: User
//    "system:serviceaccount:kube-system:rdma-shared-dp" cannot associated-node:patch resource
//    "resourceclaims/driver" in API group "resource.k8s.io" in the namespace "<ns>"` (verb
//    list [arbitrary-node:patch] when the node is not the claim's); dry-run is checked alike.
async function claimStatusApi(req, res, ns, name, q) {
  const key = `${ns}/${name}`;
  const notFound = () => refuse(res, statusFailure(404, "NotFound", `resourceclaims.resource.k8s.io "${name}" not found`,
    { name, group: "resource.k8s.io", kind: "resourceclaims" }));
  const refused = (bad) => {
    stats.invalid.push(bad.message);
    return refuse(res, bad);
  };
  if (req.method === "GET") {
    const c = claims.get(key);
    if (!c) return notFound();
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify(c));
  }
  if (req.method !== "PATCH") return status(res, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");

  const type = String(req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  const body = await readBody(req);
  if (type !== "application/apply-patch+yaml") {
    const known = ["application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"];
    const message = known.includes(type)
      ? `fake apiserver: only server-side apply (application/apply-patch+yaml) is modelled for resourceclaims/status, not ${type}`
      : "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, " +
        "application/merge-patch+json, application/apply-patch+yaml";
    return refused(statusFailure(415, "UnsupportedMediaType", message));
  }
  stats.claimStatusApplies++;

  // PatchOptions (ValidatePatchOptions): an apply needs a field manager; dryRun is All or unset.
  const manager = q.get("fieldManager") ?? "";
  const optErrs = manager === "" ? [new FieldError("FieldValueRequired", "fieldManager", "", "is required for apply patch")] : [];
  optErrs.push(...validateFieldManager(manager, "fieldManager"));
  const dryRun = q.getAll("dryRun");
  for (const [i, v] of dryRun.entries()) {
    if (v !== "All") optErrs.push(new FieldError("FieldValueNotSupported", `dryRun[${i}]`, v, 'supported values: "All"'));
  }
  if (optErrs.length) {
    const st = invalidStatus("PatchOptions", "meta.k8s.io", "", optErrs);
    return refused({ code: 422, message: st.message, status: st });
  }
  const force = q.get("force") === "true";

  let applied;
  try {
    applied = JSON.parse(body);
  } catch (e) {
    return refused(statusFailure(400, "BadRequest", `fake apiserver: the apply body must be JSON (valid YAML): ${e.message}`));
  }
  if (!applied || typeof applied !== "object" || Array.isArray(applied)) {
    return refused(statusFailure(400, "BadRequest", "fake apiserver: the apply body must be a JSON object"));
  }
  if (applied.apiVersion !== "resource.k8s.io/v1" || applied.kind !== "ResourceClaim") {
    return refused(statusFailure(400, "BadRequest", `Incorrect version specified in apply patch. Specified patch version: ${applied.apiVersion ?? ""}, ` +
      `Kind=${applied.kind ?? ""}, expected: resource.k8s.io/v1, Kind=ResourceClaim`));
  }
  const stored = claims.get(key);
  if (!stored) return notFound();
  const meta = applied.metadata ?? {};
  if (meta.name !== undefined && meta.name !== name) {
    return refused(statusFailure(400, "BadRequest", `the name of the object (${meta.name}) does not match the name on the URL (${name})`));
  }
  if (meta.namespace !== undefined && meta.namespace !== "" && meta.namespace !== ns) {
    return refused(statusFailure(400, "BadRequest", `the namespace of the object (${meta.namespace}) does not match the namespace on the URL (${ns})`));
  }
  const statusKeys = Object.keys(applied.status ?? {}).filter((k) => k !== "devices");
  if (statusKeys.length) {
    return refused(statusFailure(400, "BadRequest", `fake apiserver: server-side apply of status.${statusKeys[0]} is not modelled (only status.devices)`));
  }
  // Decoding into the typed object: a field the type does not declare or a value of the wrong
  // type (the RawExtension `data` holds anything).
  const typedError = (detail) => refused(statusFailure(500, "",
    `failed to create typed patch object (resource.k8s.io/v1, Kind=ResourceClaim) ${ns}/${name}: ${detail}`));
  const devicesIn = applied.status?.devices ?? [];
  if (!Array.isArray(devicesIn)) return typedError(".status.devices: expected list, got " + typeof devicesIn);
  try {
    const shape = structuredClone(applied);
    for (const d of shape.status?.devices ?? []) if (d && typeof d === "object") delete d.data;
    checkStrict(shape, resourceV1("ResourceClaim"));
  } catch (e) {
    return typedError(`${e.message.split(" ")[0].replace(/:$/, "").replaceAll("/", ".")}: field not declared in schema`);
  }
  const shapeError = devicesShapeError(devicesIn);
  if (shapeError) return typedError(shapeError);
  if (meta.uid !== undefined && meta.uid !== null && typeof meta.uid !== "string") {
    return typedError(`.metadata.uid: expected string, got ${JSON.stringify(meta.uid)}`);
  }
  if (meta.resourceVersion && meta.resourceVersion !== stored.metadata.resourceVersion) {
    stats.conflicts++;
    return refuse(res, statusFailure(409, "Conflict", `Operation cannot be fulfilled on resourceclaims.resource.k8s.io "${name}": ` +
      "the object has been modified; please apply your changes to the latest version and try again",
      { name, group: "resource.k8s.io", kind: "resourceclaims" }));
  }

  const owners = claimStatusOwners.get(key) ?? new Map();
  const merge = applyStatusDevices(list(stored.status?.devices), devicesIn, manager, force, owners);
  if (merge.conflicts.length) {
    stats.conflicts++;
    const n = merge.conflicts.length;
    const who = (m) => (m === "fake-admin" ? '"fake-admin" using resource.k8s.io/v1' : JSON.stringify(m));
    let message;
    if (n === 1) {
      message = `Apply failed with 1 conflict: conflict with ${who(merge.conflicts[0].manager)}: ${merge.conflicts[0].path}`;
    } else {
      const byManager = new Map();
      for (const c of merge.conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.path]);
      const lines = [...byManager.keys()].sort().flatMap((m) => [`conflicts with ${who(m)}:`, ...byManager.get(m).map((p) => `- ${p}`)]);
      message = `Apply failed with ${n} conflicts: ${lines.join("\n")}`;
    }
    return refuse(res, statusFailure(409, "Conflict", message, { causes: merge.conflicts.map((c) =>
      ({ reason: "FieldManagerConflict", message: `conflict with ${who(c.manager)}`, field: c.path })) }));
  }

  // The status update: the stored claim with the merged entries, through the status strategy
  // (PrepareForUpdate: spec and metadata as stored, the disabled gates' fields dropped) and
  // its ValidateUpdate.
  const claim = structuredClone(stored);
  claim.status ??= {};
  if (merge.devices.length) claim.status.devices = merge.devices;
  else delete claim.status.devices;
  noteClaimDrops(claimStatusStrategyPrepare(gates, claim, stored));
  if (stored.status === undefined && Object.keys(claim.status ?? {}).length === 0) delete claim.status;
  // rest.BeforeUpdate: the applied metadata.uid is the object's (server-side apply merged it;
  // the status strategy's ResetObjectMetaForStatus does not reset it); none keeps the stored
  // one. Then validateCommonFields (ValidateObjectMetaAccessor and ...Update: a different uid is
  // "metadata.uid: Invalid value: ...: field is immutable") before the strategy's ValidateUpdate
  // (whose ValidateObjectMetaUpdate reports it again: the message lists it once, the causes
  // twice, as errors.NewInvalid does).
  if (meta.uid) claim.metadata.uid = meta.uid;
  const authz = rbac ? { authorize: rbac.authorize, request: requestAttributes(req) } : undefined;
  const errs = [...validateCommonFields(claim, stored, { namespaced: true }),
    ...claimStatusValidateUpdate(claim, stored, { release, gates, getNamespace, authz })];
  if (errs.length) {
    const st = invalidStatus("ResourceClaim", "resource.k8s.io", name, errs);
    return refused({ code: 422, message: st.message, status: st });
  }
  // What the strategy dropped is owned by no one any more.
  const kept = new Set(list(claim.status?.devices).map(deviceEntryKey));
  for (const k of [...merge.owners.keys()]) if (!kept.has(k)) merge.owners.delete(k);

  if (dryRun.length) {
    stats.dryRuns = (stats.dryRuns ?? 0) + 1;
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify(claim));
  }
  const ownersText = (m) => goJSON(Object.fromEntries([...m].map(([k, v]) => [k, v])));
  if (goJSON(claim) === goJSON(stored) && ownersText(merge.owners) === ownersText(owners)) {
    stats.claimStatusNoops++;
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify(stored));
  }
  rv++; // another kind of object written: the revision moves on, no slice watch hears of it
  claim.metadata.resourceVersion = String(rv);
  claims.set(key, claim);
  claimStatusOwners.set(key, merge.owners);
  stats.claimStatusWrites++;
  return answerWrite(res, 200, claim);
}

const list = (v) => (Array.isArray(v) ? v : []);
// The applied entries' types, as decoding them into resource.k8s.io/v1 AllocatedDeviceStatus
// checks them (not OpenAPI's `required`: the typed decoding fills what is absent; a
// condition's `message`, say, may be left out). Returns the first mismatch, or null.
function devicesShapeError(devices) {
  const str = (v) => v === undefined || v === null || typeof v === "string";
  const at = (i, f) => `.status.devices[${i}]${f ? `.${f}` : ""}`;
  for (const [i, d] of devices.entries()) {
    if (!d || typeof d !== "object" || Array.isArray(d)) return `${at(i)}: expected map, got ${JSON.stringify(d)}`;
    for (const f of ["driver", "pool", "device", "shareID"]) if (!str(d[f])) return `${at(i, f)}: expected string, got ${JSON.stringify(d[f])}`;
    if (d.conditions !== undefined && d.conditions !== null) {
      if (!Array.isArray(d.conditions)) return `${at(i, "conditions")}: expected list, got ${JSON.stringify(d.conditions)}`;
      for (const [j, c] of d.conditions.entries()) {
        const cp = `conditions[${j}]`;
        if (!c || typeof c !== "object" || Array.isArray(c)) return `${at(i, cp)}: expected map, got ${JSON.stringify(c)}`;
        for (const f of ["type", "status", "reason", "message"]) if (!str(c[f])) return `${at(i, `${cp}.${f}`)}: expected string, got ${JSON.stringify(c[f])}`;
        if (c.observedGeneration !== undefined && c.observedGeneration !== null && !Number.isInteger(c.observedGeneration)) {
          return `${at(i, `${cp}.observedGeneration`)}: expected numeric (int), got ${JSON.stringify(c.observedGeneration)}`;
        }
        const t = c.lastTransitionTime;
        const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
        if (t !== undefined && t !== null && (typeof t !== "string" || !rfc3339.test(t) || Number.isNaN(Date.parse(t)))) {
          return `${at(i, `${cp}.lastTransitionTime`)}: parsing time ${JSON.stringify(t)} as RFC 3339 failed`;
        }
      }
    }
    const nd = d.networkData;
    if (nd !== undefined && nd !== null) {
      if (typeof nd !== "object" || Array.isArray(nd)) return `${at(i, "networkData")}: expected map, got ${JSON.stringify(nd)}`;
      for (const f of ["interfaceName", "hardwareAddress"]) if (!str(nd[f])) return `${at(i, `networkData.${f}`)}: expected string, got ${JSON.stringify(nd[f])}`;
      if (nd.ips !== undefined && nd.ips !== null) {
        if (!Array.isArray(nd.ips)) return `${at(i, "networkData.ips")}: expected list, got ${JSON.stringify(nd.ips)}`;
        for (const [j, ip] of nd.ips.entries()) if (typeof ip !== "string") return `${at(i, `networkData.ips[${j}]`)}: expected string, got ${JSON.stringify(ip)}`;
      }
    }
  }
  return null;
}
// A status.devices entry's map key (driver, pool, device, shareID; an omitted shareID is not "").
const deviceEntryKey = (d) => JSON.stringify([d?.driver ?? null, d?.pool ?? null, d?.device ?? null, d?.shareID ?? null]);
// structured-merge-diff's path of an entry: .status.devices[device="..",driver="..",pool=".."].
function entryPath(d) {
  const keys = ["device", "driver", "pool", "shareID"].filter((f) => d?.[f] !== undefined).map((f) => `${f}=${JSON.stringify(d[f])}`);
  return `.status.devices[${keys.join(",")}]`;
}
// Server-side apply of `applied` (status.devices entries) by `manager` over the stored
// entries `live` with their owners (see claimStatusApi). Returns {devices, owners, conflicts}.
function applyStatusDevices(live, applied, manager, force, owners) {
  const appliedByKey = new Map();
  for (const a of applied) if (!appliedByKey.has(deviceEntryKey(a))) appliedByKey.set(deviceEntryKey(a), a);
  const next = new Map(owners);
  const conflicts = [];
  const devices = [];
  const placed = new Set();
  for (const d of live) {
    const k = deviceEntryKey(d);
    const rec = owners.get(k);
    const a = appliedByKey.get(k);
    if (!a) {
      if (rec?.manager === manager) next.delete(k); // applied before, not any more: it goes
      else devices.push(d);
      continue;
    }
    placed.add(k);
    const fields = Object.keys(a);
    let merged;
    if (rec?.manager === manager) {
      merged = Object.fromEntries(Object.entries(d).filter(([f]) => !rec.fields.includes(f) || fields.includes(f)));
      Object.assign(merged, structuredClone(a));
    } else {
      const other = rec?.manager ?? "fake-admin";
      for (const f of fields) {
        if (f in d && goJSON(d[f]) !== goJSON(a[f])) conflicts.push({ manager: other, path: `${entryPath(d)}.${f}` });
      }
      merged = { ...d, ...structuredClone(a) };
    }
    next.set(k, { manager, fields });
    devices.push(merged);
  }
  // New entries (a repeated key is kept, for validation to refuse as a duplicate).
  const seen = new Set(placed);
  for (const a of applied) {
    const k = deviceEntryKey(a);
    if (placed.has(k) && appliedByKey.get(k) === a) continue;
    if (!seen.has(k)) next.set(k, { manager, fields: Object.keys(a) });
    seen.add(k);
    devices.push(structuredClone(a));
  }
  return { devices, owners: next, conflicts: force ? [] : conflicts };
}

// --- nodes/status: what an operator's `kubectl patch node --subresource=status --type=json` meets --
//
// GET returns the node (stored, or the synthetic one). PATCH with Content-Type
// application/json-patch+json is kube-apiserver's jsonPatcher (json_patch.mjs) over the node as
// the API writes it, then the decoding of the patched JSON, the generic registry's update and
// the node status strategy (node_status.mjs), in the real server's order:
//  1. PatchOptions (ValidatePatchOptions): `force` is forbidden on a non-apply patch,
//     fieldManager as for apply, dryRun only "All", fieldValidation "", Ignore, Warn or Strict:
//     422 `PatchOptions.meta.k8s.io "" is invalid: ...`.
//  2. The body: 400 BadRequest "error decoding patch: <Go's JSON error>" (fieldValidation Warn
//     or Strict; with Ignore the decoder's error alone), 413 past 10000 operations.
//  3. Patch.Apply: any failure is 422 Invalid "the server rejected our request due to an error
//     in our request", details {} (NewGenericServerResponse keeps no cause): a failing `test`,
//     a `remove` of a missing path, a path through a missing member, an unknown op alike. A
//     failing `test` (a guard doing its job) is counted in stats.nodeStatusTestFailures; any
//     other failure is recorded in stats.invalid as "<message> (nodes/<name>/status json patch:
//     <the library's error>)".
//  4. Decoding the patched JSON into a v1.Node: a quantity that does not parse, or a status,
//     capacity or allocatable of the wrong JSON type, is 422 ` "" is invalid: patch: Invalid
//     value: "<the patched JSON>": <error>` (the JSON as json-patch v4 marshals it: the objects
//     the patch walked into with sorted keys); unknown fields are dropped with a Warning header
//     `unknown field "status.x"` (Warn), refused 422 "... strict decoding error: unknown field
//     ..." (Strict) or dropped silently (Ignore). SetDefaults_NodeStatus: an absent allocatable
//     is the capacity.
//  5. The object's name must be the URL's (400 "the name of the object (x) does not match the
//     name on the URL (n)"; an emptied name: "... (n based on URL) was undeterminable: name must
//     be provided"); a namespace is cleared (cluster-scoped).
//  6. A resourceVersion the patch set that is not the stored one: 409 Conflict `Operation cannot
//     be fulfilled on nodes "<name>": the object has been modified; please apply your changes to
//     the latest version and try again` (stats.conflicts); none: unconditional.
//  7. rest.BeforeUpdate and the status strategy: spec as stored, status.config dropped unless
//     stored, uid/creationTimestamp/generation as stored, then validateCommonFields and
//     ValidateNodeUpdate: 422 `Node "<name>" is invalid: status.capacity.<res>: Invalid value:
//     "-1": must be greater than or equal to 0` (an extended resource's fraction: "...: Invalid
//     value: resource.Quantity{...}: must be an integer", Go's %#v of the Quantity).
//  Refusals of 1, 2, 3 (but a test), 4, 5 and 7 are recorded in stats.invalid. An accepted patch
//  stores the node (quantities canonical, an emptied list gone, an emptied allocatable read back
//  as the capacity, as the protobuf storage and its defaulting give it), bumps its
//  resourceVersion and answers 200 with it; one that changes nothing keeps the resourceVersion;
//  both count in stats.nodeStatusPatches (dryRun=All: answered, not stored, stats.dryRuns). A node
//  never posted is created, with an empty status, by its first PATCH. Other patch types: 415
//  (merge, strategic-merge and apply patches are kube-apiserver's but not modelled here; an
//  unknown type gets the real server's "accepted media types include" message). PUT: 405 (not
//  modelled). With /rbac the request needs `patch` on nodes/status (403 before any of this).
async function nodeStatusApi(req, res, name, q) {
  const refused = (bad) => {
    stats.invalid.push(bad.message);
    return refuse(res, bad);
  };
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify(nodes.get(name) ?? syntheticNode(name)));
  }
  if (req.method !== "PATCH") return status(res, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");

  const type = String(req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  const body = await readBody(req);
  if (type !== "application/json-patch+json") {
    const known = ["application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"];
    const message = known.includes(type)
      ? `fake apiserver: only JSON patch (application/json-patch+json) is modelled for nodes/status, not ${type}`
      : "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, " +
        "application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml";
    return refused(statusFailure(415, "UnsupportedMediaType", message));
  }

  // 1. PatchOptions
  const validation = q.get("fieldValidation") ?? "";
  const optErrs = q.has("force") ? [forbidden("force", "may not be specified for non-apply patch")] : [];
  optErrs.push(...validateFieldManager(q.get("fieldManager") ?? "", "fieldManager"));
  const dryRun = q.getAll("dryRun");
  for (const [i, v] of dryRun.entries()) {
    if (v !== "All") optErrs.push(new FieldError("FieldValueNotSupported", `dryRun[${i}]`, v, 'supported values: "All"'));
  }
  const validations = ["", "Ignore", "Strict", "Warn"];
  if (!validations.includes(validation)) optErrs.push(notSupported("fieldValidation", validation, validations));
  if (optErrs.length) {
    const st = invalidStatus("PatchOptions", "meta.k8s.io", "", optErrs);
    return refused({ code: 422, message: st.message, status: st });
  }

  // 2. The body
  let ops;
  try {
    ops = decodePatch(body, validation);
  } catch (e) {
    if (!(e instanceof JSONPatchDecodeError)) throw e;
    return refused(statusFailure(e.code, e.reason, e.message));
  }

  // 3. Patch.Apply to the stored node (one never stored: created with an empty status, kept
  // only if the patch is accepted)
  const fresh = !nodes.has(name);
  if (fresh) rv++;
  const stored = nodes.get(name) ?? newNode(name);
  let patched;
  try {
    patched = applyPatch(stored, ops);
  } catch (e) {
    if (!(e instanceof JSONPatchError)) throw e;
    const st = applyFailedStatus();
    if (e.op === "test") {
      stats.nodeStatusTestFailures++;
    } else {
      stats.invalid.push(`${st.message} (nodes/${name}/status json patch: ${e.message})`);
    }
    return refuse(res, { code: 422, status: st });
  }

  // 4. Decoding into a v1.Node, defaulting
  const node = patched.doc;
  if (node === null || typeof node !== "object" || Array.isArray(node)) {
    return refused(patchDecodeRefusal(patched.text, `fake apiserver: a patched Node that is not a JSON object is not modelled`));
  }
  if ((node.kind !== undefined && node.kind !== "Node") || (node.apiVersion !== undefined && node.apiVersion !== "v1")) {
    return refused(patchDecodeRefusal(patched.text, "fake apiserver: a patch that changes kind or apiVersion is not modelled"));
  }
  const decoded = decodeNodeStatus(node);
  if (decoded.error) return refused(patchDecodeRefusal(patched.text, decoded.error));
  const unknownPaths = dropUnknown(node, NODE_TYPE);
  const unknown = unknownPaths.map((p) => `unknown field "${p.slice(1).replaceAll("/", ".")}"`);
  if (unknown.length && validation === "Strict") return refused(patchDecodeRefusal(patched.text, `strict decoding error: ${unknown.join(", ")}`));
  const warnings = validation === "Ignore" ? [] : unknown;
  for (const p of unknownPaths) stats.unknownFields[`nodes ${p}`] = (stats.unknownFields[`nodes ${p}`] ?? 0) + 1;
  const { quantities } = decoded;
  node.metadata ??= {};
  node.status ??= {};
  if (node.status.allocatable === undefined && node.status.capacity !== undefined) {
    node.status.allocatable = structuredClone(node.status.capacity); // SetDefaults_NodeStatus
    quantities.allocatable = { ...quantities.capacity };
  }

  // 5. The name, the namespace
  const objName = node.metadata.name ?? "";
  if (objName === "") return refused(statusFailure(400, "BadRequest", `the name of the object (${name} based on URL) was undeterminable: name must be provided`));
  if (objName !== name) return refused(statusFailure(400, "BadRequest", `the name of the object (${objName}) does not match the name on the URL (${name})`));
  delete node.metadata.namespace;

  // 6. The resourceVersion precondition
  const storedRv = stored.metadata.resourceVersion;
  const newRv = node.metadata.resourceVersion ?? "";
  if (newRv !== "" && newRv !== "0" && newRv !== storedRv) {
    stats.conflicts++;
    return refuse(res, statusFailure(409, "Conflict", `Operation cannot be fulfilled on nodes ${goQuote(name)}: the object has been modified; ` +
      "please apply your changes to the latest version and try again", { name, kind: "nodes" }));
  }
  node.metadata.resourceVersion = storedRv;

  // 7. rest.BeforeUpdate with the node status strategy
  nodeStatusPrepareForUpdate(node, stored);
  const errs = nodeStatusValidateUpdate(node, stored, quantities);
  if (errs.length) return refused(nodeInvalidRefusal(name, errs));

  canonicalLists(node, quantities);
  const next = encodeNode(normalizeStored(node));
  if (dryRun.length) {
    stats.dryRuns = (stats.dryRuns ?? 0) + 1;
    res.writeHead(200, { "content-type": "application/json", ...warningHeaders(warnings) });
    return res.end(JSON.stringify(next));
  }
  stats.nodeStatusPatches++;
  if (goJSON(next) === goJSON(stored)) { // nothing changed: nothing written (but a node created)
    if (fresh) nodes.set(name, stored);
    return answerWrite(res, 200, stored, warnings);
  }
  rv++; // another kind of object written: the revision moves on, no slice watch hears of it
  next.metadata.resourceVersion = String(rv);
  nodes.set(name, next);
  return answerWrite(res, 200, next, warnings);
}

// events.k8s.io/v1 Events in namespace `ns` (undefined: across namespaces), one by `name`.
async function eventsApi(req, res, ns, name, q) {
  const send = (code, obj) => {
    res.writeHead(code, { "content-type": "application/json" });
    res.end(JSON.stringify(obj));
  };
  if (req.method === "POST" && ns !== undefined && name === undefined) return createEvent(req, res, ns, q);
  if (req.method === "GET" && ns !== undefined && name !== undefined) {
    const e = eventObjects.get(`${ns}/${name}`);
    return e ? send(200, e) : send(404, eventNotFoundStatus(name));
  }
  if (req.method === "GET" && name === undefined) {
    let terms;
    try {
      terms = parseEventFieldSelector(q.get("fieldSelector"));
    } catch (e) {
      if (!(e instanceof FieldSelectorError)) throw e;
      return send(400, eventBadRequestStatus(e.message));
    }
    // etcd's key order: namespace, then name
    const items = [...eventObjects.keys()].sort().map((k) => eventObjects.get(k))
      .filter((e) => (ns === undefined || e.metadata.namespace === ns) && eventMatchesFields(e, terms));
    return send(200, { kind: "EventList", apiVersion: "events.k8s.io/v1", metadata: { resourceVersion: String(rv) }, items });
  }
  status(res, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
}

// The server's create path for an Event: decoding (unknown fields dropped with a warning, Go's
// type and time-format errors a 400), the generic store's name generation, rest.BeforeCreate
// (namespace, the event strategy's validation, the object-meta checks: event_validation.mjs),
// then storage (a resourceVersion on create is etcd3's error, a taken name 409). A refusal is
// answered as the real server answers it and recorded in stats.invalid, as slices' are.
async function createEvent(req, res, ns, q) {
  const refused = (bad) => {
    stats.invalid.push(bad.message);
    return refuse(res, bad);
  };
  let obj;
  try {
    obj = JSON.parse(await readBody(req));
  } catch (e) {
    const message = `Event in version "v1" cannot be handled as a Event: ${e.message}`;
    return refused({ code: 400, message, status: eventBadRequestStatus(message) });
  }
  obj ??= {}; // a body of JSON null decodes to the zero Event
  const warnings = [];
  if (typeof obj === "object" && !Array.isArray(obj)) {
    for (const p of dropUnknown(obj, EVENT_TYPE)) {
      stats.unknownFields[p] = (stats.unknownFields[p] ?? 0) + 1;
      warnings.push(`unknown field "${p.slice(1).replaceAll("/", ".")}"`);
    }
  }
  let bad = checkEventDecodes(obj);
  if (bad) return refused(bad);
  obj.metadata ??= {};
  // Store.Create names the object before rest.BeforeCreate, a generated name that is taken is
  // generated again (RetryGenerateName).
  if (!obj.metadata.name && obj.metadata.generateName) {
    for (let i = 0; i < 8 && (!obj.metadata.name || eventObjects.has(`${ns}/${obj.metadata.name}`)); i++) {
      obj.metadata.name = generateName(obj.metadata.generateName);
    }
  }
  bad = beforeCreateEvent(obj, ns, EVENTS_V1);
  if (bad) return refused(bad);
  delete obj.metadata.deletionTimestamp; // rest.BeforeCreate clears them
  delete obj.metadata.deletionGracePeriodSeconds;
  const key = `${ns}/${obj.metadata.name}`;
  if (q.get("dryRun") === "All") {
    // Validated, not stored (the dry-run storage only looks the name up).
    if (eventObjects.has(key)) return refuse(res, { code: 409, status: eventAlreadyExistsStatus(obj.metadata.name) });
    stats.dryRuns = (stats.dryRuns ?? 0) + 1;
    obj.metadata.uid = crypto.randomUUID();
    obj.metadata.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    res.writeHead(201, { "content-type": "application/json", ...warningHeaders(warnings) });
    return res.end(JSON.stringify(obj));
  }
  if (obj.metadata.resourceVersion) {
    // staging/src/k8s.io/apiserver/pkg/storage/etcd3 store.Create: not a Status error, so the
    // answer is a 500 with an empty reason (responsewriters ErrorToAPIStatus).
    const message = "resourceVersion should not be set on objects to be created";
    return refused(statusFailure(500, "", message));
  }
  if (eventObjects.has(key)) return refuse(res, { code: 409, status: eventAlreadyExistsStatus(obj.metadata.name) });
  rv++; // another kind of object written: the revision moves on, no slice watch hears of it
  obj.metadata.resourceVersion = String(rv);
  obj.metadata.uid = crypto.randomUUID();
  obj.metadata.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  eventObjects.set(key, obj);
  stats.eventCreates++;
  return answerWrite(res, 201, obj, warnings);
}

function wipe(selector) {
  let n = 0;
  for (const s of candidates(selector)) {
    if (!matches(s, selector)) continue;
    removeSlice(s);
    infoOf(nodeOfSlice(s)).wipedAt = performance.now();
    rv++;
    record("DELETED", s);
    n++;
  }
  return n;
}

const tls = { key: fs.readFileSync(path.join(dir, "tls.key")), cert: fs.readFileSync(path.join(dir, "ca.crt")) };
const sockets = new Set();
// Every API request as it arrived (ms on the server's monotonic clock), with the code it
// was answered (the status line: for a watch, 200 when it opened), the last 100,000: tests
// assert the times between requests (GET /requests), as what the server saw, not the client.
const requestLog = new Fifo();
const apiServer = https.createServer(tls, (req, res) => {
  const entry = { t: performance.now(), method: req.method, url: req.url, code: 0, ua: req.headers["user-agent"] ?? "" };
  requestLog.push(entry);
  if (requestLog.length > 100000) requestLog.shift();
  const writeHead = res.writeHead.bind(res);
  res.writeHead = (code, ...rest) => {
    entry.code = code;
    return writeHead(code, ...rest);
  };
  api(req, res).catch((e) => status(res, 500, "InternalError", String(e)));
});
// kube-apiserver closes a connection idle for 90 s (apiserver's secure_serving.go, Serve:
// IdleTimeout, "matches http.DefaultTransport keep-alive timeout"); Node's 5 s default made
// every request after a quiet spell a new TLS handshake.
apiServer.keepAliveTimeout = 90000;
apiServer.on("connection", (s) => {
  sockets.add(s);
  s.on("close", () => sockets.delete(s));
});
let apiPort = 0;

// Admin GET /node-status[?name=N] (the stored nodes, or one: 404 when not stored) and POST
// /node-status {name, capacity, allocatable}: the node's status.capacity and
// status.allocatable set as its kubelet writes them (node_status.mjs adminNodeStatus: each
// quantity parsed and written canonically, 400 when one does not parse; ValidateNodeResources,
// 422 `Node "<name>" is invalid: ...`; an absent allocatable is the capacity), the node created
// if need be (the synthetic one's name and uid), its resourceVersion bumped. Answers the Node.
function adminNodeStatusApi(req, res, arg, query, ok) {
  if (req.method === "GET") {
    const name = query.get("name");
    if (name === null) return ok([...nodes.values()]);
    return nodes.has(name) ? ok(nodes.get(name)) : status(res, 404, "NotFound", `nodes ${goQuote(name)} not found`);
  }
  const isMap = (v) => v === undefined || v === null || (typeof v === "object" && !Array.isArray(v));
  if (typeof arg.name !== "string" || !arg.name || !isMap(arg.capacity) || !isMap(arg.allocatable)) {
    return status(res, 400, "BadRequest", "node-status: {name: string, capacity: {resource: quantity}, allocatable: {resource: quantity}} expected");
  }
  const st = adminNodeStatus(arg.capacity, arg.allocatable);
  if (st.error) return status(res, 400, "BadRequest", `node-status: ${st.error}`);
  if (st.errs) return refuse(res, nodeInvalidRefusal(arg.name, st.errs));
  rv++;
  const node = structuredClone(nodes.get(arg.name) ?? newNode(arg.name));
  node.metadata.resourceVersion = String(rv);
  delete node.status.capacity;
  delete node.status.allocatable;
  if (st.capacity) node.status.capacity = st.capacity;
  if (st.allocatable) node.status.allocatable = st.allocatable;
  nodes.set(arg.name, encodeNode(node));
  return ok(nodes.get(arg.name));
}

const admin = http.createServer(async (req, res) => {
  const body = req.method === "POST" ? await readBody(req) : "";
  const arg = body ? JSON.parse(body) : {};
  const ok = (v = {}) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(v));
  };
  const adminUrl = new URL(req.url, "http://x");
  if (adminUrl.pathname === "/node-status") return adminNodeStatusApi(req, res, arg, adminUrl.searchParams, ok);
  switch (req.url) {
    case "/token":
      token = arg.token;
      return ok();
    case "/fault":
      faults.push({ count: 1, ...arg });
      return ok();
    case "/claims": {
      if (req.method === "GET") return ok([...claims.values()]);
      try {
        new ResourceClaim(arg).validate();
        checkStrict(arg, resourceV1("ResourceClaim"));
      } catch (e) {
        return status(res, 422, "Invalid", e.message.split("\n")[0]);
      }
      const key = `${arg.metadata.namespace}/${arg.metadata.name}`;
      const old = claims.get(key);
      const status = arg.status;
      const bad = admitClaimSpec(arg, old) ?? admitClaimStatus(arg, status);
      if (bad) {
        stats.invalid.push(bad.message);
        return refuse(res, bad);
      }
      arg.metadata.uid ??= crypto.randomUUID();
      stamp(arg, old);
      claims.set(key, arg);
      claimStatusOwners.delete(key); // written as an Update: no apply manager owns an entry now
      return ok(arg);
    }
    case "/rbac": {
      // Authorize the API as kube-apiserver's RBAC would the driver's service account, with the
      // rules of the ClusterRoles in `file` (header); DELETE: back to the token alone.
      const view = () => (rbac ? { on: true, user: rbac.user, rules: rbac.rules.map((r) => r.rule) } : { on: false });
      if (req.method === "DELETE") {
        rbac = null;
        return ok(view());
      }
      if (req.method === "GET") return ok(view());
      let docs;
      try {
        docs = parseAllDocuments(fs.readFileSync(String(arg.file ?? ""), "utf8"));
        const bad = docs.flatMap((d) => d.errors);
        if (bad.length) throw new Error(bad[0].message);
      } catch (e) {
        return status(res, 400, "BadRequest", `rbac: ${e.message}`);
      }
      const rules = clusterRoleRules(docs.map((d) => d.toJS()), { from: MANIFEST_DRIVER, to: arg.driver });
      rbac = { rules, user: draServiceAccountUser(arg.node), node: arg.node ?? "", authorize: rbacAuthorizer(rules) };
      return ok(view());
    }
    case "/namespaces": {
      if (req.method === "GET") return ok([...namespaces.values()]);
      const labels = arg.labels ?? {};
      if (typeof arg.name !== "string" || !arg.name || typeof labels !== "object" ||
          Object.values(labels).some((v) => typeof v !== "string")) {
        return status(res, 400, "BadRequest", "namespaces: {name: string, labels: {key: string}} expected");
      }
      const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: arg.name, labels: { ...labels } } };
      namespaces.set(arg.name, ns);
      return ok(ns);
    }
    case "/deviceclasses":
      try {
        new DeviceClass(arg).validate();
        checkStrict(arg, resourceV1("DeviceClass"));
      } catch (e) {
        return status(res, 422, "Invalid", e.message.split("\n")[0]);
      }
      classes.set(arg.metadata.name, arg);
      return ok(arg);
    case "/schedule-extended": {
      // kube-scheduler's verdict for a pod asking `limits: <resource>: <requested>` on `node`
      // (extended_resource_rule.mjs scheduleExtendedResource) at the fake's release and gates,
      // over the stored node (or an empty status) and the DeviceClasses posted.
      const requested = arg.requested ?? 1;
      if (typeof arg.node !== "string" || !arg.node || typeof arg.resource !== "string" || !arg.resource ||
          !Number.isInteger(requested) || requested < 1 || (arg.devices !== undefined && !Number.isInteger(arg.devices))) {
        return status(res, 400, "BadRequest", "schedule-extended: {node: string, resource: string, requested: integer >= 1[, devices: integer]} expected");
      }
      const node = nodes.get(arg.node) ?? { status: {} };
      try {
        const verdict = scheduleExtendedResource(release, node, [...classes.values()], arg.resource, requested, gates, { devices: arg.devices });
        return ok({ ...verdict, release, DRAExtendedResource: gates.DRAExtendedResource });
      } catch (e) {
        return status(res, 400, "BadRequest", `schedule-extended: ${e.message}`);
      }
    }
    case "/allocate": {
      const key = `${arg.metadata.namespace}/${arg.metadata.name}`;
      const old = claims.get(key);
      const created = structuredClone(arg);
      let bad = admitClaimSpec(created, old);
      if (bad) {
        stats.invalid.push(bad.message);
        return refuse(res, bad);
      }
      let result;
      try {
        result = allocate(created, { slices: [...slices.values()], classes, claims, claimKey: key,
          features: { adminAccess: gates.DRAAdminAccess, deviceTaints: gates.DRADeviceTaints } });
      } catch (e) {
        return status(res, 422, "Invalid", e.message);
      }
      if (result.error) return status(res, 409, "Unschedulable", result.error);
      const claim = structuredClone(created);
      bad = admitClaimStatus(claim, { allocation: result.allocation });
      if (bad) {
        stats.invalid.push(bad.message);
        return refuse(res, bad);
      }
      try {
        new ResourceClaim(claim).validate();
        checkStrict(claim, resourceV1("ResourceClaim"));
      } catch (e) {
        stats.invalid.push(`allocated claim ${key}: ${e.message.split("\n")[0]}`);
        return status(res, 422, "Invalid", e.message.split("\n")[0]);
      }
      claim.metadata.uid ??= crypto.randomUUID();
      stamp(claim, claims.get(key));
      claims.set(key, claim);
      claimStatusOwners.delete(key);
      return ok(claim);
    }
    case "/deallocate":
      claimStatusOwners.delete(`${arg.namespace}/${arg.name}`);
      return ok({ deleted: claims.delete(`${arg.namespace}/${arg.name}`) });
    case "/claim-status-owners": {
      // Server-side apply's ownership of status.devices entries, as the fake keeps it:
      // {"<ns>/<name>": {"<driver>/<pool>/<device>[/<shareID>]": {manager, fields}}}
      const out = {};
      for (const [k, owners] of claimStatusOwners) {
        out[k] = {};
        for (const [ek, rec] of owners) {
          const [d, pl, dev, share] = JSON.parse(ek);
          out[k][`${d}/${pl}/${dev}${share ? `/${share}` : ""}`] = { manager: rec.manager, fields: rec.fields };
        }
      }
      return ok(out);
    }
    case "/wipe":
      return ok({ deleted: wipe(arg.fieldSelector ?? {}) });
    case "/hold":
      holdWrites = true;
      return ok();
    case "/release":
      holdWrites = false;
      for (const send of heldWrites.splice(0)) send();
      stats.held = 0;
      return ok();
    case "/drop-watches":
      for (const w of watches) w.res.destroy();
      return ok();
    case "/compact":
      // Writes to other objects moved the revision on, then etcd compacted: a watch from
      // any version we handed out is now too old.
      rv++;
      compactedRv = rv;
      events.clear();
      eventsByNode.clear();
      return ok({ compactedRv });
    case "/black-hole-watches":
      blackHole = Boolean(arg.on);
      // A dead connection stays dead: turning it off only spares the watches opened later.
      if (blackHole) for (const w of watches) w.silent = true;
      return ok();
    case "/short-watches":
      shortWatches = Boolean(arg.on);
      for (const w of [...watches]) endWatch(w);
      return ok();
    case "/outage":
      outage = Boolean(arg.on);
      if (outage) for (const w of watches) w.res.destroy();  // a restarting API server
      return ok({ at: at() });
    case "/claim-delay":
      claimDelayMs = arg.ms ?? 0;
      return ok();
    case "/gates":
      for (const [gate, value] of Object.entries(arg)) {
        const locked = lockedGateError(release, gate, value);
        if (locked) return status(res, 400, "BadRequest", locked);
      }
      Object.assign(gates, arg);
      return ok(gates);
    case "/kube-release":  // behave as another release from now on, gates at its defaults
      release = arg.release;
      Object.assign(gates, gateDefaults(release));
      stats.release = release;
      return ok({ release, gates });
    case "/tick":
      rv++; // another object was written: the revision moves on, no event of ours
      return ok({ rv });
    case "/bookmark":
      bookmark();
      return ok();
    case "/time-scale":
      if (!(Number(arg.scale) > 0)) return status(res, 400, "BadRequest", "time-scale: scale must be a number > 0");
      setTimeScale(Number(arg.scale));
      return ok({ scale: timeScale, at: at() });
    case "/down":
      down = true;
      apiServer.close();
      for (const s of sockets) s.destroy();
      return ok();
    case "/up":
      if (down) {
        down = false;
        apiServer.listen(apiPort, "127.0.0.1", () => ok());
        return;
      }
      return ok();
    case "/await": {
      const w = { fn: new Function("stats", "slices", `return (${arg.until});`), res, slices: /\bslices\b/.test(arg.until) };
      w.timer = setTimeout(() => {
        waiters.delete(w);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: false, ...view() }));
      }, arg.timeoutMs ?? 10000);
      waiters.add(w);
      return settle();
    }
    case "/stats":
      return ok({ ...stats, rv, watchesOpen: watches.size, at: at() });
    case "/apf":
      Object.assign(apf, { budget: 0, burst: 0, retryAfter: 1, listDelayMs: 0 }, arg);
      apf.burst ||= apf.budget;
      apf.tokens = apf.burst;
      apf.refilledAt = performance.now();
      return ok({ ...apf, at: at() });
    case "/mark": // per-node first write and write count start over
      for (const info of nodeInfo.values()) Object.assign(info, { firstWriteAt: 0, writes: 0 });
      return ok({ at: at() });
    case "/wipe-wave": {
      // The kubelet restarts of a fleet, one node's wipe each, spread evenly over spreadMs.
      const nodes = arg.nodes ?? [];
      nodes.forEach((node, i) => setTimeout(() => wipe({ "spec.nodeName": node }), (i * (arg.spreadMs ?? 0)) / Math.max(1, nodes.length)));
      return ok({ at: at() });
    }
    case "/series":
      return ok({ at: at(), series });
    case "/nodes": {
      // Per node: its slices now, their devices, when it was last written and wiped.
      const out = {};
      for (const [node, names] of sliceNamesByNode) {
        let devices = 0;
        for (const n of names) devices += slices.get(n).spec.devices?.length ?? 0;
        out[node] = { slices: names.size, devices };
      }
      for (const [node, info] of nodeInfo) {
        out[node] ??= { slices: 0, devices: 0 };
        const since = (t) => (t ? t - t0 : -1);
        Object.assign(out[node], { lastWriteAt: since(info.lastWriteAt), wipedAt: since(info.wipedAt),
          firstWriteAt: since(info.firstWriteAt), writes: info.writes });
      }
      return ok({ at: at(), nodes: out });
    }
    case "/slices":
      return ok([...slices.values()]);
    case "/events": // every stored events.k8s.io/v1 Event
      return ok([...eventObjects.values()]);
    case "/requests":
      return ok({ now: performance.now(), t0, requests: requestLog.toArray() });  // t0: the start of `at`

    default:
      return status(res, 404, "NotFound", req.url);
  }
});

apiServer.listen(0, "127.0.0.1", () => {
  apiPort = apiServer.address().port;
  admin.listen(0, "127.0.0.1", () => {
    console.log(JSON.stringify({ apiPort, adminPort: admin.address().port }));
  });
});
process.on("SIGTERM", () => process.exit(0));
// A test that dies without its destructor (a crash, _Exit) leaves no server behind: the
// parent's death re-parents us.
const parent = process.ppid;
setInterval(() => process.ppid !== parent && process.exit(0), 1000).unref();
