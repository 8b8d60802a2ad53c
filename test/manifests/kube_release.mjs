// What differs between kube-apiserver releases for the DRA front end, written from the
// upstream sources, so that the fake API server is exactly as unkind as the real one.
// The validation itself, and what changed in it from release to release, is in
// kube_validation.mjs; this file has the feature gates and what a disabled gate drops.
//
//  - Feature-gate defaults: defaultVersionedKubernetesFeatureGates in kube-apiserver's
//    pkg/features (kube_features.go; in the newest sources the DRA gates sit in a
//    versioned file of the same package), cross-checked against the v1.37 feature-gate
//    reference (kubernetes.io, "Feature Gates", alpha/beta and graduated tables):
//      DRADeviceTaints            1.33 alpha off, 1.36 beta on, 1.37 GA on
//      DRAConsumableCapacity      1.34 alpha off, 1.36 beta on
//      DRAPartitionableDevices    1.33 alpha off, 1.36 beta on
//      DRADeviceBindingConditions 1.34 alpha off, 1.36 beta on
//      DRAResourceClaimDeviceStatus 1.32 alpha off, 1.33 beta on, 1.37 GA on
//      DRAListTypeAttributes, DRANodeAllocatableResources, DRAResourcePoolStatus: 1.36 alpha off
//      DRAOptionalNodeOperations, DRAPartitionableDevicesType: 1.37 alpha off
//      DRAFractionalCapacityRange 1.37 beta, off by default: its on-by-default entry is
//        tied to MinCompatibilityVersion 1.37, which a plain 1.37 server does not have.
//      DRAAdminAccess             1.32 alpha off, 1.34 beta on, 1.36 GA on and locked
//        (LockToDefault: true, "GA in 1.36; remove in 1.39"), the same entry in the 1.37
//        sources' versioned gate file.
//      DRAExtendedResource        1.34 alpha off, 1.35 alpha off, 1.36 beta on, 1.37 GA on and
//        locked (extended_resource_rule.mjs has its sources: gateDefault there agrees)
//      DRAResourceClaimGranularStatusAuthorization  1.36 beta on (introduced as beta by
//        kubernetes pull 134947, "Beta, enabled by default in 1.36"; the feature-gate
//        reference page: one stage, beta, default true, from 1.36; upstream's strategy test
//        turns it off by emulating 1.35, so 1.34 and 1.35 do not have it), still beta and on
//        in the 1.37 sources' strategy tests. The gate's own versioned entry could not be read
//        (the feature files are past what the search index holds); claim_status_authz.mjs.
//    A gate locked to its default (LockToDefault) cannot be set otherwise: component-base's
//    featuregate SetFromMap refuses with "cannot set feature gate G to V, feature is locked
//    to D", and kube-apiserver does not start (LOCKED below; from the same versioned specs:
//    DynamicResourceAllocation GA locked 1.35, DRAResourceClaimDeviceStatus GA locked 1.37,
//    DRAExtendedResource GA locked 1.37).
//  - What a disabled gate drops on create and update: dropDisabledFields in
//    pkg/registry/resource/resourceslice/strategy.go, ported whole below. A field is kept
//    on update when the stored (old) slice already uses the feature; on create there is
//    no old slice. The generation rules of PrepareForCreate/PrepareForUpdate are ported too.
//  - DRA admin access (KEP-5018) on ResourceClaims and ResourceClaimTemplates, at the end
//    of this file: the namespace-label check of pkg/registry/resource/utils.go
//    (AuthorizedForAdmin, AuthorizedForAdminStatus, adminRequested), called from the claim
//    strategy's Validate and the status strategy's ValidateUpdate
//    (pkg/registry/resource/resourceclaim/strategy.go) and from the template strategy's
//    Validate (resourceclaimtemplate/strategy.go); and what DRAAdminAccess off drops:
//    dropDisabledDRAAdminAccessFields / DRAAdminAccessFeatureInUse of
//    pkg/api/resourceclaimspec (util.go, DropDisabledFields; the template strategy's own
//    copy before it moved there) and dropDisabledDRAAdminAccessStatusFields /
//    draAdminAccessFeatureInUse of the claim strategy. Each function is ported whole; the
//    other gates' claim and template drops (DRAPrioritizedList, DRADeviceTaints,
//    DRAConsumableCapacity, DRAResourceClaimDeviceStatus, DRADeviceBindingConditions) and
//    ValidateResourceClaim itself are not ported: the fake checks claims against the schema.
import { FieldError, maxDevicesFor, semanticEqualSpec } from "./kube_validation.mjs";

export const RELEASES = ["1.34", "1.35", "1.36", "1.37"];

// gate -> [[first minor, default], ...] (defaultVersionedKubernetesFeatureGates)
export const GATE_HISTORY = {
  DynamicResourceAllocation: [[26, false], [32, false], [34, true]],
  DRAAdminAccess: [[32, false], [34, true], [36, true]],
  DRAConsumableCapacity: [[34, false], [36, true]],
  DRAExtendedResource: [[34, false], [36, true], [37, true]],
  DRADeviceBindingConditions: [[34, false], [36, true]],
  DRADeviceTaints: [[33, false], [36, true], [37, true]],
  DRAFractionalCapacityRange: [[37, false]],
  DRAListTypeAttributes: [[36, false]],
  DRANodeAllocatableResources: [[36, false]],
  DRAOptionalNodeOperations: [[37, false]],
  DRAPartitionableDevices: [[33, false], [36, true]],
  DRAPartitionableDevicesType: [[37, false]],
  DRAResourceClaimDeviceStatus: [[32, false], [33, true], [37, true]],
  DRAResourceClaimGranularStatusAuthorization: [[36, true]],
  DRAResourcePoolStatus: [[36, false]],
};

// gate -> first minor where it is locked to its default (LockToDefault: true).
export const LOCKED = {
  DynamicResourceAllocation: 35,
  DRAAdminAccess: 36,
  DRAExtendedResource: 37,
  DRAResourceClaimDeviceStatus: 37,
};

// featuregate SetFromMap's refusal of `gate`=`value` at `release`, or null when it may be set.
export function lockedGateError(release, gate, value) {
  const minor = Number(release.split(".")[1]);
  if (!(gate in LOCKED) || minor < LOCKED[gate]) return null;
  const locked = gateDefaults(release)[gate];
  return value === locked ? null : `cannot set feature gate ${gate} to ${value}, feature is locked to ${locked}`;
}

// Every gate above at its default for `release` (false where the gate does not exist yet).
export function gateDefaults(release) {
  if (!RELEASES.includes(release)) throw new Error(`unknown release ${release}`);
  const minor = Number(release.split(".")[1]);
  const gates = {};
  for (const [gate, history] of Object.entries(GATE_HISTORY)) {
    gates[gate] = history.filter(([since]) => since <= minor).at(-1)?.[1] ?? false;
  }
  return gates;
}

// The device limit of one slice at `release` (validateResourceSliceSpec).
export function maxDevices(release, spec) {
  return maxDevicesFor(spec ?? {}, { release });
}

const devicesOf = (slice) => (Array.isArray(slice?.spec?.devices) ? slice.spec.devices : []);
const has = (v) => v !== undefined && v !== null;
const nonEmpty = (v) => (Array.isArray(v) ? v.length > 0 : v && typeof v === "object" ? Object.keys(v).length > 0 : false);

// strategy.go dropDisabledFields: `old` is null on create. Drops, in place, what the
// disabled gates do not allow and returns the dropped field paths (for the test's own
// accounting, e.g. "devices[].taints").
export function dropDisabledFields(gates, slice, old) {
  const dropped = new Set();
  dropDisabledDRADeviceTaintsFields(gates, slice, old, dropped);
  dropDisabledDRAPartitionableDevicesFields(gates, slice, old, dropped);
  dropDisabledDRADeviceBindingConditionsFields(gates, slice, old, dropped);
  dropDisabledDRAConsumableCapacityFields(gates, slice, old, dropped);
  dropDisabledDRANodeAllocatableResourcesFields(gates, slice, old, dropped);
  dropDisableDRAListTypeAttributesFields(gates, slice, old, dropped);
  dropDisabledDRAPartitionableDevicesTypeFields(gates, slice, old, dropped);
  dropDisabledDRAOptionalNodeOperationsFields(gates, slice, old, dropped);
  return [...dropped];
}

function drop(obj, field, what, dropped) {
  if (obj && has(obj[field])) dropped.add(what);
  if (obj && field in obj) delete obj[field];
}

// dropDisabledDRADeviceTaintsFields / draDeviceTaintsFeatureInUse
function dropDisabledDRADeviceTaintsFields(gates, slice, old, dropped) {
  if (gates.DRADeviceTaints || draDeviceTaintsFeatureInUse(old)) return;
  for (const d of devicesOf(slice)) drop(d, "taints", "devices[].taints", dropped);
}
const draDeviceTaintsFeatureInUse = (slice) => devicesOf(slice).some((d) => nonEmpty(d?.taints));

// dropDisabledDRAPartitionableDevicesFields / draPartitionableDevicesFeatureInUse
function dropDisabledDRAPartitionableDevicesFields(gates, slice, old, dropped) {
  if (gates.DRAPartitionableDevices || draPartitionableDevicesFeatureInUse(old)) return;
  drop(slice?.spec, "sharedCounters", "sharedCounters", dropped);
  drop(slice?.spec, "perDeviceNodeSelection", "perDeviceNodeSelection", dropped);
  for (const d of devicesOf(slice)) {
    for (const f of ["consumesCounters", "nodeName", "nodeSelector", "allNodes"]) drop(d, f, `devices[].${f}`, dropped);
  }
}
function draPartitionableDevicesFeatureInUse(slice) {
  if (!slice) return false;
  const spec = slice.spec ?? {};
  if (nonEmpty(spec.sharedCounters) || has(spec.perDeviceNodeSelection)) return true;
  return devicesOf(slice).some((d) => nonEmpty(d?.consumesCounters) || has(d?.nodeName) || has(d?.nodeSelector) || has(d?.allNodes));
}

// dropDisabledDRADeviceBindingConditionsFields / draBindingConditionsFeatureInUse: both
// DRADeviceBindingConditions and DRAResourceClaimDeviceStatus must be on.
function dropDisabledDRADeviceBindingConditionsFields(gates, slice, old, dropped) {
  if ((gates.DRADeviceBindingConditions && gates.DRAResourceClaimDeviceStatus) || draBindingConditionsFeatureInUse(old)) return;
  for (const d of devicesOf(slice)) {
    for (const f of ["bindingConditions", "bindingFailureConditions", "bindsToNode"]) drop(d, f, `devices[].${f}`, dropped);
  }
}
const draBindingConditionsFeatureInUse = (slice) => devicesOf(slice).some((d) =>
  nonEmpty(d?.bindingConditions) || nonEmpty(d?.bindingFailureConditions) || has(d?.bindsToNode));

// dropDisabledDRAConsumableCapacityFields / draConsumableCapacityFeatureInUse
function dropDisabledDRAConsumableCapacityFields(gates, slice, old, dropped) {
  if (gates.DRAConsumableCapacity || draConsumableCapacityFeatureInUse(old)) return;
  for (const d of devicesOf(slice)) {
    drop(d, "allowMultipleAllocations", "devices[].allowMultipleAllocations", dropped);
    for (const c of Object.values(d?.capacity ?? {})) drop(c, "requestPolicy", "capacity.requestPolicy", dropped);
  }
}
const draConsumableCapacityFeatureInUse = (slice) => devicesOf(slice).some((d) =>
  has(d?.allowMultipleAllocations) || Object.values(d?.capacity ?? {}).some((c) => has(c?.requestPolicy)));

// dropDisabledDRANodeAllocatableResourcesFields / draNodeAllocatableResourcesFeatureInUse.
// The field is `nodeAllocatableResourceMappings` in 1.36 and `nodeAllocatableResources`
// in 1.37 (v1.37.0 types.go); both are handled.
function dropDisabledDRANodeAllocatableResourcesFields(gates, slice, old, dropped) {
  if (gates.DRANodeAllocatableResources || draNodeAllocatableResourcesFeatureInUse(old)) return;
  for (const d of devicesOf(slice)) {
    drop(d, "nodeAllocatableResources", "devices[].nodeAllocatableResources", dropped);
    drop(d, "nodeAllocatableResourceMappings", "devices[].nodeAllocatableResourceMappings", dropped);
  }
}
const draNodeAllocatableResourcesFeatureInUse = (slice) => devicesOf(slice).some((d) =>
  nonEmpty(d?.nodeAllocatableResources) || nonEmpty(d?.nodeAllocatableResourceMappings));

// dropDisableDRAListTypeAttributesFields / draListTypeAttributesFeatureInUse: the list of
// an attribute goes, the attribute stays (and may then have no value at all).
function dropDisableDRAListTypeAttributesFields(gates, slice, old, dropped) {
  if (gates.DRAListTypeAttributes || draListTypeAttributesFeatureInUse(old)) return;
  for (const d of devicesOf(slice)) {
    for (const a of Object.values(d?.attributes ?? {})) {
      for (const f of ["bools", "ints", "strings", "versions"]) drop(a, f, `devices[].attributes.${f}`, dropped);
    }
  }
}
const draListTypeAttributesFeatureInUse = (slice) => devicesOf(slice).some((d) =>
  Object.values(d?.attributes ?? {}).some((a) => has(a?.bools) || has(a?.ints) || has(a?.strings) || has(a?.versions)));

// spec.partitionTypeAttribute. The stored strategy.go (a 1.37 development commit) names
// this dropDisabledDRAResourcePoolStatusFields and gates it on DRAResourcePoolStatus; the
// v1.37 feature-gate reference says DRAPartitionableDevicesType "enables the
// PartitionTypeAttribute field on ResourceSlices", which is what is followed here.
function dropDisabledDRAPartitionableDevicesTypeFields(gates, slice, old, dropped) {
  if (gates.DRAPartitionableDevicesType || has(old?.spec?.partitionTypeAttribute)) return;
  drop(slice?.spec, "partitionTypeAttribute", "partitionTypeAttribute", dropped);
}

// spec.skipNodeOperations (DRAOptionalNodeOperations, alpha in 1.37). Not in the stored
// strategy.go; dropped while the gate is off like every other gated field (assumption).
function dropDisabledDRAOptionalNodeOperationsFields(gates, slice, old, dropped) {
  if (gates.DRAOptionalNodeOperations || nonEmpty(old?.spec?.skipNodeOperations)) return;
  drop(slice?.spec, "skipNodeOperations", "skipNodeOperations", dropped);
}

// resourceSliceStrategy.PrepareForCreate: generation 1, then the disabled gates' fields go.
export function prepareForCreate(gates, slice) {
  slice.metadata ??= {};
  slice.metadata.generation = 1;
  return dropDisabledFields(gates, slice, null);
}

// resourceSliceStrategy.PrepareForUpdate: any spec change moves the generation on (compared
// semantically, before dropping), then the disabled gates' fields go.
export function prepareForUpdate(gates, slice, old) {
  slice.metadata ??= {};
  if (!semanticEqualSpec(slice.spec, old.spec)) slice.metadata.generation = (old.metadata?.generation ?? 0) + 1;
  return dropDisabledFields(gates, slice, old);
}

// rest.BeforeUpdate's object-meta part, before PrepareForUpdate: the generation cannot be
// set by a client, a missing UID is taken from the stored object, timestamps and the grace
// period cannot change (they are taken from the stored object).
export function beforeUpdateMeta(slice, old) {
  const meta = (slice.metadata ??= {});
  const o = old.metadata ?? {};
  if (o.generation !== undefined) meta.generation = o.generation;
  else delete meta.generation;
  if (!meta.uid && o.uid) meta.uid = o.uid;
  if (o.creationTimestamp) meta.creationTimestamp = o.creationTimestamp;
  if (o.deletionTimestamp) meta.deletionTimestamp = o.deletionTimestamp;
  if (has(o.deletionGracePeriodSeconds) && !has(meta.deletionGracePeriodSeconds)) {
    meta.deletionGracePeriodSeconds = o.deletionGracePeriodSeconds;
  }
}

// ---------------------------------------------------------------------------------------
// DRA admin access (KEP-5018) on ResourceClaims and ResourceClaimTemplates.
//
// A namespace is looked up as the strategies' nsClient.Get does: `getNamespace(name)` returns
// the Namespace object or throws an Error carrying the client's message (for example
// `namespaces "x" not found`).

// resource.DRAAdminNamespaceLabelKey (pkg/apis/resource/types.go)
export const DRA_ADMIN_NAMESPACE_LABEL_KEY = "resource.kubernetes.io/admin-access";

const ADMIN_NAMESPACE_DETAIL =
  `admin access to devices requires the \`${DRA_ADMIN_NAMESPACE_LABEL_KEY}: true\` label on the containing namespace`;

// The lookup both checks of utils.go share: one GET of the namespace; an error is an internal
// error at `path` (field.InternalError, "could not retrieve namespace to verify admin access:
// <client error>"), a namespace whose label is anything but the string "true" a Forbidden.
function adminNamespaceErrors(path, namespaceName, getNamespace) {
  let ns;
  try {
    ns = getNamespace(namespaceName);
  } catch (e) {
    return [new FieldError("InternalError", path, "", `could not retrieve namespace to verify admin access: ${e.message}`)];
  }
  if (ns?.metadata?.labels?.[DRA_ADMIN_NAMESPACE_LABEL_KEY] !== "true") {
    return [new FieldError("FieldValueForbidden", path, "", ADMIN_NAMESPACE_DETAIL)];
  }
  return [];
}

// pkg/registry/resource/utils.go AuthorizedForAdmin: the first request asking for admin
// access (only an `exactly` request can: a subrequest has no such field) names the path,
// spec.devices.requests[i].adminAccess (without "exactly", as upstream writes it). No such
// request: no lookup, no error. The old object is never consulted: the spec is immutable.
export function authorizedForAdmin(requests, namespaceName, getNamespace) {
  const i = (requests ?? []).findIndex((r) => r?.exactly?.adminAccess === true);
  if (i < 0) return [];
  return adminNamespaceErrors(`spec.devices.requests[${i}].adminAccess`, namespaceName, getNamespace);
}

// utils.go adminRequested: the path of the first result granted admin access, or null.
function adminRequested(results) {
  const i = (results ?? []).findIndex((r) => r?.adminAccess === true);
  return i < 0 ? null : `status.allocation.devices.results[${i}].adminAccess`;
}

// utils.go AuthorizedForAdminStatus: nothing to check when the old allocation already granted
// admin access (status.allocation is immutable) or the new one grants none; else the lookup.
export function authorizedForAdminStatus(newResults, oldResults, namespaceName, getNamespace) {
  if (adminRequested(oldResults)) return [];
  const path = adminRequested(newResults);
  if (!path) return [];
  return adminNamespaceErrors(path, namespaceName, getNamespace);
}

// pkg/api/resourceclaimspec DRAAdminAccessFeatureInUse (and the template strategy's
// draAdminAccessFeatureInUse): any `exactly` request with adminAccess set, true or false.
export function draAdminAccessSpecFeatureInUse(spec) {
  if (!spec) return false;
  return (spec.devices?.requests ?? []).some((r) => r?.exactly && has(r.exactly.adminAccess));
}

// pkg/api/resourceclaimspec dropDisabledDRAAdminAccessFields (and the template strategy's
// dropDisabledDRAAdminAccessFields): with DRAAdminAccess off, and unless the old spec uses
// it, every `exactly` request loses adminAccess. `oldSpec` is null on create. Returns the
// dropped field paths.
export function dropDisabledDRAAdminAccessFields(gates, spec, oldSpec) {
  const dropped = new Set();
  if (gates.DRAAdminAccess || draAdminAccessSpecFeatureInUse(oldSpec)) return [];
  for (const r of spec?.devices?.requests ?? []) {
    if (r?.exactly) drop(r.exactly, "adminAccess", "spec.devices.requests[].exactly.adminAccess", dropped);
  }
  return [...dropped];
}

// resourceclaim/strategy.go draAdminAccessFeatureInUse: the spec uses it, or a result of the
// allocation has adminAccess set (true or false).
export function draAdminAccessFeatureInUse(claim) {
  if (!claim) return false;
  if (draAdminAccessSpecFeatureInUse(claim.spec)) return true;
  return (claim.status?.allocation?.devices?.results ?? []).some((r) => has(r?.adminAccess));
}

// resourceclaim/strategy.go dropDisabledDRAAdminAccessStatusFields: with DRAAdminAccess
// off, and unless the old claim uses it, every result loses adminAccess.
export function dropDisabledDRAAdminAccessStatusFields(gates, claim, oldClaim) {
  const dropped = new Set();
  if (gates.DRAAdminAccess || draAdminAccessFeatureInUse(oldClaim)) return [];
  for (const r of claim?.status?.allocation?.devices?.results ?? []) {
    drop(r, "adminAccess", "status.allocation.devices.results[].adminAccess", dropped);
  }
  return [...dropped];
}

// resourceclaimStrategy.PrepareForCreate: a client cannot set the status on create; then the
// spec's disabled fields go (dropDisabledSpecFields, no old spec). Returns the dropped paths.
export function claimPrepareForCreate(gates, claim) {
  delete claim.status;
  return dropDisabledDRAAdminAccessFields(gates, claim.spec, null);
}

// resourceclaimStrategy.Validate, its admin part (ValidateResourceClaim is not ported).
export function claimValidateAdmin(claim, getNamespace) {
  return authorizedForAdmin(claim.spec?.devices?.requests, claim.metadata?.namespace ?? "", getNamespace);
}

// resourceclaimStrategy.PrepareForUpdate: the status stays the stored one, then the spec's
// disabled fields go unless the old spec uses them. ValidateUpdate has no admin part: the
// spec is immutable.
export function claimPrepareForUpdate(gates, claim, old) {
  if (old.status === undefined) delete claim.status;
  else claim.status = structuredClone(old.status);
  return dropDisabledDRAAdminAccessFields(gates, claim.spec, old.spec ?? null);
}

// resourceclaimStatusStrategy.PrepareForUpdate: the spec stays the stored one, then the
// status's disabled fields go (its DRAAdminAccess part: dropDisabledDRAAdminAccessStatusFields).
export function claimStatusPrepareForUpdate(gates, claim, old) {
  if (old.spec === undefined) delete claim.spec;
  else claim.spec = structuredClone(old.spec);
  return dropDisabledDRAAdminAccessStatusFields(gates, claim, old);
}

// resourceclaimStatusStrategy.ValidateUpdate, its admin part (ValidateResourceClaimStatusUpdate
// is not ported).
export function claimStatusValidateAdmin(claim, old, getNamespace) {
  return authorizedForAdminStatus(claim.status?.allocation?.devices?.results, old.status?.allocation?.devices?.results,
    claim.metadata?.namespace ?? "", getNamespace);
}

// resourceClaimTemplateStrategy.PrepareForCreate / PrepareForUpdate (their DRAAdminAccess part).
export function claimTemplatePrepareForCreate(gates, template) {
  return dropDisabledDRAAdminAccessFields(gates, template.spec?.spec, null);
}
export function claimTemplatePrepareForUpdate(gates, template, old) {
  return dropDisabledDRAAdminAccessFields(gates, template.spec?.spec, old.spec?.spec ?? null);
}

// resourceClaimTemplateStrategy.Validate, its admin part (ValidateResourceClaimTemplate is not
// ported); ValidateUpdate has none (the spec is immutable).
export function claimTemplateValidateAdmin(template, getNamespace) {
  return authorizedForAdmin(template.spec?.spec?.devices?.requests, template.metadata?.namespace ?? "", getNamespace);
}
