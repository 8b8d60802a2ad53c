// Tests of claim_status_authz.mjs (kube-apiserver's granular ResourceClaim status authorization
// of 1.36+) and of its place in the status strategy (claim_status_validation.mjs
// claimStatusValidateUpdate): upstream's own cases transcribed by case name, then cases of our
// own (the release and gate table, the exact texts).
// Usage: node claim_status_authz_test.mjs (exit status 0 when all pass).
//
// Upstream sources (kubernetes/kubernetes):
//  - pkg/registry/resource/utils_test.go, the copy that goes with the v1.36 utils.go (error
//    counts only): TestGetModifiedDrivers (13 cases), TestAuthorizedForBinding (5),
//    TestAuthorizedForDeviceStatus (10), TestNodeNameFromAllocation (9),
//    TestSAAssociatedWithAllocatedNode (8). Its fakeAuthorizer keys decisions by
//    "verb/resource/subresource/name", answers Deny "no rule matched" otherwise, and Deny
//    "forced error" with its error when it has one.
//  - The same file's newer copy (the 1.37/1.38 development line), whose cases also record the
//    authorizer's calls in order ("verb/resource/subresource/namespace/name") and test an
//    authorizer that errs: TestAuthorizedForBinding (7) and TestAuthorizedForDeviceStatus (13),
//    transcribed for their calls and error counts. Adapted: that copy expects the texts
//    "changing status.allocation or status.reservedFor requires extra permission" and
//    "changing status.devices requires extra permission"; the port has the v1.36 texts
//    (`... requires resource="resourceclaims/binding", verb="update" permission: ...`), so the
//    common prefix is compared.
//  - pkg/registry/resource/resourceclaim/strategy_test.go TestStatusStrategyUpdate, its three
//    authorizer cases (fakeAuthorizer{false}: Deny "denied"; user "test-user", request info
//    verb update on resourceclaims/status in namespace "default"):
//    "fail-update-fields-devices-status-without-permissions",
//    "fail-update-fields-devices-status-associated-node-without-permissions" (newest copy only)
//    and "fail-drop-status-deallocated-device-without-permissions". The expected substrings are
//    the newest copy's (bindingUpdateError, deviceAssociatedNodeUpdateError,
//    deviceArbitraryNodeUpdateError). Adapted: the deallocation case. Its v1.36-era copy
//    accepts any error containing "is forbidden" (the v1.36 strategy reports two: the binding
//    and the deallocated entry's driver); the newest copy wants exactly one (the binding):
//    the port, of the v1.36 form, gives two, the first the binding error.
import assert from "node:assert/strict";
import { check, finish } from "./check.mjs";
import { gateDefaults } from "./kube_release.mjs";
import { invalidStatus } from "./kube_validation.mjs";
import {
  authorizedForBinding, authorizedForDeviceStatus, checkAuthorization, getModifiedDrivers, nodeNameFromAllocation,
  saAssociatedWithAllocatedNode,
} from "./claim_status_authz.mjs";
import { claimStatusPrepareForUpdate, claimStatusValidateUpdate } from "./claim_status_validation.mjs";
import { NODE_NAME_KEY } from "./rbac_authorizer.mjs";

let upstream = 0;
const clone = (v) => structuredClone(v);
const sorted = (set) => [...set].sort();

// --- Fixtures of utils_test.go --------------------------------------------------------------

const devStatus = (driver, pool, device, networkData) => ({ driver, pool, device, ...(networkData ? { networkData } : {}) });
const claimStatus = (...devices) => ({ devices });
const singleNodeAllocation = (nodeName) => ({ nodeSelector: { nodeSelectorTerms: [{ matchFields: [
  { key: "metadata.name", operator: "In", values: [nodeName] }] }] } });
// withRequestContext: the request info of a status update by `user` with `verb`.
const request = (user, verb) => ({ user, verb, resourceRequest: true, apiGroup: "resource.k8s.io", apiVersion: "v1",
  resource: "resourceclaims", subresource: "status", namespace: "default", name: "test-claim" });
const user = (name, extra) => ({ name, ...(extra ? { extra } : {}) });

// The v1.36 copy's fakeAuthorizer.
function fakeAuthorizer136({ rules = {}, err } = {}) {
  const calls = [];
  const authorize = (a) => {
    const key = `${a.verb}/${a.resource}/${a.subresource}/${a.name}`;
    calls.push(key);
    if (err) return { decision: "Deny", reason: "forced error", error: err };
    if (key in rules) return { decision: rules[key], reason: "" };
    return { decision: "Deny", reason: "no rule matched" };
  };
  return { authorize, calls };
}
// The newer copy's fakeAuthorizer: it records every call and returns its error with any decision.
function fakeAuthorizerNewer({ rules = {}, err } = {}) {
  const calls = [];
  const authorize = (a) => {
    const key = `${a.verb}/${a.resource}/${a.subresource}/${a.namespace}/${a.name}`;
    calls.push(key);
    if (key in rules) return { decision: rules[key], reason: "", error: err };
    return { decision: "Deny", reason: "no rule matched", error: err };
  };
  return { authorize, calls };
}

// --- TestGetModifiedDrivers -----------------------------------------------------------------

const eth0 = { interfaceName: "eth0" };
const eth0ip = { interfaceName: "eth0", ips: ["192.168.7.1/24"] };
const modifiedDriversCases = {
  "no changes": [claimStatus(devStatus("driver-a", "pool-1", "dev-1"), devStatus("driver-b", "pool-1", "dev-2")),
    claimStatus(devStatus("driver-a", "pool-1", "dev-1"), devStatus("driver-b", "pool-1", "dev-2")), []],
  "add one device": [claimStatus(devStatus("driver-a", "pool-1", "dev-1"), devStatus("driver-b", "pool-1", "dev-2")),
    claimStatus(devStatus("driver-a", "pool-1", "dev-1")), ["driver-b"]],
  "add device for existing driver": [claimStatus(devStatus("driver-a", "pool-1", "dev-1"), devStatus("driver-a", "pool-1", "dev-2")),
    claimStatus(devStatus("driver-a", "pool-1", "dev-1")), ["driver-a"]],
  "remove one device": [claimStatus(devStatus("driver-a", "pool-1", "dev-1")),
    claimStatus(devStatus("driver-a", "pool-1", "dev-1"), devStatus("driver-b", "pool-1", "dev-2")), ["driver-b"]],
  "remove device for driver that still has other devices": [claimStatus(devStatus("driver-a", "pool-1", "dev-1")),
    claimStatus(devStatus("driver-a", "pool-1", "dev-1"), devStatus("driver-a", "pool-1", "dev-2")), ["driver-a"]],
  "modify one device": [claimStatus(devStatus("driver-a", "pool-1", "dev-1", eth0ip)), claimStatus(devStatus("driver-a", "pool-1", "dev-1", eth0)),
    ["driver-a"]],
  "modify device for driver, no change for other driver": [
    claimStatus(devStatus("driver-a", "pool-1", "dev-1", eth0ip), devStatus("driver-b", "pool-1", "dev-2")),
    claimStatus(devStatus("driver-a", "pool-1", "dev-1", eth0), devStatus("driver-b", "pool-1", "dev-2")), ["driver-a"]],
  "complex change (add, remove, modify)": [
    claimStatus(devStatus("driver-a", "pool-1", "dev-1", eth0ip), devStatus("driver-b", "pool-1", "dev-2"), devStatus("driver-c", "pool-1", "dev-3")),
    claimStatus(devStatus("driver-a", "pool-1", "dev-1", eth0), devStatus("driver-b", "pool-1", "dev-2"), devStatus("driver-d", "pool-1", "dev-4")),
    ["driver-a", "driver-c", "driver-d"]],
  "empty to empty": [claimStatus(), claimStatus(), []],
  "empty to one device": [claimStatus(devStatus("driver-a", "pool-1", "dev-1")), claimStatus(), ["driver-a"]],
  "one device to empty": [claimStatus(), claimStatus(devStatus("driver-a", "pool-1", "dev-1")), ["driver-a"]],
  "replace device with same key but different content": [claimStatus(devStatus("driver-a", "pool-1", "dev-1", eth0ip)),
    claimStatus(devStatus("driver-a", "pool-1", "dev-1", eth0)), ["driver-a"]],
  "replace device with different key for same driver": [claimStatus(devStatus("driver-a", "pool-1", "dev-NEW")),
    claimStatus(devStatus("driver-a", "pool-1", "dev-OLD")), ["driver-a"]],
};
for (const [name, [newStatus, oldStatus, expected]] of Object.entries(modifiedDriversCases)) {
  upstream++;
  check(`upstream TestGetModifiedDrivers/${name}`, () => assert.deepEqual(sorted(getModifiedDrivers(newStatus, oldStatus)), expected));
}

// --- TestAuthorizedForBinding (v1.36 copy) --------------------------------------------------

const schedulerSA = "system:serviceaccount:kube-system:scheduler";
const reservedPod = [{ resource: "pods", name: "pod-1", uid: "uid-1" }];
const bindingCases136 = {
  "no allocation or reservedFor change, no check needed": [{ devices: [devStatus("d", "p", "dev")] }, {}, {}, 0],
  "allocation changed, authorized": [{ allocation: singleNodeAllocation("node-1") }, {}, { "update/resourceclaims/binding/": "Allow" }, 0],
  "allocation changed, not authorized": [{ allocation: singleNodeAllocation("node-1") }, {}, {}, 1],
  "reservedFor changed, authorized": [{ reservedFor: reservedPod }, {}, { "update/resourceclaims/binding/": "Allow" }, 0],
  "reservedFor changed, not authorized": [{ reservedFor: reservedPod }, {}, {}, 1],
};
for (const [name, [newStatus, oldStatus, rules, expectErrs]] of Object.entries(bindingCases136)) {
  upstream++;
  check(`upstream TestAuthorizedForBinding/${name}`, () => {
    const a = fakeAuthorizer136({ rules });
    const errs = authorizedForBinding("status", a.authorize, request(user(schedulerSA), "update"), newStatus, oldStatus);
    assert.equal(errs.length, expectErrs, errs.map(String).join("; "));
  });
}

// --- TestAuthorizedForDeviceStatus (v1.36 copy) ---------------------------------------------

const saName = "system:serviceaccount:kube-system:dra-driver";
const nodeName = "test-node";
const driverName = "test-driver";
const onNode = (n) => ({ [NODE_NAME_KEY]: [n] });
const devNew = [devStatus(driverName, "pool", "dev-new")];
const devOld = [devStatus(driverName, "pool", "dev-old")];
const multiNode = { nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["node-a", "node-b"] }] }] } };
const assoc = (verb, driver = driverName) => `associated-node:${verb}/resourceclaims/driver/${driver}`;
const arb = (verb, driver = driverName) => `arbitrary-node:${verb}/resourceclaims/driver/${driver}`;
const deviceCases136 = {
  "no drivers modified": [{ devices: [devStatus(driverName, "pool", "device")] }, { devices: [devStatus(driverName, "pool", "device")] },
    user(saName), {}, "update", 0],
  "associated-node: SA on same node, allowed by associated-node verb": [{ allocation: singleNodeAllocation(nodeName), devices: devNew },
    { allocation: singleNodeAllocation(nodeName), devices: devOld }, user(saName, onNode(nodeName)), { [assoc("update")]: "Allow" }, "update", 0],
  "associated-node: SA on same node, allowed by arbitrary-node fallback": [{ allocation: singleNodeAllocation(nodeName), devices: devNew },
    { allocation: singleNodeAllocation(nodeName), devices: devOld }, user(saName, onNode(nodeName)), { [arb("update")]: "Allow" }, "update", 0],
  "associated-node: SA on same node, neither verb allowed": [{ allocation: singleNodeAllocation(nodeName), devices: devNew },
    { allocation: singleNodeAllocation(nodeName), devices: devOld }, user(saName, onNode(nodeName)), {}, "update", 1],
  "SA on different node, only arbitrary-node checked": [{ allocation: singleNodeAllocation("other-node"), devices: devNew }, { devices: devOld },
    user(saName, onNode(nodeName)), { [arb("update")]: "Allow" }, "update", 0],
  "SA on different node, associated-node not checked, denied": [{ allocation: singleNodeAllocation("other-node"), devices: devNew },
    { devices: devOld }, user(saName, onNode(nodeName)), { [assoc("update")]: "Allow" }, "update", 1],
  "no node association (controller), only arbitrary-node checked, allowed": [{ allocation: singleNodeAllocation(nodeName), devices: devNew },
    { devices: devOld }, user(saName), { [arb("update")]: "Allow" }, "update", 0],
  "no node association (controller), denied": [{ allocation: singleNodeAllocation(nodeName), devices: devNew }, { devices: devOld },
    user(saName), {}, "update", 1],
  "multi-node claim (no single node in selector), only arbitrary-node": [{ allocation: multiNode, devices: devNew }, { devices: devOld },
    user(saName, onNode("node-a")), { [arb("update")]: "Allow" }, "update", 0],
  "patch verb propagated": [{ allocation: singleNodeAllocation(nodeName), devices: devNew }, { devices: devOld },
    user(saName, onNode(nodeName)), { [assoc("patch")]: "Allow" }, "patch", 0],
};
for (const [name, [newStatus, oldStatus, u, rules, verb, expectErrs]] of Object.entries(deviceCases136)) {
  upstream++;
  check(`upstream TestAuthorizedForDeviceStatus/${name}`, () => {
    const a = fakeAuthorizer136({ rules });
    const errs = authorizedForDeviceStatus("status.devices", a.authorize, request(u, verb), newStatus, oldStatus);
    assert.equal(errs.length, expectErrs, errs.map(String).join("; "));
  });
}

// --- The newer copy: the authorizer's calls, and an authorizer that errs --------------------

const bindingCall = "update/resourceclaims/binding//";
const bindingCasesNewer = {
  "no allocation or reservedFor change, no check needed": [{ devices: [devStatus("d", "p", "dev")] }, {}, {}, undefined, [], []],
  "allocation changed, authorized": [{ allocation: singleNodeAllocation("node-1") }, {}, { [bindingCall]: "Allow" }, undefined, [], [bindingCall]],
  "allocation changed, denied": [{ allocation: singleNodeAllocation("node-1") }, {}, {}, undefined, ["binding"], [bindingCall]],
  "reservedFor changed, authorized": [{ reservedFor: reservedPod }, {}, { [bindingCall]: "Allow" }, undefined, [], [bindingCall]],
  "reservedFor changed, denied": [{ reservedFor: reservedPod }, {}, {}, undefined, ["binding"], [bindingCall]],
  "authorizer error but allows": [{ allocation: singleNodeAllocation("node-1") }, {}, { [bindingCall]: "Allow" }, new Error("transient error"),
    [], [bindingCall]],
  "authorizer error with deny": [{ allocation: singleNodeAllocation("node-1") }, {}, {}, new Error("transient error"), ["binding"], [bindingCall]],
};
const bindingPrefix = "changing status.allocation or status.reservedFor requires";
for (const [name, [newStatus, oldStatus, rules, err, expectErrs, expectCalls]] of Object.entries(bindingCasesNewer)) {
  upstream++;
  check(`upstream (newer copy) TestAuthorizedForBinding/${name}`, () => {
    const a = fakeAuthorizerNewer({ rules, err });
    const errs = authorizedForBinding("status", a.authorize, request(user(schedulerSA), "update"), newStatus, oldStatus);
    assert.equal(errs.length, expectErrs.length, errs.map(String).join("; "));
    for (const e of errs) assert.ok(String(e).includes(bindingPrefix), String(e));
    assert.deepEqual(a.calls, expectCalls);
  });
}

const assocCall = (verb, driver = driverName) => `associated-node:${verb}/resourceclaims/driver/default/${driver}`;
const arbCall = (verb, driver = driverName) => `arbitrary-node:${verb}/resourceclaims/driver/default/${driver}`;
const transient = new Error("transient error");
const deviceCasesNewer = {
  "no drivers modified": [{ devices: [devStatus(driverName, "pool", "device")] }, { devices: [devStatus(driverName, "pool", "device")] },
    user(saName), {}, undefined, "update", 0, []],
  "associated-node: allowed by associated-node verb": [{ allocation: singleNodeAllocation(nodeName), devices: devNew },
    { allocation: singleNodeAllocation(nodeName), devices: devOld }, user(saName, onNode(nodeName)), { [assocCall("update")]: "Allow" },
    undefined, "update", 0, [assocCall("update")]],
  "associated-node: denied by associated-node, allowed by arbitrary-node fallback": [{ allocation: singleNodeAllocation(nodeName), devices: devNew },
    { allocation: singleNodeAllocation(nodeName), devices: devOld }, user(saName, onNode(nodeName)), { [arbCall("update")]: "Allow" },
    undefined, "update", 0, [assocCall("update"), arbCall("update")]],
  "associated-node: neither verb allowed": [{ allocation: singleNodeAllocation(nodeName), devices: devNew },
    { allocation: singleNodeAllocation(nodeName), devices: devOld }, user(saName, onNode(nodeName)), {}, undefined, "update", 1,
    [assocCall("update"), arbCall("update")]],
  "SA on different node: only arbitrary-node checked, allowed": [{ allocation: singleNodeAllocation("other-node"), devices: devNew },
    { devices: devOld }, user(saName, onNode(nodeName)), { [arbCall("update")]: "Allow" }, undefined, "update", 0, [arbCall("update")]],
  "SA on different node: associated-node not checked, denied": [{ allocation: singleNodeAllocation("other-node"), devices: devNew },
    { devices: devOld }, user(saName, onNode(nodeName)), { [assocCall("update")]: "Allow" }, undefined, "update", 1, [arbCall("update")]],
  "controller (no node association): allowed by arbitrary-node": [{ allocation: singleNodeAllocation(nodeName), devices: devNew },
    { devices: devOld }, user(saName), { [arbCall("update")]: "Allow" }, undefined, "update", 0, [arbCall("update")]],
  "controller (no node association): denied": [{ allocation: singleNodeAllocation(nodeName), devices: devNew }, { devices: devOld },
    user(saName), {}, undefined, "update", 1, [arbCall("update")]],
  "multi-node claim (no single node in selector): only arbitrary-node": [{ allocation: multiNode, devices: devNew }, { devices: devOld },
    user(saName, onNode("node-a")), { [arbCall("update")]: "Allow" }, undefined, "update", 0, [arbCall("update")]],
  "patch verb propagated to authz check": [{ allocation: singleNodeAllocation(nodeName), devices: devNew }, { devices: devOld },
    user(saName, onNode(nodeName)), { [assocCall("patch")]: "Allow" }, undefined, "patch", 0, [assocCall("patch")]],
  "multiple drivers: one allowed, one denied": [
    { allocation: singleNodeAllocation(nodeName), devices: [devStatus("driver-a", "pool", "dev-new"), devStatus("driver-b", "pool", "dev-new")] },
    { allocation: singleNodeAllocation(nodeName), devices: [devStatus("driver-a", "pool", "dev-old"), devStatus("driver-b", "pool", "dev-old")] },
    user(saName, onNode(nodeName)), { [assocCall("update", "driver-a")]: "Allow" }, undefined, "update", 1,
    [assocCall("update", "driver-a"), assocCall("update", "driver-b"), arbCall("update", "driver-b")]],
  "authorizer error but allows (decision before error)": [{ allocation: singleNodeAllocation(nodeName), devices: devNew }, { devices: devOld },
    user(saName), { [arbCall("update")]: "Allow" }, transient, "update", 0, [arbCall("update")]],
  "authorizer error with deny": [{ allocation: singleNodeAllocation(nodeName), devices: devNew }, { devices: devOld },
    user(saName), {}, transient, "update", 1, [arbCall("update")]],
};
for (const [name, [newStatus, oldStatus, u, rules, err, verb, expectErrs, expectCalls]] of Object.entries(deviceCasesNewer)) {
  upstream++;
  check(`upstream (newer copy) TestAuthorizedForDeviceStatus/${name}`, () => {
    const a = fakeAuthorizerNewer({ rules, err });
    const errs = authorizedForDeviceStatus("status.devices", a.authorize, request(u, verb), newStatus, oldStatus);
    assert.equal(errs.length, expectErrs, errs.map(String).join("; "));
    for (const e of errs) assert.ok(String(e).includes("changing status.devices requires"), String(e));
    assert.deepEqual(a.calls, expectCalls);
  });
}

// --- TestNodeNameFromAllocation -------------------------------------------------------------

const selector = (...terms) => ({ nodeSelector: { nodeSelectorTerms: terms } });
const nodeNameCases = {
  "nil allocation": [undefined, ""],
  "nil node selector": [{}, ""],
  "exact single-node match": [singleNodeAllocation("worker-1"), "worker-1"],
  "multiple values": [selector({ matchFields: [{ key: "metadata.name", operator: "In", values: ["node-a", "node-b"] }] }), ""],
  "match expressions instead of match fields": [selector({ matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: ["node-1"] }] }), ""],
  "multiple terms": [selector({ matchFields: [{ key: "metadata.name", operator: "In", values: ["node-1"] }] },
    { matchFields: [{ key: "metadata.name", operator: "In", values: ["node-2"] }] }), ""],
  "wrong key": [selector({ matchFields: [{ key: "metadata.namespace", operator: "In", values: ["node-1"] }] }), ""],
  "wrong operator": [selector({ matchFields: [{ key: "metadata.name", operator: "NotIn", values: ["node-1"] }] }), ""],
  "extra match fields": [selector({ matchFields: [{ key: "metadata.name", operator: "In", values: ["node-1"] },
    { key: "metadata.name", operator: "In", values: ["node-1"] }] }), ""],
};
for (const [name, [allocation, expected]] of Object.entries(nodeNameCases)) {
  upstream++;
  check(`upstream TestNodeNameFromAllocation/${name}`, () => assert.equal(nodeNameFromAllocation(allocation), expected));
}

// --- TestSAAssociatedWithAllocatedNode ------------------------------------------------------

const validSA = user("system:serviceaccount:default:dra-driver-sa", onNode("worker-node-1"));
const associatedCases = {
  "SA on matching node": [validSA, "worker-node-1", true],
  "SA on different node": [validSA, "worker-node-2", false],
  "empty allocated node name": [validSA, "", false],
  "not a service account (kubelet identity)": [user("system:node:worker-node-1", onNode("worker-node-1")), "worker-node-1", false],
  "not a service account (regular user)": [user("jane-doe", onNode("worker-node-1")), "worker-node-1", false],
  "service account missing node name extra attribute": [user("system:serviceaccount:default:dra-driver-sa", {}), "worker-node-1", false],
  "service account with multiple node names in extra attribute": [user("system:serviceaccount:default:dra-driver-sa",
    { [NODE_NAME_KEY]: ["worker-node-1", "worker-node-2"] }), "worker-node-1", false],
  "service account with invalid node name format": [user("system:serviceaccount:default:dra-driver-sa", onNode("invalid_node_name!")),
    "invalid_node_name!", false],
};
for (const [name, [u, node, expected]] of Object.entries(associatedCases)) {
  upstream++;
  check(`upstream TestSAAssociatedWithAllocatedNode/${name}`, () => assert.equal(saAssociatedWithAllocatedNode(u, node), expected));
}

// --- TestStatusStrategyUpdate: the authorizer cases -----------------------------------------

const bindingUpdateError = 'User "test-user" cannot update resource "resourceclaims/binding" in API group "resource.k8s.io" at the cluster scope: denied';
const deviceAssociatedNodeUpdateError = 'User "system:serviceaccount:kube-system:dra-driver" cannot associated-node:update resource "resourceclaims/driver" in API group "resource.k8s.io" in the namespace "default": denied';
const deviceArbitraryNodeUpdateError = 'User "test-user" cannot arbitrary-node:update resource "resourceclaims/driver" in API group "resource.k8s.io" in the namespace "default": denied';
const [testRequest, testDriver, testPool, testDevice] = ["test-request", "test-driver", "test-pool", "test-device"];
const obj = { metadata: { name: "valid-claim", namespace: "kube-system" },
  spec: { devices: { requests: [{ name: "req-0", exactly: { deviceClassName: "class", allocationMode: "All" } }] } } };
const build = (...steps) => { const c = clone(obj); for (const s of steps) s(c); return c; };
const addRequest = (c) => c.spec.devices.requests.push({ name: testRequest });
const addResult = (c) => { ((c.status ??= {}).allocation ??= { devices: { results: [] } }).devices.results.push({ request: testRequest, driver: testDriver, pool: testPool, device: testDevice }); };
const addDevice = (c) => ((c.status ??= {}).devices ??= []).push({ driver: testDriver, pool: testPool, device: testDevice });
const onTestNode = (c) => { c.status.allocation.nodeSelector = singleNodeAllocation("test-node").nodeSelector; };
const deny = () => ({ decision: "Deny", reason: "denied" });
const testUserRequest = request({ name: "test-user", groups: ["system:authenticated"] }, "update");
const draDriverRequest = request({ name: "system:serviceaccount:kube-system:dra-driver", groups: ["system:authenticated"],
  extra: { [NODE_NAME_KEY]: ["test-node"] } }, "update");

const strategyCases = {
  "fail-update-fields-devices-status-without-permissions": {
    oldObj: build(addRequest, addResult), newObj: build(addRequest, addResult, addDevice), request: testUserRequest,
    expect: [deviceArbitraryNodeUpdateError],
  },
  "fail-update-fields-devices-status-associated-node-without-permissions": {
    oldObj: build(addRequest, addResult, onTestNode), newObj: build(addRequest, addResult, onTestNode, addDevice), request: draDriverRequest,
    expect: [deviceAssociatedNodeUpdateError],
  },
  // Adapted (header): the v1.36 strategy also refuses the dropped entry's driver.
  "fail-drop-status-deallocated-device-without-permissions": {
    oldObj: build(addRequest, addResult, addDevice), newObj: build(addRequest, addDevice), request: testUserRequest,
    expect: [bindingUpdateError, deviceArbitraryNodeUpdateError],
  },
};
for (const [name, tc] of Object.entries(strategyCases)) {
  upstream++;
  check(`upstream TestStatusStrategyUpdate/${name}`, () => {
    const gates = { ...gateDefaults("1.36"), DRAResourceClaimDeviceStatus: true, DRAAdminAccess: true };
    const oldObj = clone(tc.oldObj);
    const newObj = clone(tc.newObj);
    newObj.metadata.resourceVersion = "4";
    claimStatusPrepareForUpdate(gates, newObj, oldObj);
    const errs = claimStatusValidateUpdate(newObj, oldObj, { release: "1.36", gates, authz: { authorize: deny, request: tc.request } });
    assert.equal(errs.length, tc.expect.length, errs.map(String).join("\n"));
    tc.expect.forEach((e, i) => assert.ok(String(errs[i]).includes(e), `${errs[i]} should contain ${e}`));
    assert.ok(errs.every((e) => String(e).includes(" is forbidden: ")), "the v1.36-era copy: errors containing \"is forbidden\"");
  });
}

// --- Cases of our own -----------------------------------------------------------------------

const DRIVER = "rdma.example.com";
const driverSA = (node) => ({ name: "system:serviceaccount:kube-system:rdma-shared-dp", extra: node ? { [NODE_NAME_KEY]: [node] } : {} });
const applyRequest = (node) => ({ user: driverSA(node), verb: "patch", resourceRequest: true, apiGroup: "resource.k8s.io", apiVersion: "v1",
  resource: "resourceclaims", subresource: "status", namespace: "team-a", name: "c1" });
const claimOn = (node) => ({ metadata: { name: "c1", namespace: "team-a", resourceVersion: "7", uid: "11111111-2222-3333-4444-555555555555" },
  spec: { devices: { requests: [{ name: "rdma", exactly: { deviceClassName: "hca-ib" } }] } },
  status: { allocation: { devices: { results: [{ request: "rdma", driver: DRIVER, pool: `${node}/hca-ib`, device: "hca-0" }] },
    nodeSelector: singleNodeAllocation(node).nodeSelector } } });
const withEntry = (c) => { const n = clone(c); n.status.devices = [{ driver: DRIVER, pool: n.status.allocation.devices.results[0].pool, device: "hca-0" }]; return n; };
// RBAC with the driver's associated-node:patch on its own name only.
const associatedOnly = (a) => ({ decision: a.verb === "associated-node:patch" && a.resource === "resourceclaims" &&
  a.subresource === "driver" && a.name === DRIVER ? "Allow" : "NoOpinion", reason: "" });

check("the 422 a node-local driver gets writing a claim of another node (v1.36 texts, RBAC's empty reason)", () => {
  const old = claimOn("n2");
  const errs = authorizedForDeviceStatus("status.devices", associatedOnly, applyRequest("n1"), withEntry(old).status, old.status);
  assert.equal(invalidStatus("ResourceClaim", "resource.k8s.io", "c1", errs).message,
    'ResourceClaim.resource.k8s.io "c1" is invalid: status.devices: Forbidden: changing status.devices requires ' +
    'resource="resourceclaims/driver", verb="[arbitrary-node:patch]" permission: resourceclaims.resource.k8s.io "rdma.example.com" is forbidden: ' +
    'User "system:serviceaccount:kube-system:rdma-shared-dp" cannot arbitrary-node:patch resource "resourceclaims/driver" in API group ' +
    '"resource.k8s.io" in the namespace "team-a"');
  assert.deepEqual(errs.map((e) => [e.type, e.field]), [["FieldValueForbidden", "status.devices"]]);
});
check("the same driver on the claim's own node may write; without the node claim it may not; both verbs are listed, the first refusal told", () => {
  const old = claimOn("n1");
  assert.deepEqual(authorizedForDeviceStatus("status.devices", associatedOnly, applyRequest("n1"), withEntry(old).status, old.status), []);
  const none = authorizedForDeviceStatus("status.devices", () => ({ decision: "NoOpinion", reason: "" }), applyRequest("n1"), withEntry(old).status, old.status);
  assert.match(String(none[0]), /verb="\[associated-node:patch arbitrary-node:patch\]" permission: .* cannot associated-node:patch resource/);
  assert.match(String(authorizedForDeviceStatus("status.devices", associatedOnly, applyRequest(""), withEntry(old).status, old.status)[0]),
    /verb="\[arbitrary-node:patch\]"/);
});
check("another driver's entries changed need that driver's name; each refused driver is one error, in sorted order", () => {
  const old = claimOn("n1");
  const next = withEntry(old);
  next.status.devices.push({ driver: "z.example.com", pool: "p", device: "d" }, { driver: "a.example.com", pool: "p", device: "d" });
  const errs = authorizedForDeviceStatus("status.devices", associatedOnly, applyRequest("n1"), next.status, old.status);
  assert.deepEqual(errs.map((e) => /"([a-z.]+)" is forbidden/.exec(e.detail)[1]), ["a.example.com", "z.example.com"]);
});
check("removing an entry needs the permission too; re-applying the same entry needs none (no authorizer call)", () => {
  const old = withEntry(claimOn("n2"));
  const removed = clone(old);
  delete removed.status.devices;
  assert.equal(authorizedForDeviceStatus("status.devices", associatedOnly, applyRequest("n1"), removed.status, old.status).length, 1);
  let calls = 0;
  assert.deepEqual(authorizedForDeviceStatus("status.devices", () => { calls++; return { decision: "NoOpinion" }; }, applyRequest("n1"),
    clone(old).status, old.status), []);
  assert.equal(calls, 0);
  // A condition's time written in another form of the same instant is no change (Semantic.DeepEqual).
  const a = clone(old);
  a.status.devices[0].conditions = [{ type: "Ready", status: "True", reason: "R", lastTransitionTime: "2026-01-02T03:04:05Z" }];
  const b = clone(a);
  b.status.devices[0].conditions[0].lastTransitionTime = "2026-01-02T04:04:05+01:00";
  assert.deepEqual(sorted(getModifiedDrivers(b.status, a.status)), []);
});
check("checkAuthorization: an Allow passes whatever the error; else reason, \"<error>: <reason>\" or \"<error>\" after the Forbidden text", () => {
  const attrs = applyRequest("n1");
  assert.equal(checkAuthorization(() => ({ decision: "Allow", error: new Error("x") }), attrs), null);
  const tail = (r) => checkAuthorization(() => r, attrs).split(' in the namespace "team-a"')[1];
  assert.equal(tail({ decision: "Deny", reason: "denied" }), ": denied");
  assert.equal(tail({ decision: "Deny", reason: "r", error: new Error("boom") }), ": boom: r");
  assert.equal(tail({ decision: "NoOpinion", error: new Error("boom") }), ": boom");
  assert.equal(tail({ decision: "NoOpinion", reason: "" }), "");
});
check("no request attributes: an internal error at the path (GetAuthorizerAttributes)", () => {
  const old = claimOn("n1");
  assert.deepEqual(authorizedForDeviceStatus("status.devices", associatedOnly, null, withEntry(old).status, old.status).map(String),
    ["status.devices: Internal error: cannot build authorizer attributes: no RequestInfo found in the context"]);
});
check("the strategy: checks from 1.36 with DRAResourceClaimGranularStatusAuthorization on and an authorizer given; not before 1.36, nor with the gate off, nor without an authorizer", () => {
  const old = claimOn("n2");
  const errsAt = (release, gateOverride, withAuthz = true) => {
    const gates = { ...gateDefaults(release), ...gateOverride };
    const c = withEntry(old);
    claimStatusPrepareForUpdate(gates, c, old);
    return claimStatusValidateUpdate(c, old, { release, gates, ...(withAuthz ? { authz: { authorize: associatedOnly, request: applyRequest("n1") } } : {}) })
      .map((e) => e.field);
  };
  assert.deepEqual(["1.34", "1.35", "1.36", "1.37"].map((r) => gateDefaults(r).DRAResourceClaimGranularStatusAuthorization), [false, false, true, true]);
  assert.deepEqual(errsAt("1.34"), []);
  assert.deepEqual(errsAt("1.35"), []);
  assert.deepEqual(errsAt("1.35", { DRAResourceClaimGranularStatusAuthorization: true }), [], "the code is not in 1.35");
  assert.deepEqual(errsAt("1.36"), ["status.devices"]);
  assert.deepEqual(errsAt("1.37"), ["status.devices"]);
  assert.deepEqual(errsAt("1.36", { DRAResourceClaimGranularStatusAuthorization: false }), []);
  assert.deepEqual(errsAt("1.37", {}, false), [], "no authorizer (the fake without /rbac): nothing checked");
});

finish(`claim status authorization (${upstream} upstream cases)`);
