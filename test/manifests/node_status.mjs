// A Node's status as kube-apiserver stores and checks it, for the fake kube-apiserver's
// nodes/status (fake_apiserver.mjs): what a client's PATCH of status.capacity and
// status.allocatable meets. Written from the upstream sources, none of the Go copied:
//  - pkg/registry/core/node/strategy.go nodeStatusStrategy: PrepareForUpdate (the spec is the
//    stored one; status.config is dropped unless the stored node has one; metadata is NOT reset
//    for nodes: a status write may change labels and annotations), ValidateUpdate (=
//    ValidateNodeUpdate; the declarative validation the newest sources append,
//    rest.ValidateUpdateDeclaratively, is not ported).
//  - pkg/apis/core/validation/validation.go ValidateNodeUpdate: ValidateObjectMetaUpdate,
//    ValidateNodeResources (every capacity and allocatable entry through
//    ValidateResourceQuantityValue: ValidateNonnegativeQuantity, "must be greater than or equal
//    to 0" with the quantity's String() as the value; and for an integer resource --
//    helper.IsIntegerResourceName: pods, quotas, services, replicationcontrollers, secrets,
//    configmaps, persistentvolumeclaims, services.nodeports, services.loadbalancers, or an
//    extended resource name -- a MilliValue that is not a multiple of 1000 is "must be an
//    integer" with the Quantity itself as the value, which Go prints with %#v), and no
//    duplicate status.addresses. The field path of a resource is
//    status.capacity.<name> (field.NewPath("status", "capacity", name): a child, not a key).
//    ValidateNodeResources does NOT check the resource names: any key decodes and is stored
//    (a name is checked on containers, quotas and limit ranges, not on a node's status).
//  - pkg/apis/core/v1 defaults.go SetDefaults_NodeStatus: an absent (nil) allocatable is the
//    capacity. It runs on every decode, the storage's included, and the protobuf storage turns
//    an empty map into nil: a write that empties allocatable while capacity has entries reads
//    back with allocatable equal to capacity (normalizeStored).
//  - staging/src/k8s.io/apiserver/pkg/registry/rest/update.go BeforeUpdate: generation kept,
//    a missing uid and the creation timestamp taken from the stored object, then
//    validateCommonFields (kube_validation.mjs) and the strategy's ValidateUpdate; the errors
//    go out as errors.NewInvalid(Kind "Node", group "", name): `Node "<name>" is invalid: ...`.
//  - staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go: a patched object that does
//    not decode is errors.NewInvalid(GroupKind{}, "", [field.Invalid("patch", <patched JSON>,
//    <decode error>)]): ` "" is invalid: patch: Invalid value: "<JSON>": <error>` (a leading
//    space: the empty GroupKind prints as "").
//  - The Node's JSON as the API encodes a v1.Node (Go field order, omitempty): metadata, spec
//    (all of it omitempty: {}), status with capacity and allocatable (omitted when empty),
//    daemonEndpoints and nodeInfo (structs: always written, zero values included).
//
// Not ported (a patch of status.capacity/allocatable never meets them; said, not hidden):
//  ValidateNodeSpecificAnnotations (the taints and preferAvoidPods annotations),
//  validateNodeConfigStatus (status.config), the spec rules of ValidateNodeUpdate (podCIDRs,
//  providerID, externalID, taints: the status strategy keeps the stored spec, which the fake
//  never sets), the finalizer-name check of ValidateObjectMetaUpdate, the main strategy's
//  dropDisabledFields (runtimeHandlers, features: its PrepareForUpdate is not the status
//  one), managedFields (a PATCH records none here), and type errors of fields other than
//  status, status.capacity and status.allocatable.
import { FieldError, GoStringer, goQuote, invalid, parseQuantity, quantityFromJSON, validateCommonFields,
  validateObjectMetaAccessorUpdate } from "./kube_validation.mjs";
import { isExtendedResourceName } from "./extended_resource_rule.mjs";
import { statusFailure } from "./api_status.mjs";

// validation.go isNegativeErrorMsg (apimachinery IsNegativeErrorMsg) and isNotIntegerErrorMsg.
export const IS_NEGATIVE = "must be greater than or equal to 0";
export const IS_NOT_INTEGER = "must be an integer";

// helper.integerResources
const INTEGER_RESOURCES = new Set(["pods", "quotas", "services", "replicationcontrollers", "secrets", "configmaps",
  "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"]);
// helper.IsIntegerResourceName
export const isIntegerResourceName = (name) => INTEGER_RESOURCES.has(name) || isExtendedResourceName(name);

// A resource.Quantity as Go's %#v prints it (the struct of apimachinery's quantity.go before
// its quantityState refactor: i, d, s, Format). A quantity held as an inf.Dec prints a pointer
// address there, which no test can know: "(*inf.Dec)(0x...)" stands for it.
export function goSyntaxQuantity(q) {
  const i = q.i ? `resource.int64Amount{value:${q.i.value}, scale:${q.i.scale}}` : "resource.int64Amount{value:0, scale:0}";
  const d = q.d ? "resource.infDecAmount{Dec:(*inf.Dec)(0x...)}" : "resource.infDecAmount{Dec:(*inf.Dec)(nil)}";
  return `resource.Quantity{i:${i}, d:${d}, s:${goQuote(q.s ?? "")}, Format:${goQuote(q.format)}}`;
}

// ValidateResourceQuantityValue(resource, value, fldPath); `q` a parsed Quantity.
export function validateResourceQuantityValue(name, q, path) {
  const errs = [];
  if (q.sign() < 0) errs.push(invalid(path, q.toString(), IS_NEGATIVE));
  if (isIntegerResourceName(name) && q.milliValue() % 1000n !== 0n) {
    errs.push(invalid(path, new GoStringer(goSyntaxQuantity(q)), IS_NOT_INTEGER));
  }
  return errs;
}

// ValidateNodeResources. `quantities`: {capacity: {name: Quantity}, allocatable: {...}} as
// decoded (decodeNodeStatus); Go ranges over a map in random order, this in key order.
export function validateNodeResources(quantities) {
  const errs = [];
  for (const list of ["capacity", "allocatable"]) {
    for (const name of Object.keys(quantities[list] ?? {}).sort()) {
      errs.push(...validateResourceQuantityValue(name, quantities[list][name], `status.${list}.${name}`));
    }
  }
  return errs;
}

// ValidateNodeUpdate, the parts a status write can hit (see the header).
export function validateNodeUpdate(node, old, quantities) {
  const errs = validateObjectMetaAccessorUpdate(node.metadata, old.metadata, "metadata");
  errs.push(...validateNodeResources(quantities));
  const seen = new Set();
  (Array.isArray(node.status?.addresses) ? node.status.addresses : []).forEach((a, i) => {
    const key = JSON.stringify([a?.type ?? "", a?.address ?? ""]);
    if (seen.has(key)) errs.push(new FieldError("FieldValueDuplicate", `status.addresses[${i}]`, { type: a?.type ?? "", address: a?.address ?? "" }, ""));
    seen.add(key);
  });
  return errs;
}

// nodeStatusStrategy.PrepareForUpdate, with rest.BeforeUpdate's metadata part before it.
export function nodeStatusPrepareForUpdate(node, old) {
  const meta = (node.metadata ??= {});
  const o = old.metadata ?? {};
  if (o.generation !== undefined) meta.generation = o.generation;
  else delete meta.generation;
  if (!meta.uid && o.uid) meta.uid = o.uid;
  if (o.creationTimestamp) meta.creationTimestamp = o.creationTimestamp;
  node.spec = structuredClone(old.spec ?? {});
  if (node.status && old.status?.config === undefined) delete node.status.config;
}

// BeforeUpdate's validation of a status write: validateCommonFields, then ValidateNodeUpdate.
export function nodeStatusValidateUpdate(node, old, quantities) {
  return [...validateCommonFields(node, old), ...validateNodeUpdate(node, old, quantities)];
}

// A decoding error of the patched object (see the header): {code, message, status}.
export function patchDecodeRefusal(patchedText, detail) {
  const err = invalid("patch", patchedText, detail);
  const message = ` "" is invalid: ${err}`;
  return statusFailure(422, "Invalid", message, { causes: [{ reason: err.type, message: err.errorBody(), field: err.field }] });
}

// errors.NewInvalid for a Node: {code, message, status}; the message lists each text once.
export function nodeInvalidRefusal(name, errs) {
  const msgs = [...new Set(errs.map(String))];
  const message = `Node ${goQuote(name)} is invalid: ${msgs.length === 1 ? msgs[0] : `[${msgs.join(", ")}]`}`;
  return statusFailure(422, "Invalid", message,
    { name, kind: "Node", causes: errs.map((e) => ({ reason: e.type, message: e.errorBody(), field: e.field })) });
}

// encoding/json's name for the JSON type of a value, in an UnmarshalTypeError.
const jsonKind = (v) => (Array.isArray(v) ? "array" : typeof v === "object" ? "object" : typeof v === "boolean" ? "bool" : typeof v);

// Decoding status into a v1.NodeStatus: capacity and allocatable are resource lists, each
// value a Quantity (Quantity.UnmarshalJSON: a string or a number, null is zero). Returns
// {quantities} (parsed) or {error} (the decoder's text). The lists are rewritten in place in
// the form the server writes them back (canonical, Quantity.MarshalJSON).
export function decodeNodeStatus(node) {
  const status = node.status;
  if (status !== undefined && status !== null && (typeof status !== "object" || Array.isArray(status))) {
    return { error: `json: cannot unmarshal ${jsonKind(status)} into Go struct field Node.status of type v1.NodeStatus` };
  }
  const quantities = { capacity: {}, allocatable: {} };
  for (const list of ["capacity", "allocatable"]) {
    const m = status?.[list];
    if (m === undefined || m === null) {
      if (status) delete status[list];
      continue;
    }
    if (typeof m !== "object" || Array.isArray(m)) {
      return { error: `json: cannot unmarshal ${jsonKind(m)} into Go struct field NodeStatus.status.${list} of type v1.ResourceList` };
    }
    for (const [name, v] of Object.entries(m)) {
      try {
        quantities[list][name] = quantityFromJSON(v);
      } catch (e) {
        return { error: e.message };
      }
    }
  }
  return { quantities };
}

// The zero values a v1.Node's status always carries (structs, not omitted).
const zeroDaemonEndpoints = () => ({ kubeletEndpoint: { Port: 0 } });
const NODE_INFO_FIELDS = ["machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion",
  "kubeletVersion", "kubeProxyVersion", "operatingSystem", "architecture"];
const META_ORDER = ["name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
  "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers", "managedFields"];
const SPEC_ORDER = ["podCIDR", "podCIDRs", "providerID", "unschedulable", "taints", "configSource", "externalID"];
const STATUS_ORDER = ["capacity", "allocatable", "phase", "conditions", "addresses", "daemonEndpoints", "nodeInfo", "images",
  "volumesInUse", "volumesAttached", "config", "runtimeHandlers", "features", "declaredFeatures"];
const empty = (v) => v === undefined || v === null || v === "" || v === false || v === 0 ||
  (Array.isArray(v) && v.length === 0) || (typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0);
// Known fields in Go's order, omitempty ones left out when empty; unknown ones after them.
function ordered(obj, order, always = []) {
  const out = {};
  for (const k of order) if (obj && Object.hasOwn(obj, k) && (always.includes(k) || !empty(obj[k]))) out[k] = obj[k];
  for (const k of Object.keys(obj ?? {})) if (!order.includes(k) && !empty(obj[k])) out[k] = obj[k];
  return out;
}
const sortedMap = (m) => Object.fromEntries(Object.keys(m).sort().map((k) => [k, m[k]]));

// A Node as the API writes it (json.Marshal of a v1.Node): see the header.
export function encodeNode(node) {
  const status = { ...(node.status ?? {}) };
  for (const list of ["capacity", "allocatable"]) if (status[list]) status[list] = sortedMap(status[list]);
  status.daemonEndpoints = { ...zeroDaemonEndpoints(), ...(status.daemonEndpoints ?? {}) };
  status.daemonEndpoints.kubeletEndpoint = { Port: status.daemonEndpoints.kubeletEndpoint?.Port ?? 0 };
  const info = status.nodeInfo ?? {};
  status.nodeInfo = Object.fromEntries(NODE_INFO_FIELDS.map((f) => [f, info[f] ?? ""]));
  if (info.swap !== undefined && info.swap !== null) status.nodeInfo.swap = info.swap;
  return { kind: "Node", apiVersion: "v1", metadata: ordered(node.metadata, META_ORDER), spec: ordered(node.spec, SPEC_ORDER),
    status: ordered(status, STATUS_ORDER, ["daemonEndpoints", "nodeInfo"]) };
}

// What storage gives back (see the header): an empty resource list is absent; an absent
// allocatable with a capacity is the capacity (SetDefaults_NodeStatus on the read).
export function normalizeStored(node) {
  const status = (node.status ??= {});
  for (const list of ["capacity", "allocatable"]) if (status[list] && Object.keys(status[list]).length === 0) delete status[list];
  if (!status.allocatable && status.capacity) status.allocatable = { ...status.capacity };
  return node;
}

// Canonical resource lists: each quantity written as Quantity.MarshalJSON writes it.
export function canonicalLists(node, quantities) {
  for (const list of ["capacity", "allocatable"]) {
    if (!node.status?.[list]) continue;
    node.status[list] = Object.fromEntries(Object.entries(quantities[list]).map(([k, q]) => [k, q.toString()]));
  }
}

// A status set by the admin API (what a kubelet writes), through the same decoding, defaulting
// and ValidateNodeResources. Returns {capacity, allocatable} canonical, or {error, errs}.
export function adminNodeStatus(capacity, allocatable) {
  const status = {};
  if (capacity !== undefined && capacity !== null) status.capacity = capacity;
  if (allocatable !== undefined && allocatable !== null) status.allocatable = allocatable;
  const probe = { status: structuredClone(status) };
  const decoded = decodeNodeStatus(probe);
  if (decoded.error) return { error: decoded.error };
  const errs = validateNodeResources(decoded.quantities);
  if (errs.length) return { errs };
  canonicalLists(probe, decoded.quantities);
  normalizeStored(probe);
  return { capacity: probe.status.capacity, allocatable: probe.status.allocatable };
}

export { parseQuantity };
