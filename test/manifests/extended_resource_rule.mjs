// Which node serves a pod's extended resource (`limits: rdma/hca_x: 1`) when a DeviceClass
// names it (KEP-5004, feature gate DRAExtendedResource): the node's device plugin, or a
// ResourceClaim that kube-scheduler makes for the pod from the class's devices. Written from
// the upstream sources, release by release, so that the tests can say what a node looks like
// to the scheduler after our device plugin has gone from it.
//
// What is ported, each in a function of the same name below (lower camel case):
//  - kube-scheduler, pkg/scheduler/framework/plugins/noderesources/fit.go: the DRA branch of
//    fitsRequest (1.34: inline `okScalar`/`okDynamic`; 1.35: shouldDelegateResourceToDRA;
//    1.36+: ShouldDelegateResourceToDRA, after #135725), and the plain scalar check after it.
//  - kube-scheduler, pkg/scheduler/framework/plugins/dynamicresources: preFilterExtendedResources
//    and filterExtendedResources (1.34: in dynamicresources.go; 1.35+: extendeddynamicresources.go,
//    split out by #134935), hasDeviceClassMappedExtendedResource.
//  - which DeviceClass a name maps to: 1.34 extended.DeviceClassMapping
//    (dynamicresources/extended/util.go); 1.35+ the DeviceClassResolver, i.e.
//    k8s.io/dynamic-resource-allocation deviceclass/extendedresourcecache ExtendedResourceCache
//    (updateResourceName2class), added by #135037 ("pick one device class deterministically").
//  - names: v1helper.IsExtendedResourceName (pkg/apis/core/v1/helper) and, from 1.35,
//    schedutil.IsDRAExtendedResourceName (pkg/scheduler/util: extended, or the implicit
//    `deviceclass.resource.kubernetes.io/<class>`).
//  - what a node looks like to the scheduler: framework.NodeInfo.SetNode -> Resource.Add, which
//    puts every scalar resource of status.allocatable in ScalarResources, a 0 included.
//  - kubelet admission, pkg/kubelet/lifecycle/predicate.go: removeMissingExtendedResources
//    (1.36+: also drops requests the pod's status.extendedResourceClaimStatus maps, #135725)
//    followed by noderesources.Fits without a DRA manager.
//  - kubelet node status after a device plugin goes: pkg/kubelet/cm/devicemanager manager.go
//    PluginDisconnected (markResourceUnhealthy, setStopTime) and GetCapacity (deletedResources
//    once endpoint.go stopGracePeriodExpired, i.e. more than types.go endpointStopGracePeriod =
//    5 minutes), and pkg/kubelet/nodestatus/setters.go MachineInfo (a removed resource's
//    capacity is set to 0, never deleted; allocatable follows capacity). The same in 1.34..1.37
//    (#133727, which would have deleted the entry, was closed unmerged).
//
// The rule that changed (kubernetes/kubernetes #133784, "Treat extended resources as inactive
// when allocatable is 0", fixes #133488):
//  - 1.34.x: a name is the device plugin's on a node as soon as the node's allocatable has the
//    key, whatever its value. The kubelet keeps the key (at 0) after the plugin is gone, so DRA
//    never serves that name on that node and the pod stays Pending (noderesources: Insufficient).
//    No 1.34 cherry-pick of #133784 exists (the feature was alpha there, and alpha fixes are
//    not backported); every 1.34 patch release behaves as 1.34.0.
//  - 1.35.0 and later: allocatable 0 (or absent) means "no device plugin serves it"; a class
//    naming it makes the scheduler serve it from DRA. #133784 was merged for 1.35 (it was under
//    review on 2025-10-22, issue #134783, before the 1.35 freeze; every stored version of the
//    1.35 extendeddynamicresources.go and of fit.go's shouldDelegateResourceToDRA compares the
//    allocatable value).
//
// Gate DRAExtendedResource (pkg/features kube_features.go, versioned specs): 1.34 alpha off,
// 1.35 still alpha off (#135048: beta postponed), 1.36 beta on, 1.37 GA on and locked
// (LockToDefault: true, "GA in 1.37; remove in 1.40").
//
// Simplifications, said rather than hidden: one pod, one container, the extended resources of
// `requests` only; the structured allocator is not run here (dra_allocator.mjs does that): a
// DRA decision can be given the node's device count (`devices`) and then needs that many.

export const RELEASES = ["1.34", "1.35", "1.36", "1.37"];

// Upstream changes this file follows: PR -> first release that has it, and patch releases of
// older branches that got it (none found for any of them).
export const CHANGES = {
  allocatableZeroIsNotDevicePlugin: { pr: 133784, since: "1.35.0", backports: [] },
  deterministicDeviceClassCache: { pr: 135037, since: "1.35.0", backports: [] },
  extendedDynamicResourcesFile: { pr: 134935, since: "1.35.0", backports: [] },
  kubeletAdmitsByClaimStatus: { pr: 135725, since: "1.36.0", backports: [] },
};

const IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/";
export const END_POINT_STOP_GRACE_PERIOD_MS = 5 * 60 * 1000;

// "1.34", "1.34.0", "1.34.9" -> {minor: 34, patch: 0|9|null}
export function parseRelease(release) {
  const m = String(release).match(/^1\.(\d+)(?:\.(\d+))?$/);
  if (!m) throw new Error(`release ${JSON.stringify(release)} not understood`);
  const minor = Number(m[1]);
  if (minor < 34 || minor > 37) throw new Error(`release ${release} outside 1.34..1.37`);
  return { minor, patch: m[2] === undefined ? null : Number(m[2]) };
}

// Whether `release` has the change (a `since` of x.y.0 or one of its backports).
export function hasChange(release, change) {
  const { minor, patch } = parseRelease(release);
  const since = parseRelease(change.since);
  if (minor > since.minor) return true;
  if (minor === since.minor) return patch === null || patch >= since.patch;
  return change.backports.some((b) => {
    const p = parseRelease(b);
    return p.minor === minor && patch !== null && patch >= p.patch;
  });
}

// DRAExtendedResource's default and lock at `release` (defaultVersionedKubernetesFeatureGates).
export function gateDefault(release) {
  const { minor } = parseRelease(release);
  return { DRAExtendedResource: minor >= 36, locked: minor >= 37 };
}

// The gate as set, or featuregate SetFromMap's refusal when it is locked to its default.
export function gateEnabled(release, gates) {
  const d = gateDefault(release);
  const set = gates?.DRAExtendedResource;
  if (set === undefined) return d.DRAExtendedResource;
  if (d.locked && set !== d.DRAExtendedResource) {
    throw new Error(`cannot set feature gate DRAExtendedResource to ${set}, feature is locked to ${d.DRAExtendedResource}`);
  }
  return set;
}

// --- names -----------------------------------------------------------------------------------

// v1helper.IsNativeResource / IsPrefixedNativeResource / IsExtendedResourceName: has a "/",
// not in a kubernetes.io domain, not "requests."-prefixed, and "requests.<name>" a qualified name.
export function isExtendedResourceName(name) {
  name = String(name);
  if (!name.includes("/") || name.includes("kubernetes.io/")) return false;
  if (name.startsWith("requests.")) return false;
  return isQualifiedName(`requests.${name}`);
}

// apimachinery validation.IsQualifiedName: [prefix/]name, prefix a DNS-1123 subdomain,
// name at most 63 characters of [A-Za-z0-9] with -, _ or . inside.
function isQualifiedName(s) {
  const parts = s.split("/");
  if (parts.length > 2) return false;
  const name = parts.at(-1);
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix.length === 0 || prefix.length > 253) return false;
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(prefix)) return false;
  }
  return name.length > 0 && name.length <= 63 && /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/.test(name);
}

// schedutil.IsDRAExtendedResourceName (1.35+); 1.34's filterExtendedResources and
// hasDeviceClassMappedExtendedResource used v1helper.IsExtendedResourceName alone.
export function isDRAExtendedResourceName(release, name) {
  if (parseRelease(release).minor < 35) return isExtendedResourceName(name);
  return isExtendedResourceName(name) || String(name).startsWith(IMPLICIT_PREFIX);
}

// --- quantities and NodeInfo -----------------------------------------------------------------

const SUFFIX = {
  "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

// resource.Quantity.Value(): the value rounded up to an integer (away from zero).
export function quantityValue(q) {
  if (typeof q === "number" && Number.isFinite(q)) return Math.ceil(q);
  const m = String(q).match(/^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$/);
  if (!m) throw new Error(`quantity ${JSON.stringify(q)} not understood`);
  let v = Number(m[2]) * (m[3] ? 10 ** Number(m[3].slice(1)) : SUFFIX[m[4] ?? ""]);
  if (m[1] === "-") v = -v;
  return v < 0 ? Math.floor(v) : Math.ceil(v);
}

// NodeInfo.SetNode(node): Allocatable = NewResource(status.allocatable); a scalar resource is
// in ScalarResources whenever the key is there, 0 included (Resource.Add -> AddScalar).
export function nodeScalar(node, name) {
  const alloc = node?.status?.allocatable ?? {};
  if (!Object.prototype.hasOwnProperty.call(alloc, name)) return { present: false, value: 0 };
  return { present: true, value: quantityValue(alloc[name]) };
}

// --- DeviceClass <-> extended resource name ---------------------------------------------------

const className = (c) => c?.metadata?.name;
const explicitName = (c) => c?.spec?.extendedResourceName ?? null;
const created = (c) => Date.parse(c?.metadata?.creationTimestamp ?? "1970-01-01T00:00:00Z");

// 1.34 extended.DeviceClassMapping: each class gives its explicit name, or, only when it has
// none, its implicit name; two classes with one name: the later in the lister's order wins
// (not specified upstream; here: the later in `classes`).
function deviceClassMapping134(classes) {
  const m = new Map();
  for (const c of classes ?? []) m.set(explicitName(c) ?? IMPLICIT_PREFIX + className(c), c);
  return m;
}

// 1.35+ ExtendedResourceCache, fed the classes as informer adds in `classes` order
// (updateResourceName2class): the explicit name goes to the newer class, equal times to the
// lower name; the implicit name is always mapped -- except that a class which loses its
// explicit name to a newer one returns early and gets no implicit mapping either.
function extendedResourceCache(classes) {
  const m = new Map();
  for (const c of classes ?? []) {
    const explicit = explicitName(c);
    const holder = explicit !== null ? m.get(explicit) : undefined;
    if (holder) {
      if (created(c) < created(holder)) continue;
      if (created(c) === created(holder) && className(c) >= className(holder)) continue;
    }
    if (explicit !== null) m.set(explicit, c);
    m.set(IMPLICIT_PREFIX + className(c), c);
  }
  return m;
}

// The class `name` maps to at `release`, or null.
export function deviceClassFor(release, classes, name) {
  const m = parseRelease(release).minor < 35 ? deviceClassMapping134(classes) : extendedResourceCache(classes);
  return m.get(String(name)) ?? null;
}

// --- the rule ---------------------------------------------------------------------------------

// Whether kube-scheduler takes `resourceName` on `node` to be served by the node's device
// plugin (so DRA does not serve it there): the test filterExtendedResources applies to a
// name that a DeviceClass maps. With the gate off no DRA path exists, and every extended
// resource is checked against allocatable as a device plugin's.
//  - 1.34.x: the key is in status.allocatable (value ignored).
//  - 1.35+ (#133784): status.allocatable has it above 0.
export function servedByDevicePlugin(release, node, resourceName, gates) {
  if (!gateEnabled(release, gates)) return true;
  const s = nodeScalar(node, resourceName);
  return hasChange(release, CHANGES.allocatableZeroIsNotDevicePlugin) ? s.value > 0 : s.present;
}

// noderesources fitsRequest, for the pod's extended resources `requests` ({name: count}):
// each is either left to the dynamicresources plugin (`delegated`) or checked against the
// node's allocatable minus `used` ({name: count} of pods already there). `draManager` false is
// the kubelet's call (noderesources.Fits without a DRA manager; in 1.34 Fits never has
// PreFilter's class mapping either).
export function fitsRequest(release, node, requests, deviceClasses, gates, { used = {}, draManager = true } = {}) {
  const gate = gateEnabled(release, gates);
  const { minor } = parseRelease(release);
  // 1.34 PreFilter withDeviceClass: the mapping is made only when the pod has an extended
  // resource (v1helper) with a non-zero request.
  const podHasExtended = Object.entries(requests).some(([n, q]) => q > 0 && isExtendedResourceName(n));
  const mapping134 = minor < 35 && gate && draManager && podHasExtended ? deviceClassMapping134(deviceClasses) : null;
  const insufficient = [];
  const delegated = [];
  for (const [name, requested] of Object.entries(requests)) {
    if (requested === 0) continue;
    const s = nodeScalar(node, name);
    let delegate = false;
    if (gate) {
      if (minor < 35) {
        // 1.34: delegate when the name is mapped, or no mapping was made, and the node's
        // allocatable lacks the key (its value is not looked at).
        const okDynamic = mapping134 !== null && mapping134.has(name);
        delegate = (okDynamic || mapping134 === null) && !s.present;
      } else if (s.value > 0) {
        delegate = false; // shouldDelegateResourceToDRA: the device plugin's (#133784)
      } else if (draManager) {
        delegate = deviceClassFor(release, deviceClasses, name) !== null;
      } else {
        // No DRA manager (the kubelet): 1.35 delegated whatever allocatable lacks or has at 0;
        // #135725 (1.36) removed that fallback and filters in removeMissingExtendedResources.
        delegate = !hasChange(release, CHANGES.kubeletAdmitsByClaimStatus);
      }
    }
    if (delegate) { delegated.push(name); continue; }
    const u = used[name] ?? 0;
    if (requested > s.value - u) {
      insufficient.push({ resourceName: name, reason: `Insufficient ${name}`, requested, used: u, capacity: s.value, unresolvable: requested > s.value });
    }
  }
  return { fits: insufficient.length === 0, insufficient, delegated };
}

// dynamicresources preFilterExtendedResources + filterExtendedResources: "skip" (gate off, or
// no requested name is mapped by a class: PreFilter Skip), "unschedulable" (a requested name
// neither in the node's allocatable nor mapped: `cannot fit resource`), or "ok" with the names
// the node's device plugin serves (`devicePlugin`, no claim) and those put in the claim (`dra`).
export function filterExtendedResources(release, node, requests, deviceClasses, gates) {
  if (!gateEnabled(release, gates)) return { status: "skip" };
  const mapped = (n) => deviceClassFor(release, deviceClasses, n) !== null;
  const wanted = Object.entries(requests).filter(([n, q]) => q > 0 && isDRAExtendedResourceName(release, n));
  if (!wanted.some(([n]) => mapped(n))) return { status: "skip" }; // hasDeviceClassMappedExtendedResource
  const dra = [];
  const devicePlugin = [];
  for (const [name] of wanted) {
    const s = nodeScalar(node, name);
    if (mapped(name) && !servedByDevicePlugin(release, node, name, gates)) dra.push(name);
    else if (mapped(name)) devicePlugin.push(name);
    else if (!s.present) return { status: "unschedulable", message: "cannot fit resource", resource: name };
  }
  return { status: "ok", dra, devicePlugin, classes: Object.fromEntries(dra.map((n) => [n, className(deviceClassFor(release, deviceClasses, n))])) };
}

// What kube-scheduler does with a pod asking `requested` of `resourceName` (or, with
// `requests`, several names) on `node`: NodeResourcesFit.Filter and DynamicResources
// PreFilter/Filter together. `devices`: devices the classes' drivers publish for the node
// (omitted: not modelled, allocation assumed to succeed); the claim needs one per unit.
export function draServesExtendedResource(release, node, deviceClasses, resourceName, gates, { requested = 1, requests, used = {}, devices } = {}) {
  requests ??= { [resourceName]: requested };
  const fit = fitsRequest(release, node, requests, deviceClasses, gates, { used });
  const dra = filterExtendedResources(release, node, requests, deviceClasses, gates);
  if (dra.status === "ok" && dra.dra.length > 0 && devices !== undefined) {
    const need = dra.dra.reduce((a, n) => a + requests[n], 0);
    if (devices < need) dra.allocation = "cannot allocate all claims";
  }
  const schedulable = fit.fits && dra.status !== "unschedulable" && !dra.allocation;
  let servedBy = null;
  if (schedulable && resourceName !== undefined && requests[resourceName] > 0) {
    servedBy = dra.status === "ok" && dra.dra.includes(resourceName) ? "dra" : "device-plugin";
  }
  return { servedBy, schedulable, fit, dra };
}

// The scheduler's verdict on one node for a pod asking `requested` of `resourceName` (the fake
// kube-apiserver's admin POST /schedule-extended): {servedBy: "devicePlugin" | "dra" | "none",
// reason}. "none" is a Pending pod, `reason` then the first failing filter's own text:
// NodeResourcesFit runs before DynamicResources in the default profile, so "Insufficient
// <name>" (fit.go) when it fails, else DynamicResources' "cannot fit resource" or "cannot
// allocate all claims". For a node that serves it, `reason` is this file's account (the
// scheduler gives none for a node that fits). `devices` as draServesExtendedResource.
export function scheduleExtendedResource(release, node, deviceClasses, resourceName, requested, gates, { devices } = {}) {
  const r = draServesExtendedResource(release, node, deviceClasses, resourceName, gates, { requested, devices });
  if (r.servedBy === "dra") {
    const cls = r.dra.classes[resourceName];
    const s = nodeScalar(node, resourceName);
    const why = s.present ? `allocatable ${resourceName} is ${s.value}, not above 0` : `no allocatable ${resourceName} on the node`;
    return { servedBy: "dra", reason: `DeviceClass ${cls} maps ${resourceName} and ${why}: the scheduler makes a claim`, deviceClass: cls };
  }
  if (r.servedBy === "device-plugin") {
    return { servedBy: "devicePlugin", reason: `allocatable ${resourceName}: ${nodeScalar(node, resourceName).value} (a device plugin's)` };
  }
  if (!r.fit.fits) return { servedBy: "none", reason: r.fit.insufficient.map((i) => i.reason).join(", ") };
  if (r.dra.status === "unschedulable") return { servedBy: "none", reason: r.dra.message };
  if (r.dra.allocation) return { servedBy: "none", reason: r.dra.allocation };
  return { servedBy: "none", reason: "" }; // nothing requested
}

// kubelet predicateAdmitHandler.Admit for the extended resource alone: removeMissingExtendedResources,
// then Fits without a DRA manager. `mappedInPodStatus`: the scheduler recorded the request in
// the pod's status.extendedResourceClaimStatus (it went the DRA path).
export function kubeletAdmits(release, node, resourceName, deviceClasses, gates, { requested = 1, used = 0, mappedInPodStatus = false } = {}) {
  const gate = gateEnabled(release, gates);
  const s = nodeScalar(node, resourceName);
  let keep = true;
  if (gate && hasChange(release, CHANGES.kubeletAdmitsByClaimStatus) &&
      isDRAExtendedResourceName(release, resourceName) && mappedInPodStatus) keep = false;
  if (keep && isExtendedResourceName(resourceName) && !s.present) keep = false;
  if (!keep) return { admit: true, removed: true };
  const fit = fitsRequest(release, node, { [resourceName]: requested }, deviceClasses, gates, { used: { [resourceName]: used }, draManager: false });
  return fit.fits ? { admit: true, removed: false } : { admit: false, reason: `OutOf${resourceName}`, fit };
}

// --- kubelet node status after the device plugin went -----------------------------------------

// status.capacity / status.allocatable for the plugin's resource `elapsedMs` after the plugin's
// socket went (PluginDisconnected: all devices unhealthy, stop time set), as the kubelet writes
// them at a status sync then. `devices`: the plugin's devices (healthy or not) when it went.
// `removedByOperatorAtMs`: the time an operator removed the entry (PATCH of the node's /status);
// the kubelet puts it back only while the grace period runs (GetCapacity still lists the
// resource), and never after (the device manager forgot it and rewrote its checkpoint).
// `kubeletRestartAtMs`: a kubelet restart at that time (readCheckpoint: a resource still in the
// checkpoint comes back as a stopped endpoint with no devices, for another grace period).
export function kubeletReportsAfterPluginGone(release, { devices, elapsedMs, removedByOperatorAtMs, kubeletRestartAtMs } = {}) {
  parseRelease(release); // same in 1.34..1.37
  const grace = END_POINT_STOP_GRACE_PERIOD_MS;
  // The device manager still knows the resource while its (stopped) endpoint is within the grace
  // period; a restart inside that period re-creates the endpoint from the checkpoint.
  let stoppedAt = 0;
  let count = devices;
  if (kubeletRestartAtMs !== undefined && kubeletRestartAtMs <= elapsedMs && kubeletRestartAtMs <= grace) {
    stoppedAt = kubeletRestartAtMs;
    count = 0;
  }
  const known = elapsedMs - stoppedAt <= grace; // stopGracePeriodExpired: strictly more than 5 min
  const removed = removedByOperatorAtMs !== undefined && removedByOperatorAtMs <= elapsedMs;
  if (known) return { capacity: String(count), allocatable: "0", deviceManagerKnows: true };
  // Past the grace period: the sync that saw it expire wrote capacity 0 (setters.go MachineInfo),
  // allocatable follows capacity; nothing writes the key again.
  const removedAfterExpiry = removed && removedByOperatorAtMs > stoppedAt + grace;
  if (removedAfterExpiry) return { capacity: null, allocatable: null, deviceManagerKnows: false };
  return { capacity: "0", allocatable: "0", deviceManagerKnows: false };
}
