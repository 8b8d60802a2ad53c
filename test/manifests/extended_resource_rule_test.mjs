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
//
// The operator's way out on 1.34 (docs/migrating.md, "Moving a pool to DRA without touching a
// pod") is a JSON patch of the node's status; the fake kube-apiserver models it (nodes/status,
// json_patch.mjs, node_status.mjs) and answers the scheduler's verdict (admin POST
// /schedule-extended, scheduleExtendedResource here). Upstream cases for those pieces:
//  - TestJSONPatch (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest_test.go): all four
//    cases, against the JSON of its example Pod (name podA, finalizers [foo]). Its patcher has
//    an empty validationDirective, which skips the strict decoding of the operations as
//    fieldValidation=Ignore does; the server's default (Warn) prefixes "error decoding patch: ".
//  - gopkg.in/evanphx/json-patch.v4 patch_test.go (the library kube-apiserver vendors; the
//    stored copy of its repository's root package): TestAllTest, all ten cases with their exact
//    messages; TestAllCases' Cases, MutationTestCases and BadCases, all of them (the two that
//    need AccumulatedCopySizeLimit run with upstream's limit of 100); TestAdd's four cases with
//    negative indices allowed (kube-apiserver never turns them off); TestEquality.
//  - TestValidateNodeUpdate (pkg/apis/core/validation/validation_test.go, the stored copy, an
//    older one of the ExternalID era): its cases that change status.capacity, allocatable or
//    addresses, or only metadata a status write may change (valid-extended-resources,
//    invalid-fractional-extended-capacity, invalid-fractional-extended-allocatable, ...),
//    through ValidateNodeUpdate as node_status.mjs ports it.
// Then the fake itself, on 1.34 and 1.35: the node as the 1.34 kubelet leaves it after the
// device plugin went, the scheduler's verdict, the operator's patch and upstream's refusals.
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { check, finish } from "./check.mjs";
import {
  CHANGES, RELEASES, deviceClassFor, draServesExtendedResource, fitsRequest, gateDefault, hasChange,
  isDRAExtendedResourceName, isExtendedResourceName, kubeletAdmits, kubeletReportsAfterPluginGone,
  nodeScalar, quantityValue, scheduleExtendedResource, servedByDevicePlugin,
} from "./extended_resource_rule.mjs";
import { GATE_HISTORY, LOCKED, gateDefaults } from "./kube_release.mjs";
import { GENERIC_UNPROCESSABLE, JSONPatchDecodeError, JSONPatchError, applyFailedStatus, applyPatch, decodePatch } from "./json_patch.mjs";
import { adminNodeStatus, decodeNodeStatus, validateNodeUpdate } from "./node_status.mjs";
import { admin, adminDelete, apiRequest, startServer, stopServer } from "./test_harness.mjs";

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

check("DRAExtendedResource in the fake's gate table (kube_release.mjs) agrees with gateDefault here", () => {
  assert.deepEqual(GATE_HISTORY.DRAExtendedResource, [[34, false], [36, true], [37, true]]);
  assert.equal(LOCKED.DRAExtendedResource, 37);
  for (const r of RELEASES) assert.equal(gateDefaults(r).DRAExtendedResource, gateDefault(r).DRAExtendedResource, r);
});

// --- scheduleExtendedResource: the fake's admin POST /schedule-extended -----------------------

for (const release of ["1.34", "1.35", "1.36", "1.37"]) {
  check(`scheduleExtendedResource @${release}, gate on: stale 0/0 entry, absent entry, live device plugin, too few devices`, () => {
    const stale = scheduleExtendedResource(release, staleForever, [ourClass], HCA, 1, ON);
    if (release === "1.34") assert.deepEqual(stale, { servedBy: "none", reason: `Insufficient ${HCA}` });
    else assert.deepEqual([stale.servedBy, stale.deviceClass], ["dra", ourClass.metadata.name]);
    assert.equal(scheduleExtendedResource(release, absent, [ourClass], HCA, 1, ON).servedBy, "dra");
    assert.equal(scheduleExtendedResource(release, live, [ourClass], HCA, 2, ON).servedBy, "devicePlugin");
    assert.deepEqual(scheduleExtendedResource(release, live, [ourClass], HCA, 9, ON), { servedBy: "none", reason: `Insufficient ${HCA}` });
    assert.deepEqual(scheduleExtendedResource(release, absent, [ourClass], HCA, 2, ON, { devices: 1 }), { servedBy: "none", reason: "cannot allocate all claims" });
    assert.deepEqual(scheduleExtendedResource(release, absent, [], HCA, 1, ON), { servedBy: "none", reason: `Insufficient ${HCA}` });
  });
}
check("scheduleExtendedResource @1.35 with the gate at its default (off): the stale node is Insufficient", () => {
  assert.deepEqual(scheduleExtendedResource("1.35", staleForever, [ourClass], HCA, 1, {}), { servedBy: "none", reason: `Insufficient ${HCA}` });
});

// --- upstream: TestJSONPatch (apiserver handlers rest_test.go) ---------------------------------

{
  const pod = { kind: "Pod", apiVersion: "example.apiserver.k8s.io/v1", metadata: { name: "podA", finalizers: ["foo"] }, spec: {}, status: {} };
  const cases = [
    { name: "valid", patch: '[{"op": "test", "value": "podA", "path": "/metadata/name"}]' },
    { name: "invalid-syntax", patch: "invalid json patch", expectedError: "invalid character 'i' looking for beginning of value", expectedErrorType: "BadRequest" },
    { name: "invalid-semantics", patch: '[{"op": "test", "value": "podA", "path": "/invalid/path"}]',
      expectedError: "the server rejected our request due to an error in our request", expectedErrorType: "Invalid" },
    { name: "valid-negative-index-patch", patch: '[{"op": "test", "value": "foo", "path": "/metadata/finalizers/-1"}]' },
  ];
  // applyJSPatch's error as the handler answers it: {message, reason}, or null.
  const applyJSPatch = (patch, validation) => {
    try {
      applyPatch(pod, decodePatch(patch, validation));
      return null;
    } catch (e) {
      if (e instanceof JSONPatchDecodeError) return { message: e.message, reason: e.reason };
      if (e instanceof JSONPatchError) return { message: applyFailedStatus().message, reason: applyFailedStatus().reason };
      throw e;
    }
  };
  for (const tc of cases) {
    upstream++;
    check(`TestJSONPatch/${tc.name}`, () => {
      for (const validation of ["Ignore", ""]) {
        const err = applyJSPatch(tc.patch, validation);
        if (!tc.expectedError) {
          assert.equal(err, null, validation);
          continue;
        }
        assert.ok(err && err.message.includes(tc.expectedError), `${validation}: ${err?.message}`);
        assert.equal(err.reason, tc.expectedErrorType, validation);
      }
    });
  }
  check("TestJSONPatch/invalid-syntax with the server's default fieldValidation: the strict decoding's prefix", () => {
    assert.equal(applyJSPatch("invalid json patch", "").message, "error decoding patch: invalid character 'i' looking for beginning of value");
    assert.equal(applyJSPatch("invalid json patch", "Ignore").message, "invalid character 'i' looking for beginning of value");
  });
}

// --- upstream: evanphx/json-patch (v4) patch_test.go -----------------------------------------

{
  const apply = (doc, patch, opts) => applyPatch(JSON.parse(doc), decodePatch(patch, "Ignore"), opts).doc;
  const A = (n) => "A".repeat(n);
  // TestAllTest: TestCases {doc, patch, result, failedPath}
  const testCases = [
    ['{ "baz": "qux", "foo": [ "a", 2, "c" ] }', '[ { "op": "test", "path": "/baz", "value": "qux" }, { "op": "test", "path": "/foo/1", "value": 2 } ]', true, ""],
    ['{ "baz": "qux" }', '[ { "op": "test", "path": "/baz", "value": "bar" } ]', false, "/baz"],
    ['{ "baz": "qux", "foo": ["a", 2, "c"] }', '[ { "op": "test", "path": "/baz", "value": "qux" }, { "op": "test", "path": "/foo/1", "value": "c" } ]', false, "/foo/1"],
    ['{ "baz": "qux" }', '[ { "op": "test", "path": "/foo", "value": 42 } ]', false, "/foo"],
    ['{ "baz": "qux" }', '[ { "op": "test", "path": "/foo", "value": null } ]', true, ""],
    ['{ "foo": null }', '[ { "op": "test", "path": "/foo", "value": null } ]', true, ""],
    ['{ "foo": {} }', '[ { "op": "test", "path": "/foo", "value": null } ]', false, "/foo"],
    ['{ "foo": [] }', '[ { "op": "test", "path": "/foo", "value": null } ]', false, "/foo"],
    ['{ "baz/foo": "qux" }', '[ { "op": "test", "path": "/baz~1foo", "value": "qux"} ]', true, ""],
    ['{ "foo": [] }', '[ { "op": "test", "path": "/foo"} ]', false, "/foo"],
  ];
  testCases.forEach(([doc, patch, result, failedPath], i) => {
    upstream++;
    check(`json-patch TestAllTest[${i}] ${result ? "passes" : `fails: testing value ${failedPath} failed: test failed`}`, () => {
      if (result) return void apply(doc, patch);
      assert.throws(() => apply(doc, patch), (e) => e instanceof JSONPatchError && e.op === "test" &&
        e.message === `testing value ${failedPath} failed: test failed`);
    });
  });
  // TestAllCases: Cases {doc, patch, result} (compared as decoded JSON, as compareJSON does)
  const cases = [
    ['{ "foo": "bar"}', '[ { "op": "add", "path": "/baz", "value": "qux" } ]', '{ "baz": "qux", "foo": "bar" }'],
    ['{ "foo": [ "bar", "baz" ] }', '[ { "op": "add", "path": "/foo/1", "value": "qux" } ]', '{ "foo": [ "bar", "qux", "baz" ] }'],
    ['{ "foo": [ "bar", "baz" ] }', '[ { "op": "add", "path": "/foo/-1", "value": "qux" } ]', '{ "foo": [ "bar", "baz", "qux" ] }'],
    ['{ "baz": "qux", "foo": "bar" }', '[ { "op": "remove", "path": "/baz" } ]', '{ "foo": "bar" }'],
    ['{ "foo": [ "bar", "qux", "baz" ] }', '[ { "op": "remove", "path": "/foo/1" } ]', '{ "foo": [ "bar", "baz" ] }'],
    ['{ "baz": "qux", "foo": "bar" }', '[ { "op": "replace", "path": "/baz", "value": "boo" } ]', '{ "baz": "boo", "foo": "bar" }'],
    ['{ "foo": { "bar": "baz", "waldo": "fred" }, "qux": { "corge": "grault" } }', '[ { "op": "move", "from": "/foo/waldo", "path": "/qux/thud" } ]',
      '{ "foo": { "bar": "baz" }, "qux": { "corge": "grault", "thud": "fred" } }'],
    ['{ "foo": [ "all", "grass", "cows", "eat" ] }', '[ { "op": "move", "from": "/foo/1", "path": "/foo/3" } ]', '{ "foo": [ "all", "cows", "eat", "grass" ] }'],
    ['{ "foo": [ "all", "grass", "cows", "eat" ] }', '[ { "op": "move", "from": "/foo/1", "path": "/foo/2" } ]', '{ "foo": [ "all", "cows", "grass", "eat" ] }'],
    ['{ "foo": "bar" }', '[ { "op": "add", "path": "/child", "value": { "grandchild": { } } } ]', '{ "foo": "bar", "child": { "grandchild": { } } }'],
    ['{ "foo": ["bar"] }', '[ { "op": "add", "path": "/foo/-", "value": ["abc", "def"] } ]', '{ "foo": ["bar", ["abc", "def"]] }'],
    ['{ "foo": "bar", "qux": { "baz": 1, "bar": null } }', '[ { "op": "remove", "path": "/qux/bar" } ]', '{ "foo": "bar", "qux": { "baz": 1 } }'],
    ['{ "foo": "bar" }', '[ { "op": "add", "path": "/baz", "value": null } ]', '{ "baz": null, "foo": "bar" }'],
    ['{ "foo": ["bar"]}', '[ { "op": "replace", "path": "/foo/0", "value": "baz"}]', '{ "foo": ["baz"]}'],
    ['{ "foo": ["bar","baz"]}', '[ { "op": "replace", "path": "/foo/0", "value": "bum"}]', '{ "foo": ["bum","baz"]}'],
    ['{ "foo": ["bar","qux","baz"]}', '[ { "op": "replace", "path": "/foo/1", "value": "bum"}]', '{ "foo": ["bar", "bum","baz"]}'],
    ['[ {"foo": ["bar","qux","baz"]}]', '[ { "op": "replace", "path": "/0/foo/0", "value": "bum"}]', '[ {"foo": ["bum","qux","baz"]}]'],
    ['[ {"foo": ["bar","qux","baz"], "bar": ["qux","baz"]}]', '[ { "op": "copy", "from": "/0/foo/0", "path": "/0/bar/0"}]',
      '[ {"foo": ["bar","qux","baz"], "bar": ["bar", "baz"]}]'],
    ['[ {"foo": ["bar","qux","baz"], "bar": ["qux","baz"]}]', '[ { "op": "copy", "from": "/0/foo/0", "path": "/0/bar"}]',
      '[ {"foo": ["bar","qux","baz"], "bar": ["bar", "qux", "baz"]}]'],
    ['[ { "foo": {"bar": ["qux","baz"]}, "baz": {"qux": "bum"}}]', '[ { "op": "copy", "from": "/0/foo/bar", "path": "/0/baz/bar"}]',
      '[ { "baz": {"bar": ["qux","baz"], "qux":"bum"}, "foo": {"bar": ["qux","baz"]}}]'],
    ['{ "foo": ["bar"]}', '[{"op": "copy", "path": "/foo/0", "from": "/foo"}]', '{ "foo": [["bar"], "bar"]}'],
    ['{ "foo": ["bar","qux","baz"]}', '[ { "op": "remove", "path": "/foo/-2"}]', '{ "foo": ["bar", "baz"]}'],
    ['{ "foo": []}', '[ { "op": "add", "path": "/foo/-1", "value": "qux"}]', '{ "foo": ["qux"]}'],
    ['{ "bar": [{"baz": null}]}', '[ { "op": "replace", "path": "/bar/0/baz", "value": 1 } ]', '{ "bar": [{"baz": 1}]}'],
    ['{ "bar": [{"baz": 1}]}', '[ { "op": "replace", "path": "/bar/0/baz", "value": null } ]', '{ "bar": [{"baz": null}]}'],
    ['{ "bar": [null]}', '[ { "op": "replace", "path": "/bar/0", "value": 1 } ]', '{ "bar": [1]}'],
    ['{ "bar": [1]}', '[ { "op": "replace", "path": "/bar/0", "value": null } ]', '{ "bar": [null]}'],
    [`{ "foo": ["A", "${A(48)}"] }`, '[ { "op": "copy", "path": "/foo/-", "from": "/foo/1" }, { "op": "copy", "path": "/foo/-", "from": "/foo/1" }]',
      `{ "foo": ["A", "${A(48)}", "${A(48)}", "${A(48)}"] }`],
  ];
  upstream++;
  // compareJSON decodes both sides into map[string]interface{}: for a document that is an array
  // both fail to decode and compare equal, so upstream checks only that those apply. (One of
  // them expects a copy into /0/bar/0 to replace; add inserts, as the next check shows.)
  check(`json-patch TestAllCases: its ${cases.length} Cases apply as upstream expects (AccumulatedCopySizeLimit 100)`, () => {
    for (const [doc, patch, result] of cases) {
      const out = apply(doc, patch, { copyLimit: 100 });
      if (!doc.trimStart().startsWith("[")) assert.deepEqual(out, JSON.parse(result), patch);
    }
  });
  check("json-patch: a copy to an array index inserts there (partialArray.add)", () => {
    assert.deepEqual(apply('[ {"foo": ["bar","qux","baz"], "bar": ["qux","baz"]}]', '[ { "op": "copy", "from": "/0/foo/0", "path": "/0/bar/0"}]'),
      [{ foo: ["bar", "qux", "baz"], bar: ["bar", "qux", "baz"] }]);
  });
  const mutations = [
    ['{ "foo": "bar", "qux": { "baz": 1, "bar": null } }', '[ { "op": "remove", "path": "/qux/bar" } ]'],
    ['{ "foo": "bar", "qux": { "baz": 1, "bar": null } }', '[ { "op": "replace", "path": "/qux/baz", "value": null } ]'],
  ];
  check("json-patch TestAllCases: MutationTestCases change the document", () => {
    for (const [doc, patch] of mutations) assert.notDeepEqual(apply(doc, patch), JSON.parse(doc), patch);
  });
  const badCases = [
    ['{ "foo": "bar" }', '[ { "op": "add", "path": "/baz/bat", "value": "qux" } ]', 'add operation does not apply: doc is missing path: "/baz/bat": missing value'],
    ['{ "a": { "b": { "d": 1 } } }', '[ { "op": "remove", "path": "/a/b/c" } ]', "error in remove for path: '/a/b/c': Unable to remove nonexistent key: c: missing value"],
    ['{ "a": { "b": { "d": 1 } } }', '[ { "op": "move", "from": "/a/b/c", "path": "/a/b/e" } ]', "error in move for path: 'c': Unable to remove nonexistent key: c: missing value"],
    ['{ "a": { "b": [1] } }', '[ { "op": "remove", "path": "/a/b/1" } ]', "error in remove for path: '/a/b/1': Unable to access invalid index: 1: invalid index referenced"],
    ['{ "a": { "b": [1] } }', '[ { "op": "move", "from": "/a/b/1", "path": "/a/b/2" } ]', "error in move for path: '1': Unable to access invalid index: 1: invalid index referenced"],
    ['{ "foo": "bar" }', '[ { "op": "add", "pathz": "/baz", "value": "qux" } ]', "add operation failed to decode path: missing value"],
    ['{ "foo": "bar" }', '[ { "op": "add", "path": "", "value": "qux" } ]', 'add operation does not apply: doc is missing path: "": missing value'],
    ['{ "foo": ["bar","baz"]}', '[ { "op": "replace", "path": "/foo/2", "value": "bum"}]', "replace operation does not apply: doc is missing key: /foo/2: missing value"],
    ['{ "foo": ["bar","baz"]}', '[ { "op": "add", "path": "/foo/-4", "value": "bum"}]', "error in add for path: '/foo/-4': Unable to access invalid index: -4: invalid index referenced"],
    ['{ "name":{ "foo": "bat", "qux": "bum"}}', '[ { "op": "replace", "path": "/foo/bar", "value":"baz"}]', "replace operation does not apply: doc is missing path: /foo/bar: missing value"],
    ['{ "foo": ["bar"]}', '[ {"op": "add", "path": "/foo/2", "value": "bum"}]', "error in add for path: '/foo/2': Unable to access invalid index: 2: invalid index referenced"],
    ['{ "foo": []}', '[ {"op": "remove", "path": "/foo/-"}]', `error in remove for path: '/foo/-': strconv.Atoi: parsing "-": invalid syntax`],
    ['{ "foo": []}', '[ {"op": "remove", "path": "/foo/-1"}]', "error in remove for path: '/foo/-1': Unable to access invalid index: -1: invalid index referenced"],
    ['{ "foo": ["bar"]}', '[ {"op": "remove", "path": "/foo/-2"}]', "error in remove for path: '/foo/-2': Unable to access invalid index: -2: invalid index referenced"],
    ["{}", '[ {"op":null,"path":""} ]', "Unexpected kind: unknown"],
    ["{}", '[ {"op":"add","path":null} ]', "add operation failed to decode path: missing value"],
    ["{}", '[ { "op": "copy", "from": null }]', "copy operation failed to decode from: operation, missing from field: missing value"],
    ['{ "foo": ["bar"]}', '[{"op": "copy", "path": "/foo/6666666666", "from": "/"}]', "error while adding value during copy: Unable to access invalid index: 6666666666: invalid index referenced"],
    ['{ "foo": ["bar"]}', '[{"op": "copy", "path": "/foo/2", "from": "/foo/0"}]', "error while adding value during copy: Unable to access invalid index: 2: invalid index referenced"],
    [`{ "foo": ["A", "${A(49)}"] }`, '[ { "op": "copy", "path": "/foo/-", "from": "/foo/1" }, { "op": "copy", "path": "/foo/-", "from": "/foo/1" }]',
      "Unable to complete the copy, the accumulated size increase of copy is 102, exceeding the limit 100"],
    ['{ "foo": [ "all", "grass", "cows", "eat" ] }', '[ { "op": "move", "from": "/foo/1", "path": "/foo/4" } ]', "error in move for path: '/foo/4': Unable to access invalid index: 4: invalid index referenced"],
  ];
  upstream++;
  check(`json-patch TestAllCases: its ${badCases.length} BadCases fail (the library's own texts, which kube-apiserver drops)`, () => {
    for (const [doc, patch, message] of badCases) {
      assert.throws(() => apply(doc, patch, { copyLimit: 100 }), (e) => e instanceof JSONPatchError && e.message === message, patch);
    }
  });
  upstream++;
  check("json-patch TestAdd: into an empty array at 0 and -1, not at 1 or -2", () => {
    for (const [key, err] of [["0", null], ["1", "Unable to access invalid index: 1: invalid index referenced"], ["-1", null],
      ["-2", "Unable to access invalid index: -2: invalid index referenced"]]) {
      const run = () => apply('{"a": []}', JSON.stringify([{ op: "add", path: `/a/${key}`, value: null }]));
      if (err === null) assert.deepEqual(run(), { a: [null] });
      else assert.throws(run, (e) => e.message === `error in add for path: '/a/${key}': ${err}`);
    }
  });
  upstream++;
  check("json-patch TestEquality: {foo: bar} and {foo: bar, baz: qux} differ, either way round", () => {
    assert.throws(() => apply('{"x": {"foo": "bar"}}', '[{"op": "test", "path": "/x", "value": {"foo": "bar", "baz": "qux"}}]'), JSONPatchError);
    assert.throws(() => apply('{"x": {"foo": "bar", "baz": "qux"}}', '[{"op": "test", "path": "/x", "value": {"foo": "bar"}}]'), JSONPatchError);
  });
  check("json-patch: the patched text keeps Go's order: the document and what the patch walked into sorted, the rest as it was", () => {
    const doc = { kind: "Node", apiVersion: "v1", metadata: { name: "n1", uid: "u" }, status: { capacity: { z: "1", a: "2" }, nodeInfo: { b: "", a: "" } } };
    const { text } = applyPatch(doc, decodePatch('[{"op": "remove", "path": "/status/capacity/z"}]'));
    assert.equal(text, '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","uid":"u"},"status":{"capacity":{"a":"2"},"nodeInfo":{"b":"","a":""}}}');
  });
  check("json-patch: a replace of a key an object lacks adds it (v4's partialDoc.get never fails)", () => {
    assert.deepEqual(apply('{"a": {}}', '[{"op": "replace", "path": "/a/b", "value": 1}]'), { a: { b: 1 } });
  });
  check("json-patch decoding: 400s as the handler words them, 413 past 10000 operations", () => {
    const msg = (text, v = "") => { try { decodePatch(text, v); return null; } catch (e) { return [e.code, e.message]; } };
    assert.deepEqual(msg('{"op": "add"}'), [400, "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"]);
    assert.deepEqual(msg('{"op": "add"}', "Ignore"), [400, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"]);
    assert.deepEqual(msg('[{"op": 5}]'), [400, "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string"]);
    assert.deepEqual(msg(JSON.stringify(Array(10001).fill({ op: "test", path: "/a" }))),
      [413, "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"]);
    assert.equal(msg("null"), null);
  });
}

// --- upstream: TestValidateNodeUpdate (pkg/apis/core/validation), the status cases --------------

{
  const q = (m) => Object.fromEntries(Object.entries(m));
  const node = (name, status = {}, labels) => ({ metadata: { name, resourceVersion: "1", ...(labels ? { labels } : {}) }, status });
  const cases = [
    { old: node("foo", { capacity: q({ cpu: "10000", memory: "100" }) }), node: node("foo", { capacity: q({ cpu: "100", memory: "10000" }) }), valid: true },
    { old: node("foo", { capacity: q({ cpu: "10000", memory: "100" }) }, { bar: "foo" }),
      node: node("foo", { capacity: q({ cpu: "100", memory: "10000" }) }, { bar: "fooobaz" }), valid: true },
    { old: node("foo"), node: node("foo", { addresses: [{ type: "ExternalIP", address: "1.1.1.1" }, { type: "ExternalIP", address: "1.1.1.1" }] }), valid: false },
    { old: node("foo"), node: node("foo", { addresses: [{ type: "ExternalIP", address: "1.1.1.1" }, { type: "InternalIP", address: "10.1.1.1" }] }), valid: true },
    { name: "valid-extended-resources", old: node("valid-extended-resources"),
      node: node("valid-extended-resources", { capacity: q({ cpu: "10", memory: "10G", "example.com/a": "5", "example.com/b": "10" }) }), valid: true },
    { name: "invalid-fractional-extended-capacity", old: node("invalid-fractional-extended-capacity"),
      node: node("invalid-fractional-extended-capacity", { capacity: q({ cpu: "10", memory: "10G", "example.com/a": "500m" }) }), valid: false },
    { name: "invalid-fractional-extended-allocatable", old: node("invalid-fractional-extended-allocatable"),
      node: node("invalid-fractional-extended-allocatable", { capacity: q({ cpu: "10", memory: "10G", "example.com/a": "5" }),
        allocatable: q({ cpu: "10", memory: "10G", "example.com/a": "4.5" }) }), valid: false },
  ];
  cases.forEach((tc, i) => {
    upstream++;
    check(`TestValidateNodeUpdate[${tc.name ?? i}] ${tc.valid ? "valid" : "invalid"}`, () => {
      const n = structuredClone(tc.node);
      const { quantities } = decodeNodeStatus(n);
      const errs = validateNodeUpdate(n, tc.old, quantities);
      assert.equal(errs.length === 0, tc.valid, errs.map(String).join("; "));
    });
  });
  check("ValidateNodeUpdate: the texts of a fraction of an extended resource and of a negative quantity", () => {
    const n = node("n1", { capacity: { "example.com/a": "4.5", cpu: "-1" } });
    const { quantities } = decodeNodeStatus(n);
    assert.deepEqual(validateNodeUpdate(n, node("n1"), quantities).map(String), [
      "status.capacity.cpu: Invalid value: \"-1\": must be greater than or equal to 0",
      "status.capacity.example.com/a: Invalid value: resource.Quantity{i:resource.int64Amount{value:45, scale:-1}, " +
        "d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"\", Format:\"DecimalSI\"}: must be an integer",
    ]);
  });
  check("ValidateNodeResources checks no resource name: any key is stored (names are checked on containers, quotas, limit ranges)", () => {
    assert.deepEqual(adminNodeStatus({ "Not A Name!": "1", "example.com/x": "1" }), { capacity: { "Not A Name!": "1", "example.com/x": "1" },
      allocatable: { "Not A Name!": "1", "example.com/x": "1" } });
  });
}

// --- the fake kube-apiserver: the stale node on 1.34 and 1.35, the operator's patch -------------

const RBAC_YAML = path.join(path.dirname(fileURLToPath(import.meta.url)), "../../images/components/dra/rbac.yaml");
const SA = "system:serviceaccount:kube-system:rdma-shared-dp";
const ESC = "rdma~1hca_shared_devices_a"; // the name as a JSON pointer token
const deviceClassObject = { apiVersion: "resource.k8s.io/v1", kind: "DeviceClass", metadata: { name: ourClass.metadata.name },
  spec: { extendedResourceName: HCA } };
// What the 1.34 kubelet reports for the name more than five minutes after the plugin went.
const gone = kubeletReportsAfterPluginGone("1.34", { devices: 8, elapsedMs: 6 * MIN });
const staleStatus = { name: "n1", capacity: { [HCA]: gone.capacity, cpu: "8" }, allocatable: { [HCA]: gone.allocatable, cpu: "7500m" } };
const nodeStatusPatch = (s, ops, { type = "application/json-patch+json", query = "" } = {}) =>
  apiRequest(s, "PATCH", `/api/v1/nodes/n1/status${query}`, typeof ops === "string" ? ops : JSON.stringify(ops), type);
const theFix = [{ op: "test", path: `/status/allocatable/${ESC}`, value: "0" },
  { op: "remove", path: `/status/capacity/${ESC}` }, { op: "remove", path: `/status/allocatable/${ESC}` }];
const GENERIC_422 = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: GENERIC_UNPROCESSABLE, reason: "Invalid", details: {}, code: 422 };

{
  const s = await startServer("1.34", "DRAExtendedResource=true", "fake-node-status-");
  try {
    const before = (await apiRequest(s, "GET", "/api/v1/nodes/n1")).body;
    await admin(s, "/deviceclasses", deviceClassObject);
    const set = await admin(s, "/node-status", staleStatus);
    const stored = (await admin(s, "/node-status?name=n1")).body;
    const verdict0 = (await admin(s, "/schedule-extended", { node: "n1", resource: HCA, requested: 1 })).body;
    check("fake 1.34: a node never posted is the synthetic one; /node-status stores the kubelet's 0/0 entry with a resourceVersion", () => {
      assert.deepEqual(gone, { capacity: "0", allocatable: "0", deviceManagerKnows: false });
      assert.deepEqual(Object.keys(before.metadata), ["name", "uid"]);
      assert.equal(set.code, 200, JSON.stringify(set.body));
      assert.deepEqual(stored.status.capacity, { cpu: "8", [HCA]: "0" });
      assert.deepEqual(stored.status.allocatable, { cpu: "7500m", [HCA]: "0" });
      assert.equal(stored.metadata.uid, before.metadata.uid);
      assert.ok(Number(stored.metadata.resourceVersion) > 0);
    });
    check("fake 1.34 (DRAExtendedResource on, a class naming the name): the stale node is not DRA's: Pending, Insufficient", () => {
      assert.deepEqual(verdict0, { servedBy: "none", reason: `Insufficient ${HCA}`, release: "1.34", DRAExtendedResource: true });
    });

    const testFails = await nodeStatusPatch(s, [{ op: "test", path: `/status/allocatable/${ESC}`, value: "4" }, ...theFix.slice(1)]);
    const removeMissing = await nodeStatusPatch(s, [{ op: "remove", path: "/status/capacity/rdma~1hca_shared_devices_b" }]);
    const afterRefusals = (await apiRequest(s, "GET", "/api/v1/nodes/n1")).body;
    const stats0 = (await admin(s, "/stats")).body;
    check("fake 1.34: a failing test op is upstream's 422 (reason Invalid, the generic message, details {}), nothing changed, " +
      "counted in stats.nodeStatusTestFailures and not in stats.invalid", () => {
      assert.equal(testFails.code, 422);
      assert.deepEqual(testFails.body, GENERIC_422);
      assert.deepEqual(afterRefusals, stored);
      assert.equal(stats0.nodeStatusTestFailures, 1);
      assert.ok(!stats0.invalid.some((m) => m.includes("testing value")), stats0.invalid.join("\n"));
    });
    check("fake 1.34: a remove of a missing path is the same 422, recorded in stats.invalid with the library's own text", () => {
      assert.equal(removeMissing.code, 422);
      assert.deepEqual(removeMissing.body, GENERIC_422);
      assert.ok(stats0.invalid.includes(`${GENERIC_UNPROCESSABLE} (nodes/n1/status json patch: error in remove for path: ` +
        "'/status/capacity/rdma~1hca_shared_devices_b': Unable to remove nonexistent key: rdma/hca_shared_devices_b: missing value)"), stats0.invalid.join("\n"));
      assert.equal(stats0.nodeStatusPatches, 0);
    });

    const fixed = await nodeStatusPatch(s, theFix);
    const got = (await apiRequest(s, "GET", "/api/v1/nodes/n1")).body;
    const gotStatus = (await apiRequest(s, "GET", "/api/v1/nodes/n1/status")).body;
    const verdict1 = (await admin(s, "/schedule-extended", { node: "n1", resource: HCA, requested: 1 })).body;
    const again = await nodeStatusPatch(s, []);
    const stats1 = (await admin(s, "/stats")).body;
    check("fake 1.34: the operator's patch [test allocatable == \"0\", remove both entries] is 200, the entries gone, the rest kept", () => {
      assert.equal(fixed.code, 200, JSON.stringify(fixed.body));
      assert.deepEqual(fixed.body.status.capacity, { cpu: "8" });
      assert.deepEqual(fixed.body.status.allocatable, { cpu: "7500m" });
      assert.ok(Number(fixed.body.metadata.resourceVersion) > Number(stored.metadata.resourceVersion));
      assert.deepEqual(got, fixed.body);
      assert.deepEqual(gotStatus, fixed.body);
      assert.equal(stats1.nodeStatusPatches, 2);
      assert.equal(again.body.metadata.resourceVersion, fixed.body.metadata.resourceVersion, "an empty patch writes nothing");
    });
    check("fake 1.34: after the patch the scheduler serves the name from DRA", () => {
      assert.equal(verdict1.servedBy, "dra", JSON.stringify(verdict1));
      assert.equal(verdict1.deviceClass, ourClass.metadata.name);
    });

    const cpu = (value) => [{ op: "replace", path: "/status/capacity/cpu", value }];
    const malformed = await nodeStatusPatch(s, cpu("8x"));
    const negative = await nodeStatusPatch(s, cpu("-1"));
    const fraction = await nodeStatusPatch(s, [{ op: "add", path: "/status/capacity/example.com~1x", value: "500m" }]);
    const unchanged = (await apiRequest(s, "GET", "/api/v1/nodes/n1")).body;
    check("fake 1.34: a quantity that does not parse is the decoding's 422 (` \"\" is invalid: patch: Invalid value: \"<patched JSON>\": ...`)", () => {
      assert.equal(malformed.code, 422);
      assert.equal(malformed.body.reason, "Invalid");
      assert.match(malformed.body.message, /^ "" is invalid: patch: Invalid value: "\{\\"apiVersion\\":\\"v1\\",\\"kind\\":\\"Node\\",\\"metadata\\":\{/);
      assert.ok(malformed.body.message.includes('\\"status\\":{\\"allocatable\\":{\\"cpu\\":\\"7500m\\"},\\"capacity\\":{\\"cpu\\":\\"8x\\"},\\"daemonEndpoints\\"'),
        malformed.body.message);
      assert.ok(malformed.body.message.endsWith("\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
      assert.equal(malformed.body.details.causes[0].field, "patch");
    });
    check("fake 1.34: a negative quantity is ValidateNodeUpdate's 422; an extended resource's fraction \"must be an integer\"; nothing stored", () => {
      assert.equal(negative.code, 422);
      assert.deepEqual(negative.body, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure",
        message: 'Node "n1" is invalid: status.capacity.cpu: Invalid value: "-1": must be greater than or equal to 0', reason: "Invalid",
        details: { name: "n1", kind: "Node", causes: [{ reason: "FieldValueInvalid", message: 'Invalid value: "-1": must be greater than or equal to 0',
          field: "status.capacity.cpu" }] }, code: 422 });
      assert.equal(fraction.code, 422);
      assert.equal(fraction.body.message, 'Node "n1" is invalid: status.capacity.example.com/x: Invalid value: resource.Quantity{i:resource.int64Amount{value:500, ' +
        'scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"500m", Format:"DecimalSI"}: must be an integer');
      assert.deepEqual(unchanged, fixed.body);
    });

    const merge = await nodeStatusPatch(s, { status: {} }, { type: "application/merge-patch+json" });
    const unknownType = await nodeStatusPatch(s, "x", { type: "text/plain" });
    const badSyntax = await nodeStatusPatch(s, "invalid json patch");
    const stale = await nodeStatusPatch(s, [{ op: "replace", path: "/metadata/resourceVersion", value: "1" }]);
    const renamed = await nodeStatusPatch(s, [{ op: "replace", path: "/metadata/name", value: "n2" }]);
    const forced = await nodeStatusPatch(s, [], { query: "?force=true" });
    const spec = await nodeStatusPatch(s, [{ op: "add", path: "/spec/unschedulable", value: true }, { op: "add", path: "/status/futureField", value: 1 },
      { op: "add", path: "/metadata/labels", value: { "example.com/moved": "dra" } }]);
    check("fake 1.34: other patch types 415, a body that is not JSON 400, a stale resourceVersion 409, a rename 400, force 422", () => {
      assert.deepEqual([merge.code, merge.body.reason], [415, "UnsupportedMediaType"]);
      assert.equal(unknownType.body.message, "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, " +
        "application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml");
      assert.deepEqual([badSyntax.code, badSyntax.body.reason, badSyntax.body.message],
        [400, "BadRequest", "error decoding patch: invalid character 'i' looking for beginning of value"]);
      assert.deepEqual([stale.code, stale.body.reason, stale.body.message], [409, "Conflict",
        'Operation cannot be fulfilled on nodes "n1": the object has been modified; please apply your changes to the latest version and try again']);
      assert.deepEqual([renamed.code, renamed.body.message], [400, "the name of the object (n2) does not match the name on the URL (n1)"]);
      assert.deepEqual([forced.code, forced.body.message], [422, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch']);
    });
    const unknownFields = (await admin(s, "/stats")).body.unknownFields;
    check("fake 1.34: the status strategy keeps the stored spec, drops an unknown field (stats.unknownFields), lets labels change", () => {
      assert.equal(spec.code, 200, JSON.stringify(spec.body));
      assert.equal(unknownFields["nodes /status/futureField"], 1);
      assert.deepEqual(spec.body.spec, {});
      assert.equal(spec.body.status.futureField, undefined);
      assert.deepEqual(spec.body.metadata.labels, { "example.com/moved": "dra" });
    });

    await admin(s, "/rbac", { file: RBAC_YAML, driver: "rdma.k8s-rdma-shared-dp.io", node: "n1" });
    const denied = await nodeStatusPatch(s, theFix);
    const read = await apiRequest(s, "GET", "/api/v1/nodes/n1");
    const forbidden = (await admin(s, "/stats")).body.forbidden;
    await adminDelete(s, "/rbac");
    const message = `nodes "n1" is forbidden: User "${SA}" cannot patch resource "nodes/status" in API group "" at the cluster scope`;
    check("fake /rbac with images/components/dra/rbac.yaml: the driver may GET its node, not PATCH nodes/status (403, kube-apiserver's Status)", () => {
      assert.equal(read.code, 200);
      assert.deepEqual(denied.body, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason: "Forbidden",
        details: { name: "n1", kind: "nodes" }, code: 403 });
      assert.ok(forbidden.includes(`patch nodes/status /n1: ${message}`), forbidden.join("\n"));
    });
  } finally {
    stopServer(s);
  }
}
{
  const s = await startServer("1.35", "DRAExtendedResource=true", "fake-node-status-");
  try {
    await admin(s, "/deviceclasses", deviceClassObject);
    await admin(s, "/node-status", staleStatus);
    const verdict = (await admin(s, "/schedule-extended", { node: "n1", resource: HCA, requested: 1 })).body;
    const live = await admin(s, "/node-status", { name: "n2", capacity: { [HCA]: "8" } });
    const onLive = (await admin(s, "/schedule-extended", { node: "n2", resource: HCA, requested: 1 })).body;
    const noNode = (await admin(s, "/schedule-extended", { node: "n9", resource: HCA, requested: 1 })).body;
    check("fake 1.35: the same stale node, unpatched, is served by DRA (#133784)", () => {
      assert.equal(verdict.servedBy, "dra", JSON.stringify(verdict));
      assert.equal(verdict.release, "1.35");
    });
    check("fake 1.35: a node whose plugin advertises the name is the device plugin's (allocatable defaulted from capacity)", () => {
      assert.deepEqual(live.body.status.allocatable, { [HCA]: "8" });
      assert.equal(onLive.servedBy, "devicePlugin");
      assert.equal(noNode.servedBy, "dra", "a node never posted has an empty status");
    });
  } finally {
    stopServer(s);
  }
}

console.log(`(${upstream} upstream cases transcribed)`);
finish("extended resource rule");
