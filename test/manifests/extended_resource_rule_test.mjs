// Tests of extended_resource_rule.mjs: upstream's own cases for the rule, transcribed by name,
// then cases of our own (the stale node-status entry a device plugin leaves behind, on each
// release). Usage: node extended_resource_rule_test.mjs (exit status 0 when all pass).
//
// Upstream cases, and the releases they run at here:
//  - TestEnoughRequests (pkg/scheduler/framework/plugins/noderesources/fit_test.go, the
//    stored sources with the nilDRAManager field of #135725): its seven DRAExtendedResource
//    cases, compared on the InsufficientResource list and the status code. Their results are
//    the same at every release, so they run at 1.34 to 1.37; the one with the gate off
//    cannot run at 1.37, where DRAExtendedResource is locked on, and that refusal is checked.
//    Inputs as upstream builds them: the node's allocatable has example.com/aaa: 5 and no
//    other extended resource (makeAllocatableResources), the node's pod requests nothing,
//    one DeviceClass maps extended.resource.dra.io/something. Two case names say
//    "Allocatable: 0" where upstream's node lacks the name (the existing pod requests 0);
//    the inputs are transcribed, not the names' reading of them.
//  - TestPlugin (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go,
//    the stored sources that have workerNodeWithExtendedResourceZeroAllocatable, #133784):
//    the extended-resource cases that decide device plugin or DRA, compared on that decision
//    (no claim / a claim for which names / PreFilter Skip / Filter status). The claim's
//    allocation and PreBind are not ported (dra_allocator.mjs, fake_apiserver.mjs).
//    "extended-resource-name-with-zero-allocatable" came with #133784: it runs at 1.35+ as
//    upstream has it, and at 1.34 with what the 1.34 code does instead.
//    "implicit-extended-resource-name-with-resources" needs IsDRAExtendedResourceName and the
//    class cache that maps implicit names always, both 1.35+; at 1.34 its outcome is derived
//    from the ported 1.34 code and labelled so.
// Skipped: the other TestPlugin cases (claims, PostFilter deletion, PreBind patching, metrics)
// test what the scheduler does with the claim, not which node serves the name.
import assert from "node:assert/strict";
import { check, finish } from "./check.mjs";
import {
  CHANGES, RELEASES, deviceClassFor, draServesExtendedResource, fitsRequest, gateDefault, hasChange,
  isDRAExtendedResourceName, isExtendedResourceName, kubeletAdmits, kubeletReportsAfterPluginGone,
  nodeScalar, quantityValue, servedByDevicePlugin,
} from "./extended_resource_rule.mjs";

const node = (allocatable, capacity = allocatable) => ({ status: { capacity, allocatable } });
const ON = { DRAExtendedResource: true };
const OFF = { DRAExtendedResource: false };
const MIN = 60 * 1000;
let upstream = 0;

// --- TestEnoughRequests (fit_test.go) ----------------------------------------------------------

{
  const extendedResourceA = "example.com/aaa";
  const extendedResourceB = "example.com/bbb";
  const extendedResourceDRA = "extended.resource.dra.io/something";
  const classes = [{ metadata: { name: "device-class-name" }, spec: { extendedResourceName: extendedResourceDRA } }];
  const fitNode = node({ cpu: "10m", memory: "20", pods: "32", [extendedResourceA]: "5", "ephemeral-storage": "20", "hugepages-2Mi": "5" });
  // Filter's status from the InsufficientResource list (fit.go Filter).
  const statusOf = (r) => (r.fits ? null : r.insufficient.some((i) => i.unresolvable) ? "UnschedulableAndUnresolvable" : "Unschedulable");
  const insufficient = (name) => [{ resourceName: name, reason: `Insufficient ${name}`, requested: 1, used: 0, capacity: 0, unresolvable: true }];
  const cases = [
    { name: "extended resource backed by device plugin", gate: true, requests: { [extendedResourceA]: 1 }, want: [] },
    { name: "extended resource backed by DRA", gate: true, requests: { [extendedResourceDRA]: 1 }, want: [] },
    { name: "extended resource backed by DRA, nil draManager", gate: true, nilDRAManager: true, requests: { [extendedResourceA]: 1 }, want: [] },
    { name: "extended resource backed by DRA not enabled", gate: false, requests: { [extendedResourceDRA]: 1 },
      want: insufficient(extendedResourceDRA), status: "UnschedulableAndUnresolvable" },
    { name: "extended resource NOT backed by DRA", gate: true, requests: { [extendedResourceB]: 1 },
      want: insufficient(extendedResourceB), status: "UnschedulableAndUnresolvable" },
    { name: "extended resource was backed by Device Plugin (Allocatable: 0)", gate: true, requests: { [extendedResourceDRA]: 1 },
      used: { [extendedResourceDRA]: 0 }, want: [] },
    { name: "extended resource was backed by Device Plugin (Allocatable: 0), global cache", gate: true, requests: { [extendedResourceA]: 1 },
      used: { [extendedResourceA]: 0 }, want: [] },
  ];
  for (const tc of cases) {
    upstream++;
    for (const release of RELEASES) {
      check(`TestEnoughRequests/${tc.name} @${release}`, () => {
        const gates = { DRAExtendedResource: tc.gate };
        if (gateDefault(release).locked && tc.gate !== gateDefault(release).DRAExtendedResource) {
          assert.throws(() => fitsRequest(release, fitNode, tc.requests, classes, gates), /locked to true/);
          return;
        }
        const got = fitsRequest(release, fitNode, tc.requests, classes, gates, { used: tc.used ?? {}, draManager: !tc.nilDRAManager });
        assert.deepEqual(got.insufficient, tc.want);
        assert.equal(statusOf(got), tc.status ?? null);
      });
    }
  }
}

// --- TestPlugin (dynamicresources_test.go), the extended-resource cases -------------------------

const extendedResourceName = "example.com/gpu";
const extendedResourceName2 = "example.com/gpu2";
const implicitExtendedResourceName = "deviceclass.resource.kubernetes.io/my-resource-class";
const deviceClass = { metadata: { name: "my-resource-class" }, spec: {} };
const deviceClassWithExtendResourceName = { metadata: { name: "my-resource-class" }, spec: { extendedResourceName } };
const deviceClassWithExtendResourceName2 = { metadata: { name: "my-resource-class2" }, spec: { extendedResourceName: extendedResourceName2 } };
const workerNode = node({});
const workerNodeWithExtendedResource = node({ [extendedResourceName]: "1" });
const workerNodeWithExtendedResourceZeroAllocatable = node({ [extendedResourceName]: "0" });
const workerNodeSlice = 1; // devices on the node (one slice, "instance-1")
const largeWorkerNodeSlice = 4;

{
  // want: "no-claim" (every phase succeeds, no claim), {claim: [names]}, "prefilter-skip",
  // "cannot-allocate" (Filter: `cannot allocate all claims`), "unschedulable" (not in upstream).
  const cases = [
    { name: "extended-resource-name-with-node-resource", node: workerNodeWithExtendedResource,
      requests: { [extendedResourceName]: 1 }, classes: [deviceClassWithExtendResourceName], want: "no-claim" },
    { name: "extended-resource-one-device-plugin-one-dra", node: workerNodeWithExtendedResource,
      requests: { [extendedResourceName]: 1, [extendedResourceName2]: 1 },
      classes: [deviceClassWithExtendResourceName, deviceClassWithExtendResourceName2], devices: workerNodeSlice,
      want: { claim: [extendedResourceName2] } },
    { name: "extended-resource-name-with-zero-allocatable", node: workerNodeWithExtendedResourceZeroAllocatable,
      requests: { [extendedResourceName]: 1 }, classes: [deviceClassWithExtendResourceName], devices: workerNodeSlice,
      want: { claim: [extendedResourceName] }, since: "1.35",
      // 1.34: the key is there, so the device plugin's; NodeResourcesFit: Insufficient.
      before: "unschedulable" },
    { name: "non-DRA-extended-resource-name-with-zero-allocatable", node: workerNodeWithExtendedResourceZeroAllocatable,
      requests: { [extendedResourceName]: 1 }, classes: [deviceClass], devices: workerNodeSlice, want: "prefilter-skip" },
    { name: "extended-resource-name-no-resource", node: workerNode,
      requests: { [extendedResourceName]: 1 }, classes: [deviceClassWithExtendResourceName], devices: 0, want: "cannot-allocate" },
    { name: "extended-resource-name-with-resources", node: workerNode,
      requests: { [extendedResourceName]: 1 }, classes: [deviceClassWithExtendResourceName], devices: workerNodeSlice,
      want: { claim: [extendedResourceName] } },
    { name: "implicit-extended-resource-name-with-resources", node: workerNode,
      requests: { [implicitExtendedResourceName]: 1, [extendedResourceName]: 2 }, classes: [deviceClassWithExtendResourceName],
      devices: largeWorkerNodeSlice, want: { claim: [implicitExtendedResourceName, extendedResourceName] }, since: "1.35",
      // 1.34 (ported code, not an upstream case): the implicit name is no extended resource
      // to v1helper and the class maps only its explicit name: NodeResourcesFit: Insufficient.
      before: "unschedulable" },
  ];
  const outcome = (r) => {
    if (r.dra.status === "skip") return "prefilter-skip";
    if (r.dra.allocation) return "cannot-allocate";
    if (!r.schedulable) return "unschedulable";
    return r.dra.dra.length === 0 ? "no-claim" : { claim: [...r.dra.dra].sort() };
  };
  for (const tc of cases) {
    upstream++;
    for (const release of RELEASES) {
      const minor = Number(release.split(".")[1]);
      const before = tc.since && minor < Number(tc.since.split(".")[1]);
      check(`TestPlugin/${tc.name} @${release}${before ? " (1.34 code, not upstream's case)" : ""}`, () => {
        const r = draServesExtendedResource(release, tc.node, tc.classes, undefined, ON, { requests: tc.requests, devices: tc.devices });
        const want = before ? tc.before : tc.want;
        const w = typeof want === "object" ? { claim: [...want.claim].sort() } : want;
        assert.deepEqual(outcome(r), w);
        if (w === "prefilter-skip") {
          // Upstream stops at PreFilter Skip; NodeResourcesFit then refuses the node (key at 0).
          assert.equal(r.fit.fits, false);
        }
      });
    }
  }
}

// --- our own cases: the stale node-status entry -----------------------------------------------

const HCA = "rdma/hca_shared_devices_a";
const ourClass = { metadata: { name: "rdma-hca-shared-devices-a" }, spec: { extendedResourceName: HCA } };
const staleInGrace = node({ [HCA]: "0" }, { [HCA]: "8" }); // plugin gone < 5 min: capacity N, allocatable 0
const staleForever = node({ [HCA]: "0" }, { [HCA]: "0" }); // after the grace period: 0 / 0
const absent = node({ cpu: "8" });
const live = node({ [HCA]: "8" });
const releasesWithPatches = ["1.34.0", "1.34.9", "1.35.0", "1.35", "1.36", "1.37"];

for (const [label, n] of [["capacity 8, allocatable 0 (grace period)", staleInGrace], ["capacity 0, allocatable 0 (after it)", staleForever]]) {
  for (const release of releasesWithPatches) {
    check(`stale entry, ${label} @${release}, gate on`, () => {
      const r = draServesExtendedResource(release, n, [ourClass], HCA, ON, { devices: 1 });
      const fixed = !release.startsWith("1.34");
      assert.equal(servedByDevicePlugin(release, n, HCA, ON), !fixed);
      assert.equal(r.servedBy, fixed ? "dra" : null);
      assert.equal(r.schedulable, fixed);
      if (!fixed) {
        assert.deepEqual(r.fit.insufficient.map((i) => [i.reason, i.unresolvable]), [[`Insufficient ${HCA}`, true]]);
        assert.deepEqual(r.dra.devicePlugin, [HCA]); // filterExtendedResources: "node provides the resource via device plugin"
      }
    });
  }
}

for (const release of ["1.34.0", "1.35"]) {
  check(`stale entry @${release} with the gate at its default (alpha, off): never DRA`, () => {
    const r = draServesExtendedResource(release, staleForever, [ourClass], HCA, {}, { devices: 1 });
    assert.equal(r.servedBy, null);
    assert.equal(r.dra.status, "skip");
    assert.equal(servedByDevicePlugin(release, staleForever, HCA, {}), true);
  });
}
for (const release of ["1.36", "1.37"]) {
  check(`stale entry @${release} with the gate at its default (on): DRA`, () => {
    assert.equal(draServesExtendedResource(release, staleForever, [ourClass], HCA, {}, { devices: 1 }).servedBy, "dra");
  });
}

for (const release of releasesWithPatches) {
  check(`entry absent @${release}: DRA (no device plugin ever registered, or removed by the operator)`, () => {
    assert.equal(servedByDevicePlugin(release, absent, HCA, ON), false);
    assert.equal(draServesExtendedResource(release, absent, [ourClass], HCA, ON, { devices: 1 }).servedBy, "dra");
  });
  check(`allocatable > 0 @${release}: the device plugin, the class notwithstanding`, () => {
    assert.equal(servedByDevicePlugin(release, live, HCA, ON), true);
    const r = draServesExtendedResource(release, live, [ourClass], HCA, ON, { devices: 1 });
    assert.equal(r.servedBy, "device-plugin");
    assert.deepEqual(r.dra.dra, []);
  });
  check(`allocatable > 0 but all used @${release}: Insufficient, not DRA`, () => {
    const r = draServesExtendedResource(release, live, [ourClass], HCA, ON, { used: { [HCA]: 8 }, devices: 1 });
    assert.equal(r.schedulable, false);
    assert.deepEqual(r.fit.insufficient.map((i) => [i.reason, i.unresolvable]), [[`Insufficient ${HCA}`, false]]);
  });
  check(`no class for the name @${release}: a stale entry is just Insufficient`, () => {
    const r = draServesExtendedResource(release, staleForever, [], HCA, ON);
    assert.equal(r.dra.status, "skip");
    assert.equal(r.schedulable, false);
  });
}

// kubelet admission of a pod placed on the stale node.
check("kubelet @1.34: a pod on the stale node is refused (OutOf<name>), even with nodeName set", () => {
  assert.deepEqual(kubeletAdmits("1.34.9", staleForever, HCA, [ourClass], ON).admit, false);
  assert.equal(kubeletAdmits("1.34.9", staleForever, HCA, [ourClass], ON).reason, `OutOf${HCA}`);
});
check("kubelet @1.35: admitted (Fits without a DRA manager delegates allocatable 0)", () => {
  assert.equal(kubeletAdmits("1.35", staleForever, HCA, [ourClass], ON).admit, true);
});
for (const release of ["1.36", "1.37"]) {
  check(`kubelet @${release}: admitted when the scheduler mapped the request (#135725), refused otherwise`, () => {
    assert.deepEqual(kubeletAdmits(release, staleForever, HCA, [ourClass], ON, { mappedInPodStatus: true }), { admit: true, removed: true });
    assert.equal(kubeletAdmits(release, staleForever, HCA, [ourClass], ON).admit, false);
  });
}
for (const release of RELEASES) {
  check(`kubelet @${release}: an absent name is dropped from the requests (cluster-level resources)`, () => {
    assert.deepEqual(kubeletAdmits(release, absent, HCA, [ourClass], ON), { admit: true, removed: true });
  });
}

// What the kubelet writes after the plugin went (devicemanager + nodestatus setters).
for (const release of RELEASES) {
  check(`kubelet node status after the plugin went @${release}`, () => {
    const at = (ms, extra = {}) => kubeletReportsAfterPluginGone(release, { devices: 8, elapsedMs: ms, ...extra });
    assert.deepEqual(at(0), { capacity: "8", allocatable: "0", deviceManagerKnows: true });
    assert.deepEqual(at(5 * MIN), { capacity: "8", allocatable: "0", deviceManagerKnows: true }); // "> 5 min", not ">="
    assert.deepEqual(at(5 * MIN + 1), { capacity: "0", allocatable: "0", deviceManagerKnows: false });
    assert.deepEqual(at(365 * 24 * 60 * MIN), { capacity: "0", allocatable: "0", deviceManagerKnows: false }); // never deleted
    // The operator removes the entry: for good after the grace period, put back before it.
    assert.deepEqual(at(24 * 60 * MIN, { removedByOperatorAtMs: 6 * MIN }), { capacity: null, allocatable: null, deviceManagerKnows: false });
    assert.deepEqual(at(3 * MIN, { removedByOperatorAtMs: 2 * MIN }), { capacity: "8", allocatable: "0", deviceManagerKnows: true });
    assert.deepEqual(at(24 * 60 * MIN, { removedByOperatorAtMs: 2 * MIN }), { capacity: "0", allocatable: "0", deviceManagerKnows: false });
    // A kubelet restart inside the grace period restarts it, with no devices.
    assert.deepEqual(at(7 * MIN, { kubeletRestartAtMs: 3 * MIN }), { capacity: "0", allocatable: "0", deviceManagerKnows: true });
    assert.deepEqual(at(24 * 60 * MIN, { kubeletRestartAtMs: 3 * MIN, removedByOperatorAtMs: 7 * MIN }), { capacity: "0", allocatable: "0", deviceManagerKnows: false });
    assert.deepEqual(at(24 * 60 * MIN, { kubeletRestartAtMs: 3 * MIN, removedByOperatorAtMs: 9 * MIN }), { capacity: null, allocatable: null, deviceManagerKnows: false });
  });
}
check("1.34 after the operator's PATCH (entry absent): DRA serves the name", () => {
  const after = kubeletReportsAfterPluginGone("1.34.0", { devices: 8, elapsedMs: 60 * MIN, removedByOperatorAtMs: 10 * MIN });
  const patched = node(after.allocatable === null ? {} : { [HCA]: after.allocatable });
  assert.equal(draServesExtendedResource("1.34.0", patched, [ourClass], HCA, ON, { devices: 1 }).servedBy, "dra");
});

// --- the pieces ---------------------------------------------------------------------------------

check("#133784 is in 1.35.0 and later, in no 1.34 patch release", () => {
  const c = CHANGES.allocatableZeroIsNotDevicePlugin;
  assert.equal(c.pr, 133784);
  for (const r of ["1.34", "1.34.0", "1.34.1", "1.34.9"]) assert.equal(hasChange(r, c), false, r);
  for (const r of ["1.35", "1.35.0", "1.35.6", "1.36", "1.37"]) assert.equal(hasChange(r, c), true, r);
});
check("DRAExtendedResource: alpha off 1.34/1.35, beta on 1.36, GA locked on 1.37", () => {
  assert.deepEqual(RELEASES.map((r) => gateDefault(r)), [
    { DRAExtendedResource: false, locked: false }, { DRAExtendedResource: false, locked: false },
    { DRAExtendedResource: true, locked: false }, { DRAExtendedResource: true, locked: true },
  ]);
  assert.throws(() => servedByDevicePlugin("1.37", staleForever, HCA, OFF), /cannot set feature gate DRAExtendedResource to false, feature is locked to true/);
});
check("NodeInfo: a key at 0 is present, a missing key is not", () => {
  assert.deepEqual(nodeScalar(staleForever, HCA), { present: true, value: 0 });
  assert.deepEqual(nodeScalar(absent, HCA), { present: false, value: 0 });
  assert.deepEqual([quantityValue("0"), quantityValue("8"), quantityValue("1k"), quantityValue("500m"), quantityValue("2Ki")], [0, 8, 1000, 1, 2048]);
});
check("names: extended (v1helper) and DRA-extended (implicit prefix, 1.35+)", () => {
  assert.equal(isExtendedResourceName(HCA), true);
  assert.equal(isExtendedResourceName("cpu"), false);
  assert.equal(isExtendedResourceName("requests.example.com/x"), false);
  assert.equal(isExtendedResourceName(implicitExtendedResourceName), false);
  assert.equal(isDRAExtendedResourceName("1.34", implicitExtendedResourceName), false);
  assert.equal(isDRAExtendedResourceName("1.35", implicitExtendedResourceName), true);
});
check("class choice: 1.34 mapping vs 1.35+ cache (newer wins, name breaks ties)", () => {
  const older = { metadata: { name: "b-old", creationTimestamp: "2026-01-01T00:00:00Z" }, spec: { extendedResourceName: HCA } };
  const newer = { metadata: { name: "a-new", creationTimestamp: "2026-02-01T00:00:00Z" }, spec: { extendedResourceName: HCA } };
  const twin = { metadata: { name: "a-twin", creationTimestamp: "2026-01-01T00:00:00Z" }, spec: { extendedResourceName: HCA } };
  assert.equal(deviceClassFor("1.34", [newer, older], HCA).metadata.name, "b-old"); // lister order
  assert.equal(deviceClassFor("1.36", [newer, older], HCA).metadata.name, "a-new");
  assert.equal(deviceClassFor("1.36", [older, twin], HCA).metadata.name, "a-twin");
  assert.equal(deviceClassFor("1.34", [deviceClassWithExtendResourceName], implicitExtendedResourceName), null);
  assert.equal(deviceClassFor("1.35", [deviceClassWithExtendResourceName], implicitExtendedResourceName).metadata.name, "my-resource-class");
});

console.log(`(${upstream} upstream cases transcribed)`);
finish("extended resource rule");
