// Tests of claim_status_validation.mjs and of the fake API server's resourceclaims/status API:
// the cases of upstream's TestValidateClaimStatusUpdate
// (pkg/apis/resource/validation/validation_resourceclaim_test.go) and TestStatusStrategyUpdate
// (pkg/registry/resource/resourceclaim/strategy_test.go), transcribed by case name, then cases
// of our own: DRAResourceClaimDeviceStatus's release table, the rules that differ between the
// releases the fake serves, the pieces of Go this depends on (IP parsing, JSON syntax errors,
// UUIDs), and the fake server's server-side apply of status.devices end to end.
// Usage: node claim_status_validation_test.mjs (exit status 0 when all pass).
//
// TestValidateClaimStatusUpdate: all 56 cases of the newest copy that could be read (a fork at
// the 1.35/1.36 cycle; kubernetes/kubernetes's own stored copy is older). They run at the
// release the upstream validation.go is of (1.38 development cycle, as kube_validation_test.mjs
// does); the validation itself does not read the feature gates the cases set. Expected errors
// are compared as upstream's assertFailures does (type, field, detail substring, origin where
// the case names one) and the bad value where it is a string, a number or a SharedDeviceID
// (printed by its String method, as Go does).
// TestStatusStrategyUpdate: 26 of its 28 cases (the copy with the 1.36 authorizer). Each runs
// with the case's gates over the defaults of the release it emulates (1.35 when the case turns
// DRAAdminAccess off, as upstream's SetFeatureGateEmulationVersionDuringTest does, else 1.36);
// the object after PrepareForUpdate is compared with the expected one, the validation errors
// by count and substring, and the namespace lookups as the fake clientset records them.
//
// Adapted, not skipped (and why):
//  - BadValues that are Go structs or typed nil slices ("invalid-allocation-modification":
//    the AllocationResult; the lacking-binding-*-conditions cases: []string(nil)) are not
//    compared: Go prints them with %#v, which the port does not reproduce.
//  - Times (metav1.Now() in conditions) are a fixed RFC 3339 instant; the zero
//    metav1.Time that "invalid-reserved-deleted" points deletionTimestamp at is written as
//    0001-01-01T00:00:00Z (JSON would print a zero metav1.Time as null; here the object is
//    used as is, as the Go case uses its pointer).
//  - RawExtension values are written as RawJSON (their bytes), as the Go cases write Raw.
// Not here: TestStatusStrategyUpdate "fail-update-fields-devices-status-without-permissions"
// and "fail-drop-status-deallocated-device-without-permissions" (and the newer copy's
// "...-associated-node-without-permissions"): they test the granular status authorization of
// 1.36+ with a denying authorizer, and are transcribed in claim_status_authz_test.mjs.
// The last cases start the fake with RBAC (/rbac over images/components/dra/rbac.yaml, as the
// driver's service account on node n1): a claim GET allowed, a status apply refused 403 without
// a patch rule on resourceclaims/status, and with that rule and associated-node:patch on
// resourceclaims/driver: on 1.36 an apply to a claim allocated to n1 passes, to one allocated to
// n2 is refused 422 with upstream's text, on 1.35 (no such gate) it passes; then an apply that
// names metadata.uid (the stored one passes, another is 422 "field is immutable").
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { check, finish } from "./check.mjs";
import { invalidStatus } from "./kube_validation.mjs";
import { DRA_ADMIN_NAMESPACE_LABEL_KEY, GATE_HISTORY, LOCKED, RELEASES, gateDefaults, lockedGateError } from "./kube_release.mjs";
import {
  CLAIM_LIMITS, GoStringer, RawJSON, ValidateResourceClaimStatusUpdate, claimStatusPrepareForUpdate, claimStatusValidateUpdate,
  goJSONSyntaxError, isValidInterfaceAddress,
} from "./claim_status_validation.mjs";
import {
  E, STRUCT, admin, adminDelete, apiRequest, assertFailures, runServerToExit, startServer as startFake, stopServer,
} from "./test_harness.mjs";

const clone = (v) => (v === undefined ? undefined : structuredClone(v));
const MAIN = "main";
let upstream = 0;

// Expected errors are test_harness.mjs's E (STRUCT for a Go struct), compared by its assertFailures.
const sid = (s) => new GoStringer(s); // structured.MakeSharedDeviceID(...) as a BadValue

// --- Fixtures of validation_resourceclaim_test.go (JSON form of resource.k8s.io) ------------

const goodName = "foo";
const goodName2 = "bar";
const badName = "!@#$%^";
const goodNS = "ns";
const badSubrequestName = "&^%$";
const badRequestFormat = `${goodName}/${goodName}/${goodName}`;
const badFullSubrequestName = `${badName}/${badSubrequestName}`;
const goodShareID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa";
const goodShareID2 = "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb";
const badLengthShareID = "a";
const badFormatShareID = "Aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa";
const NOW = "2026-01-02T03:04:05Z"; // metav1.Now()
const rep = (s, n) => s.repeat(n);

const validClaimSpec = { devices: { requests: [{ name: goodName, exactly: { deviceClassName: goodName, allocationMode: "ExactCount", count: 1 } }] } };
const validClaimSpecWithFirstAvailable = { devices: { requests: [{ name: goodName, firstAvailable: [
  { name: goodName, deviceClassName: goodName, allocationMode: "ExactCount", count: 1 },
  { name: goodName2, deviceClassName: goodName, allocationMode: "ExactCount", count: 1 },
] }] } };
const testClaim = (name, namespace, spec) => ({ metadata: { name, namespace }, spec: clone(spec) });
const validClaim = testClaim(goodName, goodNS, validClaimSpec);
const result = (extra = {}) => ({ request: goodName, driver: goodName, pool: goodName, device: goodName, adminAccess: false, ...extra });
const validAllocatedClaim = { ...clone(validClaim), status: { allocation: { devices: { results: [result()] } } } };
const validAllocatedClaimOld = clone(validAllocatedClaim);
delete validAllocatedClaimOld.status.allocation.devices.results[0].adminAccess; // Not required in 1.31.

const cond = (i) => ({ type: `test-${i}`, status: "True", reason: "test_reason", lastTransitionTime: NOW, observedGeneration: 0 });
const conds = (n) => Array.from({ length: n }, (_, i) => cond(i));
const raw = () => new RawJSON('{"kind": "foo", "apiVersion": "dra.example.com/v1"}');
const bigRaw = (n) => new RawJSON(`{"str": "${rep("x", n - 9 - 2)}"}`); // n bytes
const reservations = (n) => Array.from({ length: n }, (_, i) => ({ resource: "pods", name: `foo-${i}`, uid: `${i}` }));
const withAllocation = (claim, allocation) => {
  claim.status ??= {};
  claim.status.allocation = allocation;
  return claim;
};
const opaque = (extra) => ({ source: "FromClaim", opaque: { driver: "dra.example.com", parameters: raw() }, ...extra });

const labelMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const labelValueMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const conditionValidationErrMessage = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const requestRefMsg = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";
const notAllocatedMsg = "must be an allocated device in the claim";
const uuidLengthMsg = "error validating uid: invalid UUID length: 1";
const uuidFormMsg = "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters";
const cidrMsg = "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)";

const dev = (i) => `status.devices[${i}]`;
const res0 = "status.allocation.devices.results[0]";
const cfg = (i) => `status.allocation.devices.config[${i}]`;
const status = (devices) => (claim) => { claim.status.devices = devices; return claim; };
const fooDevice = (extra = {}) => ({ driver: goodName, pool: goodName, device: goodName, ...extra });
const subrequestAllocation = (request) => (claim) => withAllocation(claim, { devices: { results: [result({ request })] } });
const bindingAllocation = (bindingConditions, bindingFailureConditions) => (claim) => withAllocation(claim, { devices: { results: [
  result({ ...(bindingConditions ? { bindingConditions } : {}), ...(bindingFailureConditions ? { bindingFailureConditions } : {}) })] } });
const invalidLabelSelector = () => ({ nodeSelectorTerms: [{ matchExpressions: [{ key: "foo", operator: "In", values: ["-1"] }] }] });
const countTwoClaim = () => testClaim(goodName, goodNS, { devices: { requests: [{ ...validClaimSpec.devices.requests[0],
  exactly: { ...validClaimSpec.devices.requests[0].exactly, count: 2 } }] } });
const sharedResults = (...ids) => ({ devices: { results: ids.map((shareID) => result({ shareID })) } });
const deviceStatusCases = (suffix, deviceStatusFeatureGate) => ({
  [`invalid-device-status-duplicate${suffix}`]: {
    want: [E.duplicate(`${dev(0)}.networkData.ips[1]`, "2001:db8::1/64"), E.duplicate(dev(1), sid("foo/foo/foo"))],
    old: validAllocatedClaim,
    update: status([fooDevice({ networkData: { ips: ["2001:db8::1/64", "2001:db8::1/64"] } }), fooDevice()]),
    deviceStatusFeatureGate,
  },
  [`invalid-device-status-duplicate-with-share-id${suffix}`]: {
    want: [E.duplicate(dev(1), sid(`foo/foo/foo/${goodShareID}`))],
    old: (() => { const c = clone(validAllocatedClaim); c.status.allocation.devices.results[0].shareID = goodShareID; return c; })(),
    update: status([fooDevice({ shareID: goodShareID }), fooDevice({ shareID: goodShareID })]),
    deviceStatusFeatureGate, consumableCapacityFeatureGate: deviceStatusFeatureGate,
  },
});

// TestValidateClaimStatusUpdate
const claimStatusScenarios = {
  "valid-no-op-update": { old: validClaim, update: (c) => c },
  "valid-add-allocation-empty": { old: validClaim, update: (c) => withAllocation(c, {}) },
  "valid-add-allocation-non-empty": { old: validClaim, update: (c) => withAllocation(c, { devices: { results: [result()] } }) },
  "invalid-add-allocation-bad-request": {
    want: [E.invalid(`${res0}.request`, badName, labelMsg), E.invalid(`${res0}.request`, badName, requestRefMsg)],
    old: validClaim, update: (c) => withAllocation(c, { devices: { results: [result({ request: badName })] } }),
  },
  "okay-add-allocation-missing-admin-access": {
    adminAccess: false, old: validClaim,
    update: (c) => { const r = result(); delete r.adminAccess; return withAllocation(c, { devices: { results: [r] } }); },
  },
  "invalid-node-selector": {
    want: [E.required("status.allocation.nodeSelector.nodeSelectorTerms", "must have at least one node selector term")],
    old: validClaim, update: (c) => withAllocation(c, { nodeSelector: {} }),
  },
  "add-reservation": { old: validAllocatedClaim, update: (c) => { c.status.reservedFor = reservations(CLAIM_LIMITS.ResourceClaimReservedForMaxSize); return c; } },
  "add-reservation-old-claim": { old: validAllocatedClaimOld, update: (c) => { c.status.reservedFor = reservations(256); return c; } },
  "add-reservation-and-allocation": {
    old: validClaim, update: (c) => { c.status = clone(validAllocatedClaim.status); c.status.reservedFor = reservations(256); return c; },
  },
  "invalid-reserved-for-too-large": {
    want: [E.tooMany("status.reservedFor", 257, 256)],
    old: validAllocatedClaim, update: (c) => { c.status.reservedFor = reservations(257); return c; },
  },
  "invalid-reserved-for-duplicate": {
    want: [E.duplicate("status.reservedFor[1]", "1")],
    old: validAllocatedClaim,
    update: (c) => { c.status.reservedFor = [0, 1].map(() => ({ resource: "pods", name: "foo", uid: "1" })); return c; },
  },
  "invalid-reserved-for-no-allocation": {
    want: [E.forbidden("status.reservedFor", "may not be specified when `allocated` is not set")],
    old: validClaim, update: (c) => { c.status = { reservedFor: [{ resource: "pods", name: "foo", uid: "1" }] }; return c; },
  },
  "invalid-reserved-for-no-resource": {
    want: [E.required("status.reservedFor[0].resource")],
    old: validAllocatedClaim, update: (c) => { c.status.reservedFor = [{ name: "foo", uid: "1" }]; return c; },
  },
  "invalid-reserved-for-no-name": {
    want: [E.required("status.reservedFor[0].name")],
    old: validAllocatedClaim, update: (c) => { c.status.reservedFor = [{ resource: "pods", uid: "1" }]; return c; },
  },
  "invalid-reserved-for-no-uid": {
    want: [E.required("status.reservedFor[0].uid")],
    old: validAllocatedClaim, update: (c) => { c.status.reservedFor = [{ resource: "pods", name: "foo" }]; return c; },
  },
  "invalid-reserved-deleted": {
    want: [E.forbidden("status.reservedFor", "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set")],
    old: (() => { const c = clone(validAllocatedClaim); c.metadata.deletionTimestamp = "0001-01-01T00:00:00Z"; return c; })(),
    update: (c) => { c.status.reservedFor = [{ resource: "pods", name: "foo", uid: "1" }]; return c; },
  },
  "invalid-allocation-modification": {
    want: [E.invalid("status.allocation", STRUCT, "field is immutable")],
    old: validAllocatedClaim, update: (c) => { c.status.allocation.devices.results[0].driver += "-2"; return c; },
  },
  "invalid-request-name": {
    want: [E.invalid(`${cfg(0)}.requests[1]`, badName, labelMsg), E.invalid(`${cfg(0)}.requests[1]`, badName, requestRefMsg)],
    old: validClaim,
    update: (c) => {
      withAllocation(c, clone(validAllocatedClaim.status.allocation));
      c.status.allocation.devices.config = [opaque({ requests: [c.spec.devices.requests[0].name, badName] })];
      return c;
    },
  },
  "configuration": {
    want: [
      E.required(`${cfg(1)}.source`),
      E.notSupported(`${cfg(2)}.source`, "no-such-source", ["FromClaim", "FromClass"]),
      E.required(`${cfg(3)}.opaque`),
      E.required(`${cfg(4)}.opaque.driver`),
      E.required(`${cfg(4)}.opaque.parameters`),
      E.tooLong(`${cfg(6)}.opaque.parameters`, CLAIM_LIMITS.OpaqueParametersMaxLength),
    ],
    old: validClaim,
    update: (c) => {
      withAllocation(c, clone(validAllocatedClaim.status.allocation));
      c.status.allocation.devices.config = [
        opaque(),
        opaque({ source: "" }),
        opaque({ source: "no-such-source" }),
        { source: "FromClaim" },
        { source: "FromClaim", opaque: {} },
        { source: "FromClaim", opaque: { driver: goodName, parameters: bigRaw(CLAIM_LIMITS.OpaqueParametersMaxLength) } },
        { source: "FromClaim", opaque: { driver: goodName, parameters: bigRaw(CLAIM_LIMITS.OpaqueParametersMaxLength + 1) } },
      ];
      return c;
    },
  },
  "valid-configuration-update": {
    old: (() => {
      const c = withAllocation(clone(validClaim), clone(validAllocatedClaim.status.allocation));
      c.status.allocation.devices.config = [{ source: "FromClaim",
        opaque: { driver: goodName, parameters: bigRaw(CLAIM_LIMITS.OpaqueParametersMaxLength + 1) } }];
      return c;
    })(),
    update: (c) => c,
  },
  "valid-network-device-status": {
    old: validAllocatedClaim,
    update: status([fooDevice({ conditions: conds(8), data: raw(), networkData: {
      interfaceName: rep("x", 256), hardwareAddress: rep("x", 128),
      ips: ["10.9.8.0/24", "2001:db8::/64", "10.9.8.1/24", "2001:db8::1/64", ...Array.from({ length: 12 }, (_, i) => `10.9.8.${i + 2}/24`)],
    } })]),
    deviceStatusFeatureGate: true,
  },
  ...deviceStatusCases("", true),
  "invalid-network-device-status": {
    want: [
      E.tooLong(`${dev(0)}.networkData.interfaceName`, CLAIM_LIMITS.NetworkDeviceDataInterfaceNameMaxLength),
      E.tooLong(`${dev(0)}.networkData.hardwareAddress`, CLAIM_LIMITS.NetworkDeviceDataHardwareAddressMaxLength),
      E.invalid(`${dev(0)}.networkData.ips[0]`, "300.9.8.0/24", cidrMsg),
      E.invalid(`${dev(0)}.networkData.ips[1]`, "010.009.008.000/24", 'must be in canonical form ("10.9.8.0/24")'),
      E.invalid(`${dev(0)}.networkData.ips[2]`, "2001:0db8::1/64", 'must be in canonical form ("2001:db8::1/64")'),
    ],
    old: validAllocatedClaim,
    update: status([fooDevice({ networkData: { interfaceName: rep("x", 257), hardwareAddress: rep("x", 129),
      ips: ["300.9.8.0/24", "010.009.008.000/24", "2001:0db8::1/64"] } })]),
    deviceStatusFeatureGate: true,
  },
  "invalid-data-device-status": {
    want: [E.invalid(`${dev(0)}.data`, "<value omitted>", "error parsing data as JSON: invalid character 'o' in literal false (expecting 'a')")],
    old: validAllocatedClaim, update: status([fooDevice({ data: new RawJSON("foo") })]), deviceStatusFeatureGate: true,
  },
  "invalid-data-device-status-limits": {
    want: [
      E.tooMany(`${dev(0)}.conditions`, 9, 8),
      E.tooLong(`${dev(0)}.data`, CLAIM_LIMITS.AllocatedDeviceStatusDataMaxLength),
      E.tooMany(`${dev(0)}.networkData.ips`, 17, 16),
    ],
    old: validAllocatedClaim,
    update: status([fooDevice({ data: bigRaw(CLAIM_LIMITS.AllocatedDeviceStatusDataMaxLength + 1), conditions: conds(9),
      networkData: { ips: Array.from({ length: 17 }, (_, i) => `10.9.8.${i}/24`) } })]),
    deviceStatusFeatureGate: true,
  },
  "invalid-device-status-no-device": {
    want: [E.invalid(dev(0), sid("b/a/r"), notAllocatedMsg)],
    old: validAllocatedClaim, update: status([{ driver: "b", pool: "a", device: "r" }]), deviceStatusFeatureGate: true,
  },
  ...deviceStatusCases("-disabled-feature-gate", false),
  "invalid-network-device-status-disabled-feature-gate": {
    want: [
      E.tooLong(`${dev(0)}.networkData.interfaceName`, 256),
      E.tooLong(`${dev(0)}.networkData.hardwareAddress`, 128),
      E.invalid(`${dev(0)}.networkData.ips[0]`, "300.9.8.0/24", cidrMsg),
    ],
    old: validAllocatedClaim,
    update: status([fooDevice({ networkData: { interfaceName: rep("x", 257), hardwareAddress: rep("x", 129), ips: ["300.9.8.0/24"] } })]),
    deviceStatusFeatureGate: false,
  },
  "invalid-data-device-status-disabled-feature-gate": {
    want: [E.invalid(`${dev(0)}.data`, "<value omitted>", "error parsing data as JSON: invalid character 'o' in literal false (expecting 'a')")],
    old: validAllocatedClaim, update: status([fooDevice({ data: new RawJSON("foo") })]), deviceStatusFeatureGate: false,
  },
  "invalid-data-device-status-limits-feature-gate": {
    want: [E.tooMany(`${dev(0)}.conditions`, 9, 8), E.tooLong(`${dev(0)}.data`, 10240), E.tooMany(`${dev(0)}.networkData.ips`, 17, 16)],
    old: validAllocatedClaim,
    update: status([fooDevice({ data: bigRaw(10241), conditions: conds(9),
      networkData: { ips: Array.from({ length: 17 }, (_, i) => `10.9.8.${i}/24`) } })]),
    deviceStatusFeatureGate: false,
  },
  "invalid-device-status-no-device-disabled-feature-gate": {
    want: [E.invalid(dev(0), sid("b/a/r"), notAllocatedMsg)],
    old: validAllocatedClaim, update: status([{ driver: "b", pool: "a", device: "r" }]), deviceStatusFeatureGate: false,
  },
  "invalid-update-invalid-label-value": {
    want: [E.invalid("status.allocation.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[0]", "-1", labelValueMsg)],
    old: validClaim,
    update: (c) => { withAllocation(c, clone(validAllocatedClaim.status.allocation)).status.allocation.nodeSelector = invalidLabelSelector(); return c; },
  },
  "valid-update-with-invalid-label-value": {
    old: (() => { const c = clone(validAllocatedClaim); c.status.allocation.nodeSelector = invalidLabelSelector(); return c; })(),
    update: (c) => { c.status.reservedFor = reservations(256); return c; },
  },
  "valid-add-allocation-with-sub-requests": {
    old: testClaim(goodName, goodNS, validClaimSpecWithFirstAvailable), update: subrequestAllocation(`${goodName}/${goodName}`),
    prioritizedListFeatureGate: true,
  },
  "invalid-add-allocation-with-sub-requests-invalid-format": {
    want: [E.invalid(`${res0}.request`, badRequestFormat, requestRefMsg)],
    old: testClaim(goodName, goodNS, validClaimSpecWithFirstAvailable), update: subrequestAllocation(badRequestFormat),
    prioritizedListFeatureGate: true,
  },
  "invalid-add-allocation-with-sub-requests-no-corresponding-sub-request": {
    want: [E.invalid(`${res0}.request`, "foo/baz", requestRefMsg)],
    old: testClaim(goodName, goodNS, validClaimSpecWithFirstAvailable), update: subrequestAllocation("foo/baz"),
    prioritizedListFeatureGate: true,
  },
  "invalid-add-allocation-with-sub-requests-invalid-request-names": {
    want: [
      E.invalid(`${res0}.request`, badName, labelMsg),
      E.invalid(`${res0}.request`, badSubrequestName, labelMsg),
      E.invalid(`${res0}.request`, badFullSubrequestName, requestRefMsg),
    ],
    old: testClaim(goodName, goodNS, validClaimSpecWithFirstAvailable), update: subrequestAllocation(badFullSubrequestName),
    prioritizedListFeatureGate: true,
  },
  "add-allocation-old-claim-with-prioritized-list": {
    old: testClaim(goodName, goodNS, validClaimSpecWithFirstAvailable), update: subrequestAllocation("foo/bar"),
    prioritizedListFeatureGate: false,
  },
  "good-binding-conditions": {
    old: validClaim,
    update: bindingAllocation(["example.com/condition1", "condition2", "condition3", "condition4"],
      ["example.com/condition5", "condition6", "condition7", "condition8"]),
  },
  "too-many-binding-conditions": {
    want: [E.tooMany(`${res0}.bindingConditions`, 5, 4)],
    old: validClaim, update: bindingAllocation(["condition1", "condition2", "condition3", "condition4", "condition5"], ["condition6", "condition7"]),
  },
  "too-many-binding-failure-conditions": {
    want: [E.tooMany(`${res0}.bindingFailureConditions`, 5, 4)],
    old: validClaim, update: bindingAllocation(["condition1", "condition2"], ["condition3", "condition4", "condition5", "condition6", "condition7"]),
  },
  "invalid-binding-conditions": {
    want: [E.invalid(`${res0}.bindingConditions[1]`, "condition2!", conditionValidationErrMessage)],
    old: validClaim, update: bindingAllocation(["condition1", "condition2!"], ["condition3", "condition4"]),
  },
  "invalid-binding-failure-conditions": {
    want: [E.invalid(`${res0}.bindingFailureConditions[1]`, "condition4!", conditionValidationErrMessage)],
    old: validClaim, update: bindingAllocation(["condition1", "condition2"], ["condition3", "condition4!"]),
  },
  "lacking-binding-conditions-claim-has-binding-failure-conditions": {
    want: [E.invalid(`${res0}.bindingConditions`, STRUCT, "bindingConditions are required to use bindingFailureConditions")],
    old: validClaim, update: bindingAllocation(null, ["condition3", "condition4"]),
  },
  "lacking-binding-failure-conditions-claim-has-binding-conditions": {
    want: [E.invalid(`${res0}.bindingFailureConditions`, STRUCT, "bindingFailureConditions are required to use bindingConditions")],
    old: validClaim, update: bindingAllocation(["condition1", "condition2"], null),
  },
  "valid-add-allocation-with-consumable-capacity-feature-on": {
    old: testClaim(goodName, goodNS, validClaimSpec), update: (c) => withAllocation(c, { devices: { results: [result()] } }),
    consumableCapacityFeatureGate: true,
  },
  "valid-add-multi-alloc-devices": {
    old: countTwoClaim(), update: (c) => withAllocation(c, sharedResults(goodShareID, goodShareID2)), consumableCapacityFeatureGate: true,
  },
  "valid-add-multi-alloc-devices-with-device-status": {
    old: countTwoClaim(),
    update: (c) => { withAllocation(c, sharedResults(goodShareID, goodShareID2));
      c.status.devices = [fooDevice({ shareID: goodShareID }), fooDevice({ shareID: goodShareID2 })]; return c; },
    consumableCapacityFeatureGate: true, deviceStatusFeatureGate: true,
  },
  "valid-add-multi-alloc-devices-with-consumed-capacity": {
    old: testClaim(goodName, goodNS, validClaimSpec),
    update: (c) => withAllocation(c, { devices: { results: [result({ shareID: goodShareID, consumedCapacity: { [goodName]: "1" } })] } }),
    consumableCapacityFeatureGate: true,
  },
  "valid-add-enable-both-device-status-and-consumable-capacity-features": {
    old: testClaim(goodName, goodNS, validClaimSpec),
    update: (c) => { withAllocation(c, sharedResults(goodShareID)); c.status.devices = [fooDevice({ shareID: goodShareID })]; return c; },
    consumableCapacityFeatureGate: true, deviceStatusFeatureGate: true,
  },
  "invalid-add-allocated-status-no-share-id": {
    want: [E.invalid(dev(0), sid("foo/foo/foo"), notAllocatedMsg)],
    old: testClaim(goodName, goodNS, validClaimSpec),
    update: (c) => { withAllocation(c, sharedResults(goodShareID)); c.status.devices = [fooDevice()]; return c; },
    consumableCapacityFeatureGate: true, deviceStatusFeatureGate: true,
  },
  "invalid-add-allocated-status-mismatch-share-id": {
    want: [E.invalid(dev(0), sid(`foo/foo/foo/${goodShareID2}`), notAllocatedMsg)],
    old: testClaim(goodName, goodNS, validClaimSpec),
    update: (c) => { withAllocation(c, sharedResults(goodShareID)); c.status.devices = [fooDevice({ shareID: goodShareID2 })]; return c; },
    consumableCapacityFeatureGate: true, deviceStatusFeatureGate: true,
  },
  "invalid-add-allocated-status-invalid-share-id": {
    want: [
      E.invalid(`${dev(0)}.shareID`, badLengthShareID, uuidLengthMsg),
      E.invalid(`${dev(1)}.shareID`, badFormatShareID, uuidFormMsg),
      E.invalid("status.allocation.devices.results[0].shareID", badLengthShareID, uuidLengthMsg),
      E.invalid("status.allocation.devices.results[1].shareID", badFormatShareID, uuidFormMsg),
    ],
    old: testClaim(goodName, goodNS, validClaimSpec),
    update: (c) => { withAllocation(c, sharedResults(badLengthShareID, badFormatShareID));
      c.status.devices = [fooDevice({ shareID: badLengthShareID }), fooDevice({ shareID: badFormatShareID })]; return c; },
    consumableCapacityFeatureGate: true, deviceStatusFeatureGate: true,
  },
  "valid-add-allocated-status-with-share-id-disabled-feature-gate": {
    old: testClaim(goodName, goodNS, validClaimSpec),
    update: (c) => { withAllocation(c, sharedResults(goodShareID)); c.status.devices = [fooDevice({ device: "foo", shareID: goodShareID })]; return c; },
    consumableCapacityFeatureGate: false, deviceStatusFeatureGate: true,
  },
};

for (const [name, sc] of Object.entries(claimStatusScenarios)) {
  upstream++;
  check(`upstream TestValidateClaimStatusUpdate/${name}`, () => {
    const old = clone(sc.old);
    old.metadata.resourceVersion = "1";
    const updated = sc.update(clone(old));
    assertFailures(sc.want ?? [], ValidateResourceClaimStatusUpdate(updated, old, { release: MAIN }));
  });
}
check("TestValidateClaimStatusUpdate: all 56 upstream cases transcribed", () => assert.equal(Object.keys(claimStatusScenarios).length, 56));

// --- TestStatusStrategyUpdate (pkg/registry/resource/resourceclaim/strategy_test.go) --------

const [req0, subReq0, req0SubReq0] = ["req-0", "subreq-0", "req-0/subreq-0"];
const [testRequest, testDriver, testPool, testDevice] = ["test-request", "test-driver", "test-pool", "test-device"];
const testShareID = goodShareID;
const testCapacity = { "test-capacity": "1" };
const baseSpec = (extra = {}) => ({ devices: { requests: [{ name: req0, exactly: { deviceClassName: "class", allocationMode: "All", ...extra } }] } });
const mkClaim = (namespace, spec, statusV) => ({ metadata: { name: "valid-claim", namespace }, spec, ...(statusV ? { status: statusV } : {}) });
const statusResult = (extra = {}) => ({ allocation: { devices: { results: [{ request: req0, driver: "dra.example.com", pool: "pool-0", device: "device-0", ...extra }] } } });
const obj = mkClaim("kube-system", baseSpec());
const objWithStatus = mkClaim("kube-system", baseSpec(), statusResult());
const objWithAdminAccess = mkClaim("kube-system", baseSpec({ adminAccess: true }));
const objInNonAdminNamespace = mkClaim("default", baseSpec());
const objWithAdminAccessStatusInNonAdminNamespace = mkClaim("default", baseSpec({ adminAccess: true }), statusResult({ adminAccess: true }));
const objWithPrioritizedList = mkClaim("kube-system", { devices: { requests: [{ name: req0,
  firstAvailable: [{ name: subReq0, deviceClassName: "class", allocationMode: "ExactCount", count: 1 }] }] } });
const objWithAdminAccessStatus = mkClaim("kube-system", baseSpec({ adminAccess: true }), statusResult({ adminAccess: true }));
const objWithDeviceBindingConditions = mkClaim("kube-system", baseSpec(), statusResult({
  bindingConditions: ["condition-1", "condition-2"], bindingFailureConditions: ["condition-3", "condition-4"] }));

const adminAccessError = "Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label";
const fieldImmutableError = "field is immutable";

// The strategy test's helpers.
function addSpecDevicesRequest(claim, request) {
  claim.spec.devices.requests.push({ name: request });
}
function modifySpecDeviceRequestWithCapacityRequests(claim, capacity, prioritizedList) {
  if (!capacity) return;
  if (prioritizedList) claim.spec.devices.requests[0].firstAvailable[0].capacity = { requests: clone(capacity) };
  else claim.spec.devices.requests[0].exactly.capacity = { requests: clone(capacity) };
}
function addDistinctAttribute(claim) {
  (claim.spec.devices.constraints ??= []).push({ requests: [req0], distinctAttribute: "driver-a/attr" });
}
function addStatusAllocationDevicesResults(claim, driver, pool, device, request, shareID, consumedCapacity) {
  claim.status ??= {};
  claim.status.allocation ??= {};
  ((claim.status.allocation.devices ??= {}).results ??= []).push({ request, driver, pool, device,
    ...(shareID ? { shareID } : {}), ...(consumedCapacity ? { consumedCapacity: clone(consumedCapacity) } : {}) });
}
function addStatusDevices(claim, driver, pool, device, shareID) {
  claim.status ??= {};
  (claim.status.devices ??= []).push({ driver, pool, device, ...(shareID ? { shareID } : {}) });
}
const build = (base, ...steps) => () => { const c = clone(base); for (const s of steps) s(c); return c; };
const withRequest = (r) => (c) => addSpecDevicesRequest(c, r);
const withResult = (request, shareID, cap) => (c) => addStatusAllocationDevicesResults(c, testDriver, testPool, testDevice, request, shareID, cap);
const withDevice = (shareID) => (c) => addStatusDevices(c, testDriver, testPool, testDevice, shareID);
const withCapacity = (pl) => (c) => modifySpecDeviceRequestWithCapacityRequests(c, testCapacity, pl);
const withDistinct = () => (c) => addDistinctAttribute(c);

// The namespaces of the test's fake clientset, and its recorded actions.
function fakeNamespaces() {
  const all = {
    default: { metadata: { name: "default", labels: { key: "value" } } },
    "kube-system": { metadata: { name: "kube-system", labels: { [DRA_ADMIN_NAMESPACE_LABEL_KEY]: "true" } } },
  };
  const actions = [];
  return {
    actions,
    get: (name) => {
      actions.push(name);
      if (!all[name]) throw new Error(`namespaces "${name}" not found`);
      return all[name];
    },
  };
}
const noActions = (as) => assert.deepEqual(as, [], "expected no action to be taken");
const oneGet = (ns) => (as) => assert.deepEqual(as, [ns], `expected to get the ${ns} namespace`);

// A case whose update goes through (the fields kept or dropped), with no namespace looked up.
const statusCase = (oldObj, newObj, expectObj, gates) => ({ oldObj, newObj, expectObj, verify: noActions, ...gates });
// The device-status cases' claim: with testRequest, then allocated the test device, and with
// its status entry (or the entry without the allocation).
const requested = (...steps) => build(obj, withRequest(testRequest), ...steps)();
const requestAllocated = () => requested(withResult(testRequest));
const withStatus = () => requested(withResult(testRequest), withDevice());
const deallocated = () => requested(withDevice());
// The consumable-capacity cases' claim: capacity requested (by the prioritized list's
// subrequest when `prioritized`) with a distinct attribute, then `steps`: allocated a share of
// the test device, and with that share's status entry.
const capacityClaim = (prioritized, ...steps) =>
  build(prioritized ? objWithPrioritizedList : obj, withCapacity(prioritized), withDistinct(), ...steps)();
const shareResult = (prioritized) => withResult(prioritized ? req0SubReq0 : req0, testShareID, testCapacity);
const allocatedShare = (prioritized) => capacityClaim(prioritized, shareResult(prioritized));
const shareWithStatus = (prioritized) => capacityClaim(prioritized, shareResult(prioritized), withDevice(testShareID));
const withReq0 = (...steps) => build(obj, withRequest(req0), ...steps)();

const statusStrategyCases = {
  "no-changes-okay": { oldObj: obj, newObj: obj, expectObj: obj, verify: noActions },
  "name-change-not-allowed": {
    oldObj: obj, newObj: (() => { const o = clone(obj); o.metadata.name += "-2"; return o; })(),
    expectValidationErrors: [fieldImmutableError], verify: noActions,
  },
  "drop-meta-changes": {
    oldObj: obj,
    newObj: (() => { const o = clone(obj); o.metadata.finalizers = ["foo"]; o.metadata.annotations = { foo: "bar" }; o.metadata.labels = { foo: "bar" }; return o; })(),
    expectObj: obj, verify: noActions,
  },
  "drop-fields-admin-access": { oldObj: obj, newObj: objWithAdminAccessStatus, adminAccess: false, expectObj: objWithStatus, verify: noActions },
  "keep-fields-admin-access": {
    oldObj: obj, newObj: objWithAdminAccessStatus, adminAccess: true,
    expectObj: (() => { const o = clone(objWithAdminAccessStatus); o.spec = clone(obj.spec); return o; })(),
    verify: oneGet("kube-system"),
  },
  "keep-fields-admin-access-NonAdminNamespace": {
    oldObj: objInNonAdminNamespace, newObj: objWithAdminAccessStatusInNonAdminNamespace, adminAccess: true,
    expectValidationErrors: [adminAccessError], verify: oneGet("default"),
  },
  "keep-fields-admin-access-because-of-spec": {
    oldObj: objWithAdminAccess, newObj: objWithAdminAccessStatus, adminAccess: false, expectObj: objWithAdminAccessStatus,
    verify: oneGet("kube-system"),
  },
  "keep-fields-admin-access-because-of-status": {
    oldObj: (() => { const o = clone(objWithAdminAccessStatus); o.spec.devices.requests[0].exactly.adminAccess = false; return o; })(),
    newObj: objWithAdminAccessStatus, adminAccess: false,
    expectObj: (() => { const o = clone(objWithAdminAccessStatus); o.spec.devices.requests[0].exactly.adminAccess = false; return o; })(),
    verify: noActions,
  },
  "drop-fields-devices-status": statusCase(requestAllocated(), withStatus(), requestAllocated(), { deviceStatusFeatureGate: false }),
  "keep-fields-devices-status-disable-feature-gate": statusCase(withStatus(), withStatus(), withStatus(), { deviceStatusFeatureGate: false }),
  "keep-fields-devices-status": statusCase(requestAllocated(), withStatus(), withStatus(), { deviceStatusFeatureGate: true }),
  "drop-status-deallocated-device": statusCase(withStatus(), deallocated(), requested(), { deviceStatusFeatureGate: true }),
  "drop-status-deallocated-device-disable-feature-gate": statusCase(withStatus(), deallocated(), requested(), { deviceStatusFeatureGate: false }),
  "keep-fields-binding-conditions": statusCase(obj, objWithDeviceBindingConditions, objWithDeviceBindingConditions,
    { bindingConditions: true, deviceStatusFeatureGate: true }),
  "keep-exist-fields-disable-bindingconditions-feature-gate": statusCase(objWithDeviceBindingConditions, objWithDeviceBindingConditions,
    objWithDeviceBindingConditions, { bindingConditions: false, deviceStatusFeatureGate: true }),
  "drop-fields-binding-conditions": statusCase(obj, objWithDeviceBindingConditions, objWithStatus,
    { bindingConditions: false, deviceStatusFeatureGate: true }),
  "drop-fields-binding-conditions-disable-feature-gate": statusCase(obj, objWithDeviceBindingConditions, objWithStatus,
    { bindingConditions: false, deviceStatusFeatureGate: false }),
  "drop-fields-binding-conditions-disable-binding-conditions-feature-gate": statusCase(obj, objWithDeviceBindingConditions, objWithStatus,
    { bindingConditions: false, deviceStatusFeatureGate: true }),
  "keep-fields-consumable-capacity-with-device-status": statusCase(allocatedShare(false), shareWithStatus(false), shareWithStatus(false),
    { deviceStatusFeatureGate: true, consumableCapacityFeatureGate: true, prioritizedListFeatureGate: false }),
  "keep-fields-consumable-capacity-disabled-feature-gate-with-device-status": statusCase(allocatedShare(false), shareWithStatus(false),
    shareWithStatus(false), { deviceStatusFeatureGate: true, consumableCapacityFeatureGate: false }),
  "keep-fields-consumable-capacity-with-device-status-disabled-feature-gate": statusCase(allocatedShare(false), shareWithStatus(false),
    allocatedShare(false), { deviceStatusFeatureGate: false, consumableCapacityFeatureGate: true }),
  "keep-fields-consumable-capacity-with-device-status-with-prioritized-list-disabled-feature-gate": statusCase(capacityClaim(true),
    shareWithStatus(true), shareWithStatus(true), { deviceStatusFeatureGate: true, consumableCapacityFeatureGate: true, prioritizedListFeatureGate: false }),
  "drop-fields-consumable-capacity-disabled-feature-gate": statusCase(withReq0(), build(obj, withCapacity(false))(), withReq0(),
    { consumableCapacityFeatureGate: false }),
  "drop-fields-consumable-capacity-disabled-feature-gate-with-prioritized-list": statusCase(objWithPrioritizedList, capacityClaim(true),
    objWithPrioritizedList, { prioritizedListFeatureGate: true, consumableCapacityFeatureGate: false }),
  "drop-fields-consumable-capacity-disabled-feature-gate-with-device-status": statusCase(withReq0(), shareWithStatus(false),
    withReq0(withResult(req0), withDevice()), { deviceStatusFeatureGate: true, consumableCapacityFeatureGate: false }),
  "drop-fields-consumable-capacity-disabled-feature-gate-with-device-status-default-shareid": statusCase(withReq0(),
    withReq0(withResult(req0), withDevice()), withReq0(withResult(req0), withDevice()), { deviceStatusFeatureGate: true, consumableCapacityFeatureGate: false }),
};

// Go's zero values: absent, null, empty lists and maps are the same (the objects are compared
// as Go's internal types would be).
function canon(v) {
  if (Array.isArray(v)) return v.length ? v.map(canon) : undefined;
  if (v && typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v).sort()) {
      const c = canon(v[k]);
      if (c !== undefined) out[k] = c;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v === null ? undefined : v;
}

for (const [name, tc] of Object.entries(statusStrategyCases)) {
  upstream++;
  check(`upstream TestStatusStrategyUpdate/${name}`, () => {
    // Without admin access the case emulates 1.35 (DRAAdminAccess is locked from 1.36).
    const release = tc.adminAccess ? "1.36" : "1.35";
    const gates = { ...gateDefaults(release), DRAAdminAccess: Boolean(tc.adminAccess),
      DRAResourceClaimDeviceStatus: Boolean(tc.deviceStatusFeatureGate), DRADeviceBindingConditions: Boolean(tc.bindingConditions),
      DRAConsumableCapacity: Boolean(tc.consumableCapacityFeatureGate), DRAPrioritizedList: Boolean(tc.prioritizedListFeatureGate) };
    const ns = fakeNamespaces();
    const oldObj = clone(tc.oldObj);
    const newObj = clone(tc.newObj);
    newObj.metadata.resourceVersion = "4";
    claimStatusPrepareForUpdate(gates, newObj, oldObj);
    const errs = claimStatusValidateUpdate(newObj, oldObj, { release, gates, getNamespace: ns.get });
    if (errs.length) {
      assert.ok(tc.expectValidationErrors?.length, `unexpected error(s): ${errs.map(String).join("; ")}`);
      assert.equal(errs.length, tc.expectValidationErrors.length, "wrong number of validation errors");
      tc.expectValidationErrors.forEach((e, i) => assert.ok(String(errs[i]).includes(e), `${errs[i]} should contain ${e}`));
    } else {
      assert.ok(!tc.expectValidationErrors?.length, "expected validation error(s), got none");
      const expectObj = clone(tc.expectObj);
      expectObj.metadata.resourceVersion = "4";
      assert.deepEqual(canon(newObj), canon(expectObj));
    }
    tc.verify(ns.actions); // upstream skips it on a validation error; asserted here all the same
  });
}
check("TestStatusStrategyUpdate: 26 of the 28 upstream cases transcribed (the 2 authorizer cases: claim_status_authz_test.mjs)", () =>
  assert.equal(Object.keys(statusStrategyCases).length, 26));

// --- Cases of our own --------------------------------------------------------------------

// The release table. Evidence: defaultVersionedKubernetesFeatureGates (pkg/features, the 1.37
// sources' versioned gate file): DRAResourceClaimDeviceStatus {1.32 Alpha false}, {1.33 Beta
// true}, {1.37 GA true LockToDefault, "remove in 1.40"} — beta since 1.33, not 1.36.
check("DRAResourceClaimDeviceStatus: 1.32 alpha off, 1.33 beta on, 1.37 GA on and locked (every fake release: on)", () => {
  assert.deepEqual(GATE_HISTORY.DRAResourceClaimDeviceStatus, [[32, false], [33, true], [37, true]]);
  assert.equal(LOCKED.DRAResourceClaimDeviceStatus, 37);
  assert.deepEqual(RELEASES.map((r) => gateDefaults(r).DRAResourceClaimDeviceStatus), [true, true, true, true]);
  for (const r of ["1.34", "1.35", "1.36"]) assert.equal(lockedGateError(r, "DRAResourceClaimDeviceStatus", false), null);
  assert.equal(lockedGateError("1.37", "DRAResourceClaimDeviceStatus", false),
    "cannot set feature gate DRAResourceClaimDeviceStatus to false, feature is locked to true");
});

const allocated = (results) => ({ metadata: { name: "c", namespace: "ns", resourceVersion: "1" }, spec: clone(validClaimSpec),
  status: { allocation: { devices: { results } } } });
const withDevices = (claim, devices) => { const c = clone(claim); c.status.devices = devices; return c; };
check("releases: an empty driver is only Required from 1.35 (ValidateCSIDriverName's short-circuit), Required and Invalid before", () => {
  const old = allocated([result({ driver: "" })]);
  const c = withDevices(old, [{ driver: "", pool: goodName, device: goodName }]);
  const at = (release) => ValidateResourceClaimStatusUpdate(c, old, { release }).filter((e) => e.field === "status.devices[0].driver").map((e) => e.type);
  assert.deepEqual(at("1.34"), ["FieldValueRequired", "FieldValueInvalid"]);
  assert.deepEqual(at("1.35"), ["FieldValueRequired"]);
});
check("releases: a toleration with effect None in a new result is refused on 1.34, accepted from 1.35", () => {
  const old = { metadata: { name: "c", namespace: "ns", resourceVersion: "1" }, spec: clone(validClaimSpec) };
  const c = withAllocation(clone(old), { devices: { results: [result({ tolerations: [{ operator: "Exists", effect: "None" }] })] } });
  assert.deepEqual(ValidateResourceClaimStatusUpdate(c, old, { release: "1.34" }).map(String),
    ['status.allocation.devices.results[0].tolerations[0].effect: Unsupported value: "None": supported values: "NoExecute", "NoSchedule"']);
  assert.deepEqual(ValidateResourceClaimStatusUpdate(c, old, { release: "1.35" }), []);
});
check("releases: skipNodeOperations [NodePrepareResources] in a new result is refused from 1.37", () => {
  const old = { metadata: { name: "c", namespace: "ns", resourceVersion: "1" }, spec: clone(validClaimSpec) };
  const c = withAllocation(clone(old), { devices: { results: [result({ skipNodeOperations: ["NodePrepareResources"] })] } });
  assert.deepEqual(ValidateResourceClaimStatusUpdate(c, old, { release: "1.36" }), []);
  assert.deepEqual(ValidateResourceClaimStatusUpdate(c, old, { release: "1.37" }).map((e) => e.field), ["status.allocation.devices.results[0].skipNodeOperations"]);
});

check("status.devices: a driver's ordinary entry (Ready condition, data, networkData) is valid on every release", () => {
  const old = allocated([result({ driver: "rdma.example.com", pool: "n1/hca-ib", device: "hca-0000-10-00-0" })]);
  const c = withDevices(old, [{ driver: "rdma.example.com", pool: "n1/hca-ib", device: "hca-0000-10-00-0",
    conditions: [{ type: "Ready", status: "True", reason: "Prepared", message: "", lastTransitionTime: NOW }],
    data: { netdev: "ib0", gid: "fe80::1" }, networkData: { interfaceName: "ib0", hardwareAddress: "00:00:10:29:fe:80:00:00:00:00:00:00:00:00:00:01",
      ips: ["192.0.2.5/24", "2001:db8::5/64"] } }]);
  for (const release of RELEASES) assert.deepEqual(ValidateResourceClaimStatusUpdate(c, old, { release }), [], release);
});
check("status.devices: conditions are metav1 conditions (type a label name, status True/False/Unknown, reason format, time set, types unique)", () => {
  const old = allocated([result()]);
  const c = withDevices(old, [fooDevice({ conditions: [
    { type: "Ready", status: "Yes", reason: "1bad", lastTransitionTime: NOW, observedGeneration: -1 },
    { type: "Ready", status: "True", reason: "", lastTransitionTime: "0001-01-01T00:00:00Z" },
    { type: "not a label", status: "False", reason: "R", lastTransitionTime: NOW, message: rep("m", 32 * 1024 + 1) },
  ] })]);
  assertFailures([
    E.notSupported(`${dev(0)}.conditions[0].status`, "Yes", ["False", "True", "Unknown"]),
    E.invalid(`${dev(0)}.conditions[0].observedGeneration`, -1, "must be greater than or equal to zero"),
    E.invalid(`${dev(0)}.conditions[0].reason`, "1bad", "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"),
    E.duplicate(`${dev(0)}.conditions[1].type`, "Ready"),
    E.required(`${dev(0)}.conditions[1].lastTransitionTime`, "must be set"),
    E.required(`${dev(0)}.conditions[1].reason`, "must be set"),
    E.invalid(`${dev(0)}.conditions[2].type`, "not a label", "name part must consist of alphanumeric characters"),
    E.tooLong(`${dev(0)}.conditions[2].message`, 32 * 1024),
  ], ValidateResourceClaimStatusUpdate(c, old, { release: "1.37" }));
});
check("status.devices: data must be a JSON object; null data is no data (Go decodes it to nil)", () => {
  const old = allocated([result()]);
  for (const [data, want] of [[[1, 2], "must be a valid JSON object"], ["text", "must be a valid JSON object"], [7, "must be a valid JSON object"]]) {
    assert.deepEqual(ValidateResourceClaimStatusUpdate(withDevices(old, [fooDevice({ data })]), old).map(String),
      [`status.devices[0].data: Invalid value: "<value omitted>": ${want}`]);
  }
  assert.deepEqual(ValidateResourceClaimStatusUpdate(withDevices(old, [fooDevice({ data: null })]), old), []);
  assert.deepEqual(ValidateResourceClaimStatusUpdate(withDevices(old, [fooDevice({ data: new RawJSON("null") })]), old).map(String),
    ["status.devices[0].data: Required value"]);
});
check("status.devices: the 422 text a driver sees (errors.NewInvalid of the aggregate)", () => {
  const old = allocated([result()]);
  const errs = ValidateResourceClaimStatusUpdate(withDevices(old, [{ driver: "b", pool: "a", device: "r", networkData: { ips: ["10.0.0.1"] } }]), old);
  assert.equal(invalidStatus("ResourceClaim", "resource.k8s.io", "c", errs).message,
    'ResourceClaim.resource.k8s.io "c" is invalid: [status.devices[0]: Invalid value: b/a/r: must be an allocated device in the claim, ' +
    'status.devices[0].networkData.ips[0]: Invalid value: "10.0.0.1": must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)]');
});

check("IsValidInterfaceAddress: ParseCIDRSloppy and net.IP.String's canonical form", () => {
  const detail = (v) => isValidInterfaceAddress("ip", v).map((e) => e.detail);
  for (const ok of ["10.9.8.7/24", "0.0.0.0/0", "2001:db8::1/64", "::/0", "::1/128", "fe80::1:0:0:1/64", "1:0:0:1::1/64"]) assert.deepEqual(detail(ok), [], ok);
  assert.deepEqual(detail("10.0.0.1/024"), ['must be in canonical form ("10.0.0.1/24")']);
  assert.deepEqual(detail("::ffff:192.168.0.1/120"), ['must be in canonical form ("192.168.0.1/24")']);
  assert.deepEqual(detail("1:0:0:1:0:0:0:1/64"), ['must be in canonical form ("1:0:0:1::1/64")']);
  assert.deepEqual(detail("2001:DB8::1/64"), ['must be in canonical form ("2001:db8::1/64")']);
  assert.deepEqual(detail("::1.2.3.4/128"), ['must be in canonical form ("::102:304/128")']);
  for (const bad of ["10.0.0.1", "10.0.0.1/33", "10.0.0.256/8", "fe80::1%eth0/64", "::1/129", "1::2::3/64", "10.0.0.1/-1", "10.0.0.1/ 8", ""]) {
    assert.deepEqual(detail(bad), ["must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"], bad);
  }
});
check("encoding/json's syntax errors, as validateRawExtension quotes them", () => {
  const cases = {
    "foo": "invalid character 'o' in literal false (expecting 'a')",
    "": "unexpected end of JSON input",
    "{": "unexpected end of JSON input",
    "{\"a\" 1}": "invalid character '1' after object key",
    "{\"a\":1 \"b\":2}": "invalid character '\"' after object key:value pair",
    "{1:2}": "invalid character '1' looking for beginning of object key string",
    "[1,]": "invalid character ']' looking for beginning of value",
    "[1 2]": "invalid character '2' after array element",
    "{} {}": "invalid character '{' after top-level value",
    "-x": "invalid character 'x' in numeric literal",
    "1.x": "invalid character 'x' after decimal point in numeric literal",
    "1ex": "invalid character 'x' in exponent of numeric literal",
    "\"\\q\"": "invalid character 'q' in string escape code",
    "\"\\u12g4\"": "invalid character 'g' in \\u hexadecimal character escape",
    "\"a\nb\"": "invalid character '\\n' in string literal",
    "'x'": "invalid character '\\'' looking for beginning of value",
  };
  for (const [text, want] of Object.entries(cases)) assert.equal(goJSONSyntaxError(text), want, JSON.stringify(text));
  for (const text of ["{}", " {\"a\": [1, -2.5e+3, true, null, \"\\u00e9\"]} ", "0", "\"x\""]) assert.equal(goJSONSyntaxError(text), null, text);
});
check("validateUID: google/uuid's accepted forms, then the RFC 4122 normalized form", () => {
  const old = allocated([]);
  const msgs = (shareID) => ValidateResourceClaimStatusUpdate(withDevices(old, [fooDevice({ shareID })]), old)
    .filter((e) => e.field.endsWith(".shareID")).map((e) => e.detail);
  assert.deepEqual(msgs(goodShareID), []);
  assert.deepEqual(msgs("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), [uuidFormMsg]);
  assert.deepEqual(msgs(`{${goodShareID}}`), [uuidFormMsg]);
  assert.deepEqual(msgs(`urn:uuid:${goodShareID}`), [uuidFormMsg]);
  assert.deepEqual(msgs(`urx:uuid:${goodShareID}`), ['error validating uid: invalid urn prefix: "urx:uuid:"']);
  assert.deepEqual(msgs("aaaaaaaa_aaaa-aaaa-aaaa-aaaaaaaaaaaa"), ["error validating uid: invalid UUID format"]);
  assert.deepEqual(msgs(""), ["error validating uid: invalid UUID length: 0"]);
});

check("status strategy: with DRAConsumableCapacity off and nothing in use, a new entry's shareID is dropped (then it must match a result)", () => {
  const gates = { ...gateDefaults("1.35") };
  const old = allocated([result()]);
  const c = withDevices(old, [fooDevice({ shareID: goodShareID })]);
  assert.deepEqual(claimStatusPrepareForUpdate(gates, c, old), ["status.devices[].shareID"]);
  assert.deepEqual(c.status.devices, [fooDevice()]);
  assert.deepEqual(claimStatusValidateUpdate(c, old, { release: "1.35", gates }), []);
});

// --- The fake kube-apiserver: server-side apply of status.devices -----------------------

const DRIVER = "rdma.example.com";
const startServer = (release, gates) => startFake(release, gates, "fake-claim-status-");
// PATCH .../resourceclaims/{name}/status as client-go's Apply does it.
function apply(s, ns, name, body, { manager = "rdma-dra-driver", force = true, type = "application/apply-patch+yaml", extra = "" } = {}) {
  const query = [manager !== null ? `fieldManager=${encodeURIComponent(manager)}` : "", force ? "force=true" : "", extra].filter(Boolean).join("&");
  return apiRequest(s, "PATCH", `/apis/resource.k8s.io/v1/namespaces/${ns}/resourceclaims/${name}/status${query ? `?${query}` : ""}`, body, type);
}
const storedClaim = (name, results) => ({ apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", metadata: { name, namespace: "team-a" },
  spec: { devices: { requests: [{ name: "rdma", exactly: { deviceClassName: "hca-ib" } }] } },
  status: { allocation: { devices: { results: results.map((device) => ({ request: "rdma", driver: DRIVER, pool: "n1/hca-ib", device })) } } } });
const entry = (device, extra = {}) => ({ driver: DRIVER, pool: "n1/hca-ib", device,
  conditions: [{ type: "Ready", status: "True", reason: "Prepared", message: "", lastTransitionTime: NOW }],
  networkData: { interfaceName: "ib0", ips: ["192.0.2.5/24"] }, ...extra });
const applyBody = (name, devices, meta = {}) => ({ apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
  metadata: { name, namespace: "team-a", ...meta }, status: { devices } });

{
  const s = await startServer("1.37");
  try {
    const stored = await admin(s, "/claims", storedClaim("c1", ["hca-0000-10-00-0", "hca-0000-11-00-0"]));
    const rv0 = stored.body.metadata.resourceVersion;
    const first = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-10-00-0")]));
    const again = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-10-00-0")]));
    const listed = (await admin(s, "/claims")).body.find((c) => c.metadata.name === "c1");
    const owners = (await admin(s, "/claim-status-owners")).body;
    check("fake 1.37: an apply of one entry stores it (200, resourceVersion bumped), the claim's spec and allocation untouched", () => {
      assert.equal(first.code, 200, JSON.stringify(first.body));
      assert.notEqual(first.body.metadata.resourceVersion, rv0);
      assert.deepEqual(first.body.status.devices, [entry("hca-0000-10-00-0")]);
      assert.deepEqual(first.body.status.allocation, stored.body.status.allocation);
      assert.deepEqual(first.body.spec, stored.body.spec);
      assert.deepEqual(listed.status.devices, [entry("hca-0000-10-00-0")]);
      assert.deepEqual(owners["team-a/c1"][`${DRIVER}/n1/hca-ib/hca-0000-10-00-0`].manager, "rdma-dra-driver");
    });
    check("fake 1.37: the same apply again is a no-op: 200, resourceVersion kept", () => {
      assert.equal(again.code, 200);
      assert.equal(again.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
    });

    const second = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-11-00-0", { networkData: { interfaceName: "ib1" } })]));
    check("fake 1.37: a manager's apply replaces the set of entries it owns (the one it no longer applies goes)", () => {
      assert.equal(second.code, 200, JSON.stringify(second.body));
      assert.deepEqual(second.body.status.devices.map((d) => d.device), ["hca-0000-11-00-0"]);
      assert.deepEqual(second.body.status.devices[0].networkData, { interfaceName: "ib1" });
    });
    const other = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-10-00-0")]), { manager: "other-agent" });
    const conflict = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-11-00-0", { networkData: { interfaceName: "ib9" } })]),
      { manager: "other-agent", force: false });
    const forced = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-11-00-0", { networkData: { interfaceName: "ib9" } })]),
      { manager: "other-agent" });
    check("fake 1.37: managers own their entries; without force a changed field of another's entry is a 409 Conflict, with force it is taken " +
      "(and the entry that manager applied before and no longer applies goes)", () => {
      assert.equal(other.code, 200);
      assert.deepEqual(other.body.status.devices.map((d) => d.device), ["hca-0000-11-00-0", "hca-0000-10-00-0"]);
      assert.equal(conflict.code, 409);
      assert.equal(conflict.body.reason, "Conflict");
      assert.equal(conflict.body.message, 'Apply failed with 1 conflict: conflict with "rdma-dra-driver": ' +
        `.status.devices[device="hca-0000-11-00-0",driver="${DRIVER}",pool="n1/hca-ib"].networkData`);
      assert.equal(forced.code, 200);
      assert.deepEqual(forced.body.status.devices.map((d) => [d.device, d.networkData.interfaceName]), [["hca-0000-11-00-0", "ib9"]]);
    });

    const badIp = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-10-00-0", { networkData: { ips: ["192.0.2.5"] } })]));
    const notAllocated = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-99-00-0")]), { manager: "third" });
    const noManager = await apply(s, "team-a", "c1", applyBody("c1", []), { manager: null });
    const missing = await apply(s, "team-a", "nope", applyBody("nope", []));
    const stale = await apply(s, "team-a", "c1", applyBody("c1", [], { resourceVersion: "1" }));
    const wrongName = await apply(s, "team-a", "c1", applyBody("c2", []));
    const unknown = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-10-00-0", { colour: "red" })]));
    const wrongType = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-10-00-0", { networkData: { ips: "192.0.2.5/24" } })]));
    const mergePatch = await apply(s, "team-a", "c1", { status: {} }, { type: "application/merge-patch+json" });
    const stats = (await admin(s, "/stats")).body;
    check("fake 1.37: an invalid entry is refused 422 with upstream's text, recorded in stats.invalid", () => {
      assert.equal(badIp.code, 422);
      assert.equal(badIp.body.reason, "Invalid");
      assert.equal(badIp.body.message, 'ResourceClaim.resource.k8s.io "c1" is invalid: status.devices[1].networkData.ips[0]: ' +
        'Invalid value: "192.0.2.5": must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)');
      assert.deepEqual(badIp.body.details.causes, [{ reason: "FieldValueInvalid", field: "status.devices[1].networkData.ips[0]",
        message: 'Invalid value: "192.0.2.5": must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)' }]);
      assert.equal(notAllocated.code, 422);
      assert.match(notAllocated.body.message, /status\.devices\[1\]: Invalid value: rdma\.example\.com\/n1\/hca-ib\/hca-0000-99-00-0: must be an allocated device in the claim/);
      assert.ok(stats.invalid.includes(badIp.body.message));
    });
    check("fake 1.37: PatchOptions without fieldManager 422, a missing claim 404, a stale resourceVersion 409, a wrong name 400", () => {
      assert.equal(noManager.code, 422);
      assert.equal(noManager.body.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
      assert.equal(missing.code, 404);
      assert.equal(missing.body.message, 'resourceclaims.resource.k8s.io "nope" not found');
      assert.equal(stale.code, 409);
      assert.match(stale.body.message, /^Operation cannot be fulfilled on resourceclaims\.resource\.k8s\.io "c1": the object has been modified/);
      assert.equal(wrongName.code, 400);
      assert.equal(wrongName.body.message, "the name of the object (c2) does not match the name on the URL (c1)");
    });
    check("fake 1.37: an undeclared field or a wrong type is a 500 (typed patch), another patch type 415", () => {
      assert.equal(unknown.code, 500);
      assert.match(unknown.body.message, /\.status\.devices\.0\.colour: field not declared in schema/);
      assert.equal(wrongType.code, 500);
      assert.match(wrongType.body.message, /\.status\.devices\[0\]\.networkData\.ips: expected list/);
      assert.equal(mergePatch.code, 415);
      assert.ok(stats.claimStatusWrites >= 4 && stats.claimStatusApplies >= 10);
    });
  } finally {
    stopServer(s);
  }
}
{
  // 1.34 with the beta gate off: the driver's entries are dropped by the status strategy.
  const s = await startServer("1.34", "DRAResourceClaimDeviceStatus=false");
  try {
    await admin(s, "/claims", storedClaim("c1", ["hca-0000-10-00-0"]));
    const r = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-10-00-0")]));
    const stats = (await admin(s, "/stats")).body;
    check("fake 1.34 with DRAResourceClaimDeviceStatus off: status.devices is dropped (200, stats.dropped), nothing stored", () => {
      assert.equal(r.code, 200, JSON.stringify(r.body));
      assert.equal(r.body.status.devices, undefined);
      assert.equal(stats.dropped["resourceclaims status.devices"], 1);
      assert.deepEqual(stats.invalid, []);
    });
  } finally {
    stopServer(s);
  }
}
{
  const r = runServerToExit("1.37", "DRAResourceClaimDeviceStatus=false", "fake-claim-status-");
  check("fake 1.37 --gates DRAResourceClaimDeviceStatus=false: does not start (GA and locked)", () => {
    assert.equal(r.status, 1);
    assert.match(r.stderr, /cannot set feature gate DRAResourceClaimDeviceStatus to false, feature is locked to true/);
  });
}

// --- The fake kube-apiserver with RBAC (/rbac): the driver's ClusterRole, the 1.36+ granular ---
// --- status authorization, and metadata.uid in an apply --------------------------------------

const RBAC_YAML = path.join(path.dirname(fileURLToPath(import.meta.url)), "../../images/components/dra/rbac.yaml");
const SA = "system:serviceaccount:kube-system:rdma-shared-dp";
// The two rules a driver that writes status.devices by server-side apply needs (1.36+: the
// associated-node verb on resourceclaims/driver, named by the driver).
const STATUS_RULES = [
  { apiGroups: ["resource.k8s.io"], resources: ["resourceclaims/status"], verbs: ["patch"] },
  { apiGroups: ["resource.k8s.io"], resources: ["resourceclaims/driver"], verbs: ["associated-node:patch"], resourceNames: ["rdma.k8s-rdma-shared-dp.io"] },
];
const statusRule = (r) => (r.resources ?? []).some((x) => x === "resourceclaims/status" || x === "resourceclaims/driver");
// The project's manifest with its ClusterRole's rules changed by `edit`, in a file of its own.
function manifestWith(edit, dir, name) {
  const docs = YAML.parseAllDocuments(fs.readFileSync(RBAC_YAML, "utf8")).map((d) => d.toJS());
  for (const d of docs) if (d?.kind === "ClusterRole") d.rules = edit(d.rules ?? []);
  const file = path.join(dir, name);
  fs.writeFileSync(file, docs.map((d) => YAML.stringify(d)).join("---\n"));
  return file;
}
// A claim of the driver's device allocated to `node`, and the driver's entry for it.
const nodeClaim = (name, node) => ({ apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", metadata: { name, namespace: "team-a" },
  spec: { devices: { requests: [{ name: "rdma", exactly: { deviceClassName: "hca-ib" } }] } },
  status: { allocation: { devices: { results: [{ request: "rdma", driver: DRIVER, pool: `${node}/hca-ib`, device: "hca-0" }] },
    nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: [node] }] }] } } } });
const nodeEntry = (node) => ({ driver: DRIVER, pool: `${node}/hca-ib`, device: "hca-0",
  conditions: [{ type: "Ready", status: "True", reason: "Prepared", message: "", lastTransitionTime: NOW }] });
{
  const s = await startServer("1.36");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fake-claim-status-rbac-"));
  try {
    const today = manifestWith((rules) => rules.filter((r) => !statusRule(r)), dir, "rbac-today.yaml");
    const withRules = manifestWith((rules) => [...rules.filter((r) => !statusRule(r)), ...STATUS_RULES], dir, "rbac-with-status.yaml");
    const fileHasRules = YAML.parseAllDocuments(fs.readFileSync(RBAC_YAML, "utf8")).some((d) => (d.toJS()?.rules ?? []).some(statusRule));
    await admin(s, "/claims", nodeClaim("c-n1", "n1"));
    await admin(s, "/claims", nodeClaim("c-n2", "n2"));
    const claimPath = "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/c-n1";

    const loaded = await admin(s, "/rbac", { file: RBAC_YAML, driver: DRIVER, node: "n1" });
    const get = await apiRequest(s, "GET", claimPath);
    const patchAsIs = await apply(s, "team-a", "c-n1", applyBody("c-n1", [nodeEntry("n1")]));
    await admin(s, "/rbac", { file: today, driver: DRIVER, node: "n1" });
    const patchToday = await apply(s, "team-a", "c-n1", applyBody("c-n1", [nodeEntry("n1")]));
    const forbiddenAfter = (await admin(s, "/stats")).body.forbidden;
    const forbiddenMessage = `resourceclaims.resource.k8s.io "c-n1" is forbidden: User "${SA}" cannot patch resource "resourceclaims/status" ` +
      'in API group "resource.k8s.io" in the namespace "team-a"';
    check("fake /rbac with images/components/dra/rbac.yaml: the driver may GET a claim; without a patch rule on resourceclaims/status " +
      "its status apply is 403 Forbidden, kube-apiserver's Status, counted in stats.forbidden", () => {
      assert.equal(loaded.code, 200);
      assert.equal(get.code, 200);
      assert.equal(get.body.metadata.name, "c-n1");
      // Until the rules are in the manifest, the file as it is refuses; its copy without them always does.
      for (const r of fileHasRules ? [patchToday] : [patchAsIs, patchToday]) {
        assert.equal(r.code, 403);
        assert.deepEqual(r.body, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: forbiddenMessage,
          reason: "Forbidden", details: { name: "c-n1", group: "resource.k8s.io", kind: "resourceclaims" }, code: 403 });
      }
      assert.ok(forbiddenAfter.includes(`patch resourceclaims/status team-a/c-n1: ${forbiddenMessage}`), forbiddenAfter.join("\n"));
    });

    await admin(s, "/rbac", { file: withRules, driver: DRIVER, node: "n1" });
    const own = await apply(s, "team-a", "c-n1", applyBody("c-n1", [nodeEntry("n1")]));
    const other = await apply(s, "team-a", "c-n2", applyBody("c-n2", [nodeEntry("n2")]));
    const otherDry = await apply(s, "team-a", "c-n2", applyBody("c-n2", [nodeEntry("n2")]), { extra: "dryRun=All" });
    const granular = 'ResourceClaim.resource.k8s.io "c-n2" is invalid: status.devices: Forbidden: changing status.devices requires ' +
      `resource="resourceclaims/driver", verb="[arbitrary-node:patch]" permission: resourceclaims.resource.k8s.io "${DRIVER}" is forbidden: ` +
      `User "${SA}" cannot arbitrary-node:patch resource "resourceclaims/driver" in API group "resource.k8s.io" in the namespace "team-a"`;
    check("fake 1.36 with the status rules: the driver on n1 writes the status of a claim allocated to n1 (associated-node:patch on its name)", () => {
      assert.equal(own.code, 200, JSON.stringify(own.body));
      assert.deepEqual(own.body.status.devices, [nodeEntry("n1")]);
    });
    check("fake 1.36 with the status rules: a claim allocated to n2 is refused 422 with upstream's text (dry-run alike), nothing stored", () => {
      for (const r of [other, otherDry]) {
        assert.equal(r.code, 422, JSON.stringify(r.body));
        assert.equal(r.body.reason, "Invalid");
        assert.equal(r.body.message, granular);
        assert.deepEqual(r.body.details.causes, [{ reason: "FieldValueForbidden", field: "status.devices",
          message: granular.split(' is invalid: status.devices: ')[1] }]);
      }
    });
    const stored = (await admin(s, "/claims")).body.find((c) => c.metadata.name === "c-n2");
    await admin(s, "/kube-release", { release: "1.35" });
    const on135 = await apply(s, "team-a", "c-n2", applyBody("c-n2", [nodeEntry("n2")]));
    await admin(s, "/kube-release", { release: "1.36" });
    await adminDelete(s, "/rbac");
    const noRbac = await apply(s, "team-a", "c-n2", applyBody("c-n2", []));
    check("fake 1.35 (no DRAResourceClaimGranularStatusAuthorization): the same write passes; without /rbac nothing is checked", () => {
      assert.equal(stored.status.devices, undefined);
      assert.equal(on135.code, 200, JSON.stringify(on135.body));
      assert.deepEqual(on135.body.status.devices, [nodeEntry("n2")]);
      assert.equal(noRbac.code, 200, JSON.stringify(noRbac.body));
      assert.equal(noRbac.body.status.devices, undefined, "the manager's entry removed, unchecked");
    });
  } finally {
    stopServer(s);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
{
  const s = await startServer("1.37");
  try {
    const stored = (await admin(s, "/claims", storedClaim("c1", ["hca-0000-10-00-0"]))).body;
    const uid = stored.metadata.uid;
    const same = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-10-00-0")], { uid }));
    const other = "00000000-0000-0000-0000-000000000001";
    const changed = await apply(s, "team-a", "c1", applyBody("c1", [entry("hca-0000-10-00-0")], { uid: other }));
    const after = (await admin(s, "/claims")).body.find((c) => c.metadata.name === "c1");
    check("fake apply with metadata.uid: the stored uid is accepted; another is refused 422 `metadata.uid: ... field is immutable` " +
      "(validateCommonFields and the strategy's ValidateObjectMetaUpdate: one message, two causes), nothing written", () => {
      assert.equal(same.code, 200, JSON.stringify(same.body));
      assert.equal(same.body.metadata.uid, uid);
      assert.equal(changed.code, 422);
      assert.equal(changed.body.reason, "Invalid");
      assert.equal(changed.body.message, `ResourceClaim.resource.k8s.io "c1" is invalid: metadata.uid: Invalid value: "${other}": field is immutable`);
      const cause = { reason: "FieldValueInvalid", field: "metadata.uid", message: `Invalid value: "${other}": field is immutable` };
      assert.deepEqual(changed.body.details.causes, [cause, cause]);
      assert.equal(after.metadata.uid, uid);
      assert.equal(after.metadata.resourceVersion, same.body.metadata.resourceVersion);
    });
  } finally {
    stopServer(s);
  }
}

finish(`claim status validation (${upstream} upstream cases)`);
