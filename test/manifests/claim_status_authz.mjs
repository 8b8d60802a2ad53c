// kube-apiserver's granular authorization of a ResourceClaim status update (1.36+, feature
// gate DRAResourceClaimGranularStatusAuthorization, KEP-4817, kubernetes pull 134947), ported
// to JavaScript rule for rule: besides update/patch on resourceclaims/status, changing
// status.allocation or status.reservedFor needs the same verb on the synthetic subresource
// resourceclaims/binding (cluster-wide), and changing a driver's status.devices entries needs
// verb associated-node:<verb> or arbitrary-node:<verb> on resourceclaims/driver, named by the
// driver, in the claim's namespace. Each function names the upstream Go function it mirrors;
// none of the Go code is copied, it is re-expressed here.
//
// What it ports (kubernetes/kubernetes pkg/registry/resource/utils.go, the form with
// syntheticSubresourceAttrs and checkAuthorization that the v1.36 sources have, and the
// resourceclaim status strategy's ValidateUpdate that calls it: claim_status_validation.mjs):
//  - AuthorizedForBinding: nothing to check when status.allocation and status.reservedFor are
//    semantically unchanged; else the request's verb on resourceclaims/binding, namespace and
//    name empty; refused: Forbidden at the given path (the strategy passes status.allocation),
//    `changing status.allocation or status.reservedFor requires resource="resourceclaims/
//    binding", verb="<verb>" permission: <the Forbidden status message>`.
//  - AuthorizedForDeviceStatus: the drivers whose entries were added, changed or removed
//    (getModifiedDrivers, keyed by makeDeviceKey: driver, pool, device, shareID), in sorted
//    order; per driver, checkDriverAuthorization tries the verbs in order and keeps the first
//    refusal: [associated-node:<verb>, arbitrary-node:<verb>] when the requester is a service
//    account whose token carries exactly one valid node name equal to the node the NEW
//    allocation is confined to (saAssociatedWithAllocatedNode, nodeNameFromAllocation: one
//    node selector term, no matchExpressions, exactly one matchFields requirement
//    metadata.name In [node]), else [arbitrary-node:<verb>]; refused: Forbidden at the given
//    path (the strategy passes status.devices), `changing status.devices requires
//    resource="resourceclaims/driver", verb="[<verbs>]" permission: <the Forbidden status
//    message of the first refusal>` (Go's %s of a []string: space-separated in brackets).
//  - checkAuthorization: an Allow passes even with an error; otherwise the message is the
//    reason, "<error>: <reason>" or "<error>", inside responsewriters.ForbiddenStatusError
//    (rbac_authorizer.mjs forbiddenStatus).
//  - No request attributes (GetAuthorizerAttributes failing): an InternalError at the path,
//    "cannot build authorizer attributes: no RequestInfo found in the context".
//
// Which release. The port follows the v1.36 form (the utils.go read and its strategy: the
// kube-apiserver v1.36.1 message `changing status.devices requires resource="resourceclaims/
// driver"` is what an end-to-end test of a DRA driver against kind v1.36.1 matches). A newer
// upstream test copy (the 1.37/1.38 development line) expects other texts ("changing
// status.devices requires extra permission", "changing status.allocation or status.reservedFor
// requires extra permission") and a single binding error when a deallocation also drops the
// deallocated devices' status entries; the source of that change could not be read, so the
// fake serves the v1.36 form on 1.37 too (a known gap, claim_status_validation.mjs's header).
//
// Usage: authorizedForBinding / authorizedForDeviceStatus(path, authorize, request, newStatus,
// oldStatus) return FieldErrors. `authorize(attrs)` is the authorizer: {decision: "Allow" |
// "Deny" | "NoOpinion", reason, error}; `request` the request's attributes ({user: {name,
// extra}, verb, namespace, apiGroup, resource, subresource, name, resourceRequest}), null when
// the request has none.
import { FieldError, forbidden, isDNS1123Subdomain, semanticEqual } from "./kube_validation.mjs";
import { NODE_NAME_KEY, forbiddenStatus, splitServiceAccountUsername } from "./rbac_authorizer.mjs";

// resource.k8s.io/v1 constants of the synthetic subresources and verb prefixes.
export const SUBRESOURCE_BINDING = "binding";
export const SUBRESOURCE_DRIVER = "driver";
export const VERB_PREFIX_ASSOCIATED_NODE = "associated-node:";
export const VERB_PREFIX_ARBITRARY_NODE = "arbitrary-node:";

const list = (v) => (Array.isArray(v) ? v : []);
const isSet = (v) => v !== undefined && v !== null;

// apiequality.Semantic.DeepEqual of an AllocationResult: consumed capacities by value, the
// allocation timestamp by instant (kube_validation.mjs normalize; also the status update's
// immutability check, claim_status_validation.mjs).
export const ALLOCATION = { fields: {
  devices: { fields: { results: { item: { fields: { consumedCapacity: { map: "quantity" } } } } } },
  allocationTimestamp: "time",
} };
// ... of an AllocatedDeviceStatus: its conditions' lastTransitionTime by instant.
const DEVICE_STATUS = { fields: { conditions: { item: { fields: { lastTransitionTime: "time" } } } } };

// GetAuthorizerAttributes' error when the context has no request info.
const noAttributes = (path) => [new FieldError("InternalError", path, "",
  "cannot build authorizer attributes: no RequestInfo found in the context")];

// syntheticSubresourceAttrs: the request's attributes with another verb, subresource,
// namespace and name.
const synthetic = (request, verb, subresource, namespace, name) => ({ ...request, verb, subresource, namespace, name });

const errorText = (e) => (e instanceof Error ? e.message : String(e));

// checkAuthorization: null when allowed, else the Forbidden status message.
export function checkAuthorization(authorize, attrs) {
  const { decision, reason = "", error } = authorize(attrs) ?? {};
  if (decision === "Allow") return null;
  let msg = reason;
  if (isSet(error) && reason) msg = `${errorText(error)}: ${reason}`;
  else if (isSet(error)) msg = errorText(error);
  return forbiddenStatus(attrs, msg).message;
}

// AuthorizedForBinding
export function authorizedForBinding(path, authorize, request, newStatus, oldStatus) {
  if (semanticEqual(newStatus?.allocation, oldStatus?.allocation, ALLOCATION) &&
      semanticEqual(newStatus?.reservedFor, oldStatus?.reservedFor)) return [];
  if (!request) return noAttributes(path);
  const attrs = synthetic(request, request.verb, SUBRESOURCE_BINDING, "", "");
  const err = checkAuthorization(authorize, attrs);
  if (!err) return [];
  return [forbidden(path, `changing status.allocation or status.reservedFor requires resource="resourceclaims/binding", verb="${attrs.verb}" permission: ${err}`)];
}

// makeDeviceKey: driver, pool, device and shareID (a nil shareID is "").
export const makeDeviceKey = (d) => JSON.stringify([d?.driver ?? "", d?.pool ?? "", d?.device ?? "", d?.shareID ?? ""]);

// getModifiedDrivers: the drivers of entries added or changed (by Semantic.DeepEqual) in the new
// status and of entries the new status no longer has. A key repeated in the new status counts
// its later copies as added (the old entry is taken by the first).
export function getModifiedDrivers(newStatus, oldStatus) {
  const drivers = new Set();
  const old = new Map();
  for (const d of list(oldStatus?.devices)) old.set(makeDeviceKey(d), d);
  for (const d of list(newStatus?.devices)) {
    const key = makeDeviceKey(d);
    const had = old.has(key);
    const before = old.get(key);
    old.delete(key);
    if (!had || !semanticEqual(before, d, DEVICE_STATUS)) drivers.add(d?.driver ?? "");
  }
  for (const d of old.values()) drivers.add(d?.driver ?? "");
  return drivers;
}

// nodeNameFromAllocation: the one node an allocation is confined to, or "".
export function nodeNameFromAllocation(allocation) {
  if (!isSet(allocation) || !isSet(allocation.nodeSelector)) return "";
  const terms = list(allocation.nodeSelector.nodeSelectorTerms);
  if (terms.length !== 1) return "";
  const term = terms[0] ?? {};
  if (list(term.matchExpressions).length !== 0 || list(term.matchFields).length !== 1) return "";
  const f = term.matchFields[0] ?? {};
  if (f.key !== "metadata.name" || f.operator !== "In" || list(f.values).length !== 1) return "";
  return f.values[0];
}

// saAssociatedWithAllocatedNode: a service account (SplitUsername) whose token carries exactly
// one node name, valid (ValidateNodeName: a DNS subdomain), equal to the allocated node.
export function saAssociatedWithAllocatedNode(user, allocatedNodeName) {
  if (!allocatedNodeName) return false;
  if (!splitServiceAccountUsername(user?.name)) return false;
  const nodeNames = list(user?.extra?.[NODE_NAME_KEY]);
  if (nodeNames.length !== 1) return false;
  const nodeName = String(nodeNames[0]);
  if (isDNS1123Subdomain(nodeName).length !== 0) return false;
  return nodeName === allocatedNodeName;
}

// checkDriverAuthorization: the verbs are OR'd; null when one is allowed, else the first
// refusal.
export function checkDriverAuthorization(request, verbs, driverName, authorize) {
  if (verbs.length === 0) return `no verbs set for driver ${driverName}`;
  let first = null;
  for (const verb of verbs) {
    const err = checkAuthorization(authorize, synthetic(request, verb, SUBRESOURCE_DRIVER, request.namespace ?? "", driverName));
    if (!err) return null;
    first ??= err;
  }
  return first;
}

// AuthorizedForDeviceStatus
export function authorizedForDeviceStatus(path, authorize, request, newStatus, oldStatus) {
  const drivers = getModifiedDrivers(newStatus, oldStatus);
  if (drivers.size === 0) return [];
  if (!request) return noAttributes(path);
  const verb = request.verb;
  const verbs = saAssociatedWithAllocatedNode(request.user, nodeNameFromAllocation(newStatus?.allocation))
    ? [VERB_PREFIX_ASSOCIATED_NODE + verb, VERB_PREFIX_ARBITRARY_NODE + verb]
    : [VERB_PREFIX_ARBITRARY_NODE + verb];
  const errs = [];
  for (const driver of [...drivers].sort()) {
    const err = checkDriverAuthorization(request, verbs, driver, authorize);
    if (err) errs.push(forbidden(path, `changing status.devices requires resource="resourceclaims/driver", verb="[${verbs.join(" ")}]" permission: ${err}`));
  }
  return errs;
}
