// Tests of DRA admin access (KEP-5018, feature gate DRAAdminAccess) in the fakes: the gate's
// history in kube_release.mjs, the allocator's rules in dra_allocator.mjs, the claim and
// template strategies' rules in kube_release.mjs, and the fake kube-apiserver's admin API
// (fake_apiserver.mjs) end to end. Usage: node dra_admin_access_test.mjs (exit 0 when all pass).
//
// Upstream cases, transcribed by name:
//  - TestAllocator (k8s.io/dynamic-resource-allocation structured/internal/allocatortesting/
//    allocator_testing.go, shared by the stable, incubating and experimental allocators):
//    every case that sets adminAccess, 9. Each runs with the case's own features (an
//    unnamed feature is off, as in Go's Features{}).
//  - pkg/registry/resource/resourceclaim/strategy_test.go: the admin-access cases of
//    TestStrategyCreate (4), TestStrategyUpdate (5) and TestStatusStrategyUpdate (5);
//    pkg/registry/resource/resourceclaimtemplate/strategy_test.go: the admin-access cases of
//    TestClaimTemplateStrategyCreate (4), TestClaimTemplateStrategyUpdate (1) and
//    TestStrategyUpdate (5). Their namespaces are the tests' own: "default" (labelled
//    key=value) and "kube-system" (labelled for admin access); a lookup is recorded as the
//    fake clientset's Actions() are, and each case's `verify` is asserted (upstream's harness
//    skips it when validation fails; it is asserted here all the same).
// Adapted (and why): the update cases whose expected error is "field is immutable"
// (claim TestStrategyUpdate keep-fields-admin-access and admin-access-non-admin-namespace;
// template TestClaimTemplateStrategyUpdate adminaccess-update-not-allowed, TestStrategyUpdate
// keep-fields-admin-access and admin-access-non-admin-namespace): that error is
// ValidateResourceClaimUpdate's (ValidateResourceClaimTemplateUpdate's) spec immutability,
// which is not ported. What the ported admin rules decide is asserted: the field is kept,
// the spec differs from the stored one (what the immutability check refuses), and no
// namespace is looked up.
import assert from "node:assert/strict";
import { check, finish } from "./check.mjs";
import { allocateClaims } from "./dra_allocator.mjs";
import {
  DRA_ADMIN_NAMESPACE_LABEL_KEY, GATE_HISTORY, LOCKED, RELEASES, claimPrepareForCreate, claimPrepareForUpdate,
  claimStatusPrepareForUpdate, claimStatusValidateAdmin, claimTemplatePrepareForCreate, claimTemplatePrepareForUpdate,
  claimTemplateValidateAdmin, claimValidateAdmin, gateDefaults, lockedGateError,
} from "./kube_release.mjs";
import { admin, apiRequest, runServerToExit, startServer as startFake, stopServer } from "./test_harness.mjs";

const clone = structuredClone;

// ---------------------------------------------------------------------------------------
// The release table.
check("DRAAdminAccess: 1.32 alpha off, 1.34 beta on, 1.36 GA on and locked (every fake release: on)", () => {
  assert.deepEqual(GATE_HISTORY.DRAAdminAccess, [[32, false], [34, true], [36, true]]);
  assert.equal(LOCKED.DRAAdminAccess, 36);
  assert.deepEqual(RELEASES.map((r) => gateDefaults(r).DRAAdminAccess), [true, true, true, true]);
});
check("DRAAdminAccess can be turned off on 1.34 and 1.35 only; featuregate's message from 1.36", () => {
  assert.equal(lockedGateError("1.34", "DRAAdminAccess", false), null);
  assert.equal(lockedGateError("1.35", "DRAAdminAccess", false), null);
  for (const release of ["1.36", "1.37"]) {
    assert.equal(lockedGateError(release, "DRAAdminAccess", true), null);
    assert.equal(lockedGateError(release, "DRAAdminAccess", false),
      "cannot set feature gate DRAAdminAccess to false, feature is locked to true");
  }
  assert.equal(lockedGateError("1.37", "DRAConsumableCapacity", false), null); // beta, not locked
});

// ---------------------------------------------------------------------------------------
// TestAllocator: the allocatortesting helpers, re-expressed.
const [driverA, pool1, node1, classA] = ["driver-a", "pool-1", "node-1", "class-a"];
const [req0, req1, claim0, claim1, slice1] = ["req-0", "req-1", "claim-0", "claim-1", "slice-1"];
const [device1, device2] = ["device-1", "device-2"];
const taintNoSchedule = { key: "taint-key", value: "taint-value", effect: "NoSchedule" };
const deviceClass = (name, driver) => ({ metadata: { name }, spec: { selectors: [{ cel: { expression: `device.driver == "${driver}"` } }] } });
const device = (name, extra = {}) => ({ name, ...extra });
const sliceWithDevices = (name, node, pool, driver, ...devices) => ({
  metadata: { name }, spec: { driver, nodeName: node, pool: { name: pool, generation: 1, resourceSliceCount: 1 }, devices },
});
const sliceWithOneDevice = (name, node, pool, driver) => sliceWithDevices(name, node, pool, driver, device(device1));
const request = (name, cls, count) => ({ name, exactly: { count, allocationMode: "ExactCount", deviceClassName: cls } });
const claimWithRequests = (name, ...requests) => ({ metadata: { name }, spec: { devices: { requests } } });
const claimWithRequest = (name, req, cls) => claimWithRequests(name, request(req, cls, 1));
const withAdminAccess = (claim, ...requests) => {
  for (const i of requests) claim.spec.devices.requests[i].exactly.adminAccess = true;
  return claim;
};
const deviceAllocationResult = (req, driver, pool, dev, adminAccess) => ({ request: req, driver, pool, device: dev, ...(adminAccess ? { adminAccess: true } : {}) });
const localNodeSelector = (node) => ({ nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: [node] }] }] });
const allocationResult = (nodeSelector, ...results) => ({ devices: { results }, nodeSelector });
const MakeDeviceID = (driver, pool, dev) => ({ driver, pool, device: dev });

// Runs one case as allocator_testing.go's harness does: the allocated devices are the
// allocated state (here: one stored claim dedicating each), the classes and slices as
// given; no solution is an {error} here where Go answers nil results and no error, and an
// error names its message (expectError).
function allocatorCase(name, tc) {
  check(`TestAllocator/${name}`, () => {
    const claims = new Map();
    if (tc.allocatedDevices?.length) {
      claims.set("other/allocated", { metadata: { namespace: "other", name: "allocated" }, status: { allocation: { devices: {
        results: tc.allocatedDevices.map((d) => ({ request: "other", ...d })) } } } });
    }
    const features = { adminAccess: tc.features.AdminAccess ?? false, deviceTaints: tc.features.DeviceTaints ?? false };
    const claimsToAllocate = clone(tc.claimsToAllocate);
    const r = allocateClaims(claimsToAllocate, { slices: clone(tc.slices), classes: new Map(tc.classes.map((c) => [c.metadata.name, c])), claims, features });
    // Objects the allocator had access to are not modified.
    assert.deepEqual(claimsToAllocate, tc.claimsToAllocate);
    if (tc.expectError) {
      assert.ok(r.error?.includes(tc.expectError), `error ${JSON.stringify(r.error)} should contain ${JSON.stringify(tc.expectError)}`);
      return;
    }
    if (!tc.expectResults) {
      assert.ok(r.error !== undefined, `expected no allocation, got ${JSON.stringify(r.allocations)}`);
      assert.doesNotMatch(r.error, /feature is disabled/);
      return;
    }
    assert.equal(r.error, undefined);
    // ConsistOf: results in any order.
    const norm = (a) => ({ ...a, devices: { results: [...a.devices.results].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))) } });
    assert.deepEqual(r.allocations.map(norm), tc.expectResults.map(norm));
  });
}

allocatorCase("all-devices-some-allocated-admin-access", {
  features: { AdminAccess: true },
  claimsToAllocate: [(() => {
    const c = withAdminAccess(claimWithRequest(claim0, req0, classA), 0);
    c.spec.devices.requests[0].exactly.allocationMode = "All";
    return c;
  })()],
  allocatedDevices: [MakeDeviceID(driverA, pool1, device1)],
  classes: [deviceClass(classA, driverA)],
  slices: [sliceWithDevices(slice1, node1, pool1, driverA, device(device1), device(device2))],
  expectResults: [allocationResult(localNodeSelector(node1),
    deviceAllocationResult(req0, driverA, pool1, device1, true),
    deviceAllocationResult(req0, driverA, pool1, device2, true))],
});
allocatorCase("all-devices-some-allocating-admin-access", {
  features: { AdminAccess: true },
  claimsToAllocate: [(() => {
    const c = withAdminAccess(claimWithRequests(claim0, request(req0, classA, 1), request(req1, classA, 1)), 0, 1);
    // The second request for `All` cannot be fulfilled: the first one takes a device.
    c.spec.devices.requests[1].exactly.allocationMode = "All";
    return c;
  })()],
  classes: [deviceClass(classA, driverA)],
  slices: [sliceWithDevices(slice1, node1, pool1, driverA, device(device1), device(device2))],
  expectResults: null,
});
allocatorCase("count-devices-some-allocated-admin-access", {
  features: { AdminAccess: true },
  claimsToAllocate: [(() => {
    const c = withAdminAccess(claimWithRequest(claim0, req0, classA), 0);
    Object.assign(c.spec.devices.requests[0].exactly, { allocationMode: "ExactCount", count: 2 });
    return c;
  })()],
  allocatedDevices: [MakeDeviceID(driverA, pool1, device1)],
  classes: [deviceClass(classA, driverA)],
  slices: [sliceWithDevices(slice1, node1, pool1, driverA, device(device1), device(device2))],
  expectResults: [allocationResult(localNodeSelector(node1),
    deviceAllocationResult(req0, driverA, pool1, device1, true),
    deviceAllocationResult(req0, driverA, pool1, device2, true))],
});
allocatorCase("separate-claims-share-device-admin-access", {
  features: { AdminAccess: true },
  claimsToAllocate: [withAdminAccess(claimWithRequest(claim0, req0, classA), 0), withAdminAccess(claimWithRequest(claim1, req0, classA), 0)],
  classes: [deviceClass(classA, driverA)],
  slices: [sliceWithDevices(slice1, node1, pool1, driverA, device(device1), device(device2))],
  expectResults: [
    allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, true)),
    allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, true)),
  ],
});
allocatorCase("admin-access-claims-device-allocating-for-non-admin-access", {
  features: { AdminAccess: true },
  claimsToAllocate: [claimWithRequest(claim0, req0, classA), withAdminAccess(claimWithRequest(claim1, req0, classA), 0)],
  classes: [deviceClass(classA, driverA)],
  slices: [sliceWithDevices(slice1, node1, pool1, driverA, device(device1), device(device2))],
  expectResults: [
    allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, false)),
    allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, true)),
  ],
});
allocatorCase("admin-access-disabled", {
  features: { AdminAccess: false },
  claimsToAllocate: [withAdminAccess(claimWithRequest(claim0, req0, classA), 0)],
  classes: [deviceClass(classA, driverA)],
  slices: [sliceWithOneDevice(slice1, node1, pool1, driverA)],
  expectResults: null,
  expectError: "claim claim-0, request req-0: admin access is requested, but the feature is disabled",
});
allocatorCase("admin-access-enabled", {
  features: { AdminAccess: true },
  claimsToAllocate: [withAdminAccess(claimWithRequest(claim0, req0, classA), 0)],
  allocatedDevices: [MakeDeviceID(driverA, pool1, device1), MakeDeviceID(driverA, pool1, device2)],
  classes: [deviceClass(classA, driverA)],
  slices: [sliceWithOneDevice(slice1, node1, pool1, driverA)],
  expectResults: [allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, true))],
});
allocatorCase("tainted-admin-access", {
  features: { DeviceTaints: true, AdminAccess: true },
  claimsToAllocate: [withAdminAccess(claimWithRequest(claim0, req0, classA), 0)],
  allocatedDevices: [MakeDeviceID(driverA, pool1, device1), MakeDeviceID(driverA, pool1, device2)],
  classes: [deviceClass(classA, driverA)],
  slices: [sliceWithDevices(slice1, node1, pool1, driverA, device(device1, { taints: [taintNoSchedule] }))],
  expectResults: null,
});
allocatorCase("tainted-admin-access-disabled", {
  features: { DeviceTaints: false, AdminAccess: true },
  claimsToAllocate: [withAdminAccess(claimWithRequest(claim0, req0, classA), 0)],
  allocatedDevices: [MakeDeviceID(driverA, pool1, device1), MakeDeviceID(driverA, pool1, device2)],
  classes: [deviceClass(classA, driverA)],
  slices: [sliceWithDevices(slice1, node1, pool1, driverA, device(device1, { taints: [taintNoSchedule] }))],
  expectResults: [allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, true))],
});

// Our own: what the same rules make of a shared device (allowMultipleAllocations, capacity),
// as our perHca and perPool models publish it. allocateOne and allocateDevice run the
// capacity check (CmpRequestOverCapacity) for an admin request too, and give it a share.
{
  const shared = (value) => device("hca-0", { allowMultipleAllocations: true, capacity: { shares: {
    value: String(value), requestPolicy: { default: "1", validRange: { min: "1", step: "1" } } } } });
  const slices = [sliceWithDevices(slice1, node1, pool1, driverA, shared(4))];
  const classes = new Map([[classA, deviceClass(classA, driverA)]]);
  const holding = (n) => new Map(Array.from({ length: n }, (_, i) => [`ml/c${i}`, { status: { allocation: { devices: { results: [{
    request: req0, driver: driverA, pool: pool1, device: "hca-0", shareID: `00000000-0000-4000-8000-00000000000${i}`, consumedCapacity: { shares: "1" } }] } } } }]));
  const admin = () => withAdminAccess(claimWithRequest(claim0, req0, classA), 0);
  check("shared device, every share held by ordinary claims: an admin request does not fit (its share must fit too)", () => {
    const r = allocateClaims([admin()], { slices, classes, claims: holding(4) });
    assert.match(r.error, /request req-0: no 1 device/);
  });
  check("shared device, a share free: an admin request gets it (adminAccess, shareID, consumedCapacity)", () => {
    const r = allocateClaims([admin()], { slices, classes, claims: holding(3) });
    const [res] = r.allocations[0].devices.results;
    assert.equal(res.adminAccess, true);
    assert.match(res.shareID, /^[0-9a-f-]{36}$/);
    assert.deepEqual(res.consumedCapacity, { shares: "1" });
  });
  check("shared device: an admin share stored is not counted (foreachAllocatedDevice skips it), the last share is still free", () => {
    const claims = holding(3);
    claims.set("monitoring/admin", { status: { allocation: { devices: { results: [{
      request: req0, driver: driverA, pool: pool1, device: "hca-0", adminAccess: true, shareID: "00000000-0000-4000-8000-0000000000aa", consumedCapacity: { shares: "1" } }] } } } });
    const r = allocateClaims([claimWithRequest(claim1, req0, classA)], { slices, classes, claims });
    assert.equal(r.error, undefined);
    assert.equal(r.allocations[0].devices.results[0].adminAccess, undefined);
  });
  check("a request with adminAccess: false is refused too when the feature is off (hasAdminAccess: the field is set)", () => {
    const c = claimWithRequest(claim0, req0, classA);
    c.metadata.namespace = "ml";
    c.spec.devices.requests[0].exactly.adminAccess = false;
    const r = allocateClaims([c], { slices, classes, claims: new Map(), features: { adminAccess: false } });
    assert.equal(r.error, "claim ml/claim-0, request req-0: admin access is requested, but the feature is disabled");
  });
}

// ---------------------------------------------------------------------------------------
// The strategies: the objects of resourceclaim/strategy_test.go and
// resourceclaimtemplate/strategy_test.go, re-expressed in their v1 JSON form.
const ns1 = { metadata: { name: "default", labels: { key: "value" } } };
const ns2 = { metadata: { name: "kube-system", labels: { [DRA_ADMIN_NAMESPACE_LABEL_KEY]: "true" } } };
const adminAccessError = "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label";
// fake.NewSimpleClientset(ns1, ns2).CoreV1().Namespaces(): every Get is an action.
function fakeNamespaces() {
  const actions = [];
  const get = (name) => {
    actions.push(name);
    const ns = [ns1, ns2].find((n) => n.metadata.name === name);
    if (!ns) throw new Error(`namespaces "${name}" not found`);
    return clone(ns);
  };
  return { get, actions };
}
const exactRequest = (extra = {}) => ({ name: "req-0", exactly: { deviceClassName: "class", allocationMode: "All", ...extra } });
const allocationStatus = (adminAccess) => ({ allocation: { devices: { results: [{
  request: "req-0", driver: "dra.example.com", pool: "pool-0", device: "device-0", ...(adminAccess ? { adminAccess: true } : {}) }] } } });
const claimObj = (namespace, extra, status) => ({
  metadata: { name: "valid-claim", namespace }, spec: { devices: { requests: [exactRequest(extra)] } }, ...(status ? { status } : {}),
});
const obj = claimObj("kube-system");
const objWithStatus = claimObj("kube-system", {}, allocationStatus(false));
const objWithAdminAccess = claimObj("kube-system", { adminAccess: true });
const objInNonAdminNamespace = claimObj("default");
const objWithAdminAccessInNonAdminNamespace = claimObj("default", { adminAccess: true });
const objWithAdminAccessStatusInNonAdminNamespace = claimObj("default", { adminAccess: true }, allocationStatus(true));
const objWithAdminAccessStatus = claimObj("kube-system", { adminAccess: true }, allocationStatus(true));
const noAction = [];
const oneAction = (ns) => [ns];

function expectErrors(errs, expected) {
  if (!expected) {
    assert.deepEqual(errs.map(String), []);
    return false;
  }
  assert.equal(errs.length, 1, "exactly one error expected");
  assert.ok(String(errs[0]).includes(expected), `${errs[0]} should contain ${expected}`);
  return true;
}

// The create and update cases of the claim and the template strategies run alike: the
// strategy's PrepareForCreate and Validate, or PrepareForUpdate (no admin part of
// ValidateUpdate: the spec is immutable). `spec` picks the object's device spec.
const createCases = (label, prepareForCreate, validateAdmin) => (name, tc) => {
  check(`${label}/${name}`, () => {
    const ns = fakeNamespaces();
    const o = clone(tc.obj);
    prepareForCreate({ DRAAdminAccess: tc.adminAccess }, o);
    if (!expectErrors(validateAdmin(o, ns.get), tc.expectValidationError)) assert.deepEqual(o, tc.expectObj);
    assert.deepEqual(ns.actions, tc.verify);
  });
};
const updateCases = (label, prepareForUpdate, spec, immutableBy) => (name, tc) => {
  check(`${label}${name}${tc.immutable ? " (adapted: spec immutability not ported)" : ""}`, () => {
    const ns = fakeNamespaces();
    const oldObj = clone(tc.oldObj);
    const newObj = clone(tc.newObj);
    prepareForUpdate({ DRAAdminAccess: tc.adminAccess }, newObj, oldObj);
    if (tc.immutable) {
      assert.equal(spec(newObj).devices.requests[0].exactly.adminAccess, true, "the field is kept");
      assert.notDeepEqual(newObj.spec, oldObj.spec, `the spec changes: ${immutableBy}'s field is immutable`);
    } else {
      assert.deepEqual(newObj, tc.expectObj);
    }
    assert.deepEqual(ns.actions, tc.verify);
  });
};

// TestStrategyCreate: PrepareForCreate, Validate.
const claimCreateCase = createCases("resourceclaim TestStrategyCreate", claimPrepareForCreate, claimValidateAdmin);
claimCreateCase("drop-fields-admin-access", { obj: objWithAdminAccess, adminAccess: false, expectObj: obj, verify: noAction });
claimCreateCase("keep-fields-admin-access", { obj: objWithAdminAccess, adminAccess: true, expectObj: objWithAdminAccess, verify: oneAction("kube-system") });
claimCreateCase("admin-access-admin-namespace", { obj: objWithAdminAccess, adminAccess: true, expectObj: objWithAdminAccess, verify: oneAction("kube-system") });
claimCreateCase("admin-access-non-admin-namespace", {
  obj: objWithAdminAccessInNonAdminNamespace, adminAccess: true, expectObj: objWithAdminAccessInNonAdminNamespace,
  expectValidationError: adminAccessError, verify: oneAction("default"),
});

// TestStrategyUpdate: PrepareForUpdate, ValidateUpdate (no admin part: the spec is immutable).
const claimUpdateCase = updateCases("resourceclaim TestStrategyUpdate/", claimPrepareForUpdate, (o) => o.spec,
                                    "ValidateResourceClaimUpdate");
claimUpdateCase("drop-fields-admin-access", { oldObj: obj, newObj: objWithAdminAccess, adminAccess: false, expectObj: obj, verify: noAction });
claimUpdateCase("keep-fields-admin-access", { oldObj: obj, newObj: objWithAdminAccess, adminAccess: true, immutable: true, verify: noAction });
claimUpdateCase("keep-existing-fields-admin-access", { oldObj: objWithAdminAccess, newObj: objWithAdminAccess, adminAccess: true, expectObj: objWithAdminAccess, verify: noAction });
claimUpdateCase("admin-access-admin-namespace", { oldObj: objWithAdminAccess, newObj: objWithAdminAccess, adminAccess: true, expectObj: objWithAdminAccess, verify: noAction });
claimUpdateCase("admin-access-non-admin-namespace", { oldObj: objInNonAdminNamespace, newObj: objWithAdminAccessInNonAdminNamespace, adminAccess: true, immutable: true, verify: noAction });

// TestStatusStrategyUpdate: the status strategy's PrepareForUpdate and ValidateUpdate.
function statusUpdateCase(name, tc) {
  check(`resourceclaim TestStatusStrategyUpdate/${name}`, () => {
    const ns = fakeNamespaces();
    const oldObj = clone(tc.oldObj);
    const newObj = clone(tc.newObj);
    claimStatusPrepareForUpdate({ DRAAdminAccess: tc.adminAccess }, newObj, oldObj);
    if (!expectErrors(claimStatusValidateAdmin(newObj, oldObj, ns.get), tc.expectValidationError)) assert.deepEqual(newObj, tc.expectObj);
    assert.deepEqual(ns.actions, tc.verify);
  });
}
statusUpdateCase("drop-fields-admin-access", { oldObj: obj, newObj: objWithAdminAccessStatus, adminAccess: false, expectObj: objWithStatus, verify: noAction });
statusUpdateCase("keep-fields-admin-access", {
  oldObj: obj, newObj: objWithAdminAccessStatus, adminAccess: true,
  expectObj: { ...clone(objWithAdminAccessStatus), spec: clone(obj.spec) }, // the spec remains unchanged
  verify: oneAction("kube-system"),
});
statusUpdateCase("keep-fields-admin-access-NonAdminNamespace", {
  oldObj: objInNonAdminNamespace, newObj: objWithAdminAccessStatusInNonAdminNamespace, adminAccess: true,
  expectValidationError: adminAccessError, verify: oneAction("default"),
});
statusUpdateCase("keep-fields-admin-access-because-of-spec", {
  oldObj: objWithAdminAccess, newObj: objWithAdminAccessStatus, adminAccess: false, expectObj: objWithAdminAccessStatus,
  verify: oneAction("kube-system"),
});
{
  // Normally a claim without admin access in the spec has none in the status either, but
  // it is not invalid.
  const old = clone(objWithAdminAccessStatus);
  old.spec.devices.requests[0].exactly.adminAccess = false;
  statusUpdateCase("keep-fields-admin-access-because-of-status", {
    oldObj: old, newObj: objWithAdminAccessStatus, adminAccess: false, expectObj: old, verify: noAction,
  });
}

// resourceclaimtemplate/strategy_test.go
const templateObj = (namespace, extra) => ({
  metadata: { name: "valid-claim-template", namespace }, spec: { spec: { devices: { requests: [exactRequest(extra)] } } },
});
const tObj = templateObj("kube-system");
const tObjWithAdminAccess = templateObj("kube-system", { adminAccess: true });
const tObjInNonAdminNamespace = templateObj("default");
const tObjWithAdminAccessInNonAdminNamespace = templateObj("default", { adminAccess: true });
const templateAdminAccessError = `${adminAccessError} on the containing namespace`;

const templateCreateCase = createCases("resourceclaimtemplate TestClaimTemplateStrategyCreate",
                                       claimTemplatePrepareForCreate, claimTemplateValidateAdmin);
templateCreateCase("drop-fields-admin-access", { obj: tObjWithAdminAccess, adminAccess: false, expectObj: tObj, verify: noAction });
templateCreateCase("keep-fields-admin-access", { obj: tObjWithAdminAccess, adminAccess: true, expectObj: tObjWithAdminAccess, verify: oneAction("kube-system") });
templateCreateCase("admin-access-admin-namespace", { obj: tObjWithAdminAccess, adminAccess: true, expectObj: tObjWithAdminAccess, verify: oneAction("kube-system") });
templateCreateCase("admin-access-non-admin-namespace", {
  obj: tObjWithAdminAccessInNonAdminNamespace, adminAccess: true, expectObj: tObjWithAdminAccessInNonAdminNamespace,
  expectValidationError: templateAdminAccessError, verify: oneAction("default"),
});

const templateUpdateCase = updateCases("resourceclaimtemplate ", claimTemplatePrepareForUpdate, (o) => o.spec.spec,
                                       "ValidateResourceClaimTemplateUpdate");
templateUpdateCase("TestClaimTemplateStrategyUpdate/adminaccess-update-not-allowed", {
  oldObj: tObj, newObj: tObjWithAdminAccess, adminAccess: true, immutable: true, verify: noAction,
});
templateUpdateCase("TestStrategyUpdate/drop-fields-admin-access", { oldObj: tObj, newObj: tObjWithAdminAccess, adminAccess: false, expectObj: tObj, verify: noAction });
templateUpdateCase("TestStrategyUpdate/keep-fields-admin-access", { oldObj: tObj, newObj: tObjWithAdminAccess, adminAccess: true, immutable: true, verify: noAction });
templateUpdateCase("TestStrategyUpdate/keep-existing-fields-admin-access", {
  oldObj: tObjWithAdminAccess, newObj: tObjWithAdminAccess, adminAccess: true, expectObj: tObjWithAdminAccess, verify: noAction,
});
templateUpdateCase("TestStrategyUpdate/admin-access-admin-namespace", {
  oldObj: tObjWithAdminAccess, newObj: tObjWithAdminAccess, adminAccess: true, expectObj: tObjWithAdminAccess, verify: noAction,
});
templateUpdateCase("TestStrategyUpdate/admin-access-non-admin-namespace", {
  oldObj: tObjInNonAdminNamespace, newObj: tObjWithAdminAccessInNonAdminNamespace, adminAccess: true, immutable: true, verify: noAction,
});

// Our own: what the rules answer where upstream's cases do not look.
check("AuthorizedForAdmin: a namespace that cannot be read is an internal error at the request's path", () => {
  const errs = claimValidateAdmin(claimObj("gone", { adminAccess: true }), fakeNamespaces().get);
  assert.deepEqual(errs.map(String),
    ['spec.devices.requests[0].adminAccess: Internal error: could not retrieve namespace to verify admin access: namespaces "gone" not found']);
});
check("AuthorizedForAdmin: adminAccess false asks for nothing (no lookup); the label must be exactly \"true\"", () => {
  const ns = fakeNamespaces();
  assert.deepEqual(claimValidateAdmin(claimObj("default", { adminAccess: false }), ns.get), []);
  assert.deepEqual(ns.actions, []);
  const errs = claimValidateAdmin(claimObj("x", { adminAccess: true }), () => ({ metadata: { labels: { [DRA_ADMIN_NAMESPACE_LABEL_KEY]: "True" } } }));
  assert.equal(errs.length, 1);
  assert.equal(errs[0].type, "FieldValueForbidden");
});

// ---------------------------------------------------------------------------------------
// The fake kube-apiserver end to end: what a C++ test meets through the admin API.
const DRIVER = "rdma.example.com";
const startServer = (release, gates) => startFake(release, gates, "fake-admin-access-");
const createSlice = (s, slice) => apiRequest(s, "POST", "/apis/resource.k8s.io/v1/resourceslices", slice);
const slotsSlice = {
  apiVersion: "resource.k8s.io/v1", kind: "ResourceSlice", metadata: { name: "n1-slots" },
  spec: { driver: DRIVER, nodeName: "n1", pool: { name: "n1/slots", generation: 1, resourceSliceCount: 1 },
    devices: [0, 1, 2, 3].map((i) => ({ name: `slot-${i}`, attributes: { model: { string: "slot" } } })) },
};
const sharedSlice = {
  apiVersion: "resource.k8s.io/v1", kind: "ResourceSlice", metadata: { name: "n1-hca" },
  spec: { driver: DRIVER, nodeName: "n1", pool: { name: "n1/hca", generation: 1, resourceSliceCount: 1 },
    devices: [{ name: "hca-0000-10-00-0", allowMultipleAllocations: true, attributes: { model: { string: "hca" } },
      capacity: { shares: { value: "4", requestPolicy: { default: "1", validRange: { min: "1", step: "1" } } } } }] },
};
const classOf = (model) => ({ apiVersion: "resource.k8s.io/v1", kind: "DeviceClass", metadata: { name: model },
  spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}" && device.attributes["${DRIVER}"].model == "${model}"` } }] } });
const claimIn = (namespace, name, cls, adminAccess) => ({ apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", metadata: { namespace, name },
  spec: { devices: { requests: [{ name: "rdma", exactly: { deviceClassName: cls, ...(adminAccess ? { adminAccess: true } : {}) } }] } } });
const labelled = { name: "monitoring", labels: { [DRA_ADMIN_NAMESPACE_LABEL_KEY]: "true" } };
const refusal = (name) => `ResourceClaim.resource.k8s.io "${name}" is invalid: spec.devices.requests[0].adminAccess: Forbidden: ` +
  "admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace";

async function setUp(release, gates) {
  const s = await startServer(release, gates);
  for (const sl of [slotsSlice, sharedSlice]) assert.equal((await createSlice(s, sl)).code, 201);
  for (const m of ["slot", "hca"]) assert.equal((await admin(s, "/deviceclasses", classOf(m))).code, 200);
  return s;
}

for (const release of ["1.36", "1.37"]) {
  const s = await setUp(release);
  try {
    const ordinary = [];
    for (let i = 0; i < 5; i++) ordinary.push(await admin(s, "/allocate", claimIn("ml", `pod-${i}`, "slot")));
    const unlabelled = await admin(s, "/allocate", claimIn("team-a", "admin", "slot", true));
    const ns = await admin(s, "/namespaces", labelled);
    const granted = await admin(s, "/allocate", claimIn("monitoring", "admin", "slot", true));
    const second = await admin(s, "/allocate", claimIn("monitoring", "admin-2", "slot", true));
    const stillFull = await admin(s, "/allocate", claimIn("ml", "pod-5", "slot"));
    await admin(s, "/deallocate", { namespace: "ml", name: "pod-0" });
    const freed = await admin(s, "/allocate", claimIn("ml", "pod-6", "slot"));
    const stats = (await admin(s, "/stats")).body;
    check(`fake ${release}, slots: every slot held by ordinary claims (the 5th is 409 Unschedulable)`, () => {
      assert.deepEqual(ordinary.map((r) => r.code), [200, 200, 200, 200, 409]);
      assert.equal(ordinary[4].body.reason, "Unschedulable");
    });
    check(`fake ${release}, slots: an adminAccess claim in an unlabelled namespace is refused 422 Invalid, recorded`, () => {
      assert.equal(unlabelled.code, 422);
      assert.equal(unlabelled.body.reason, "Invalid");
      assert.equal(unlabelled.body.message, refusal("admin"));
      assert.deepEqual(unlabelled.body.details.causes,
        [{ reason: "FieldValueForbidden", field: "spec.devices.requests[0].adminAccess", message: refusal("admin").split(": Forbidden: ")[1].replace(/^/, "Forbidden: ") }]);
      assert.deepEqual(stats.invalid, [refusal("admin")]);
    });
    check(`fake ${release}, slots: labelled, the adminAccess claim is allocated a held slot, consuming nothing`, () => {
      assert.equal(ns.code, 200);
      assert.deepEqual(ns.body.metadata.labels, labelled.labels);
      assert.equal(granted.code, 200, JSON.stringify(granted.body));
      const [r] = granted.body.status.allocation.devices.results;
      assert.deepEqual(Object.keys(r).sort(), ["adminAccess", "device", "driver", "pool", "request"]);
      assert.equal(r.adminAccess, true);
      assert.equal(r.device, "slot-0");
      assert.equal(granted.body.spec.devices.requests[0].exactly.adminAccess, true);
      assert.equal(second.code, 200);
      assert.equal(stillFull.code, 409, "an admin allocation frees nothing");
      assert.equal(freed.code, 200, "an admin allocation blocks nothing");
      assert.equal(freed.body.status.allocation.devices.results[0].device, "slot-0");
    });

    // The shared device (perHca): the admin request's share is checked like any other.
    const shares = [];
    for (let i = 0; i < 4; i++) shares.push(await admin(s, "/allocate", claimIn("ml", `share-${i}`, "hca")));
    const full = await admin(s, "/allocate", claimIn("monitoring", "admin-hca", "hca", true));
    await admin(s, "/deallocate", { namespace: "ml", name: "share-3" });
    const adminShare = await admin(s, "/allocate", claimIn("monitoring", "admin-hca", "hca", true));
    const last = await admin(s, "/allocate", claimIn("ml", "share-4", "hca"));
    check(`fake ${release}, shared device: with every share held the adminAccess claim is 409 Unschedulable (CmpRequestOverCapacity)`, () => {
      assert.deepEqual(shares.map((r) => r.code), [200, 200, 200, 200]);
      assert.equal(full.code, 409);
      assert.equal(full.body.reason, "Unschedulable");
    });
    check(`fake ${release}, shared device: with a share free it gets one (adminAccess, shareID), not counted against the next claim`, () => {
      assert.equal(adminShare.code, 200, JSON.stringify(adminShare.body));
      const [r] = adminShare.body.status.allocation.devices.results;
      assert.equal(r.adminAccess, true);
      assert.deepEqual(r.consumedCapacity, { shares: "1" });
      assert.equal(last.code, 200, "the admin share does not count");
    });

    // POST /claims: a claim as a client writes it, allocation included.
    const held = { ...claimIn("team-b", "held", "slot", true), status: { allocation: { devices: { results: [
      { request: "rdma", driver: DRIVER, pool: "n1/slots", device: "slot-1", adminAccess: true }] } } } };
    const refused = await admin(s, "/claims", held);
    await admin(s, "/namespaces", { name: "team-b", labels: { [DRA_ADMIN_NAMESPACE_LABEL_KEY]: "true" } });
    const stored = await admin(s, "/claims", held);
    const statusOnly = await admin(s, "/claims", { ...claimIn("team-c", "odd", "slot"), status: held.status });
    const gate = await admin(s, "/gates", { DRAAdminAccess: false });
    check(`fake ${release}, POST /claims: refused in an unlabelled namespace, stored once labelled`, () => {
      assert.equal(refused.code, 422);
      assert.equal(refused.body.message, refusal("held"));
      assert.equal(stored.code, 200);
      assert.equal(stored.body.status.allocation.devices.results[0].adminAccess, true);
      assert.match(stored.body.metadata.uid, /^[0-9a-f-]{36}$/);
    });
    check(`fake ${release}, POST /claims: a result with adminAccess in an unlabelled namespace is refused at its path (AuthorizedForAdminStatus)`, () => {
      assert.equal(statusOnly.code, 422);
      assert.equal(statusOnly.body.message, 'ResourceClaim.resource.k8s.io "odd" is invalid: status.allocation.devices.results[0].adminAccess: ' +
        "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace");
    });
    check(`fake ${release}: DRAAdminAccess is locked, POST /gates refuses to turn it off`, () => {
      assert.equal(gate.code, 400);
      assert.equal(gate.body.message, "cannot set feature gate DRAAdminAccess to false, feature is locked to true");
    });
  } finally {
    stopServer(s);
  }
}

{
  const r = runServerToExit("1.36", "DRAAdminAccess=false", "fake-admin-access-");
  check("fake 1.36 --gates DRAAdminAccess=false: does not start, as kube-apiserver's flag parsing refuses it", () => {
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /invalid argument "DRAAdminAccess=false" for "--feature-gates" flag: cannot set feature gate DRAAdminAccess to false, feature is locked to true/);
  });
}
{
  // 1.35 with the beta gate turned off: the field is dropped on create, the claim is an
  // ordinary one (it needs no label, and gets an ordinary allocation).
  const s = await setUp("1.35", "DRAAdminAccess=false");
  try {
    const r = await admin(s, "/allocate", claimIn("team-a", "admin", "slot", true));
    const stats = (await admin(s, "/stats")).body;
    check("fake 1.35 with DRAAdminAccess off: adminAccess is dropped (stats.dropped), the claim allocated as an ordinary one", () => {
      assert.equal(r.code, 200, JSON.stringify(r.body));
      assert.equal(r.body.spec.devices.requests[0].exactly.adminAccess, undefined);
      assert.equal(r.body.status.allocation.devices.results[0].adminAccess, undefined);
      assert.equal(stats.dropped["resourceclaims spec.devices.requests[].exactly.adminAccess"], 1);
      assert.deepEqual(stats.invalid, []);
    });
  } finally {
    stopServer(s);
  }
}

finish("DRA admin access");
