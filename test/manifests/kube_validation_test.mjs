// Tests of kube_validation.mjs and kube_release.mjs: the cases of upstream's
// TestValidateResourceSlice and TestValidateResourceSliceUpdate
// (pkg/apis/resource/validation/validation_resourceslice_test.go), of
// TestResourceSliceStrategyCreate/Update and TestWarningsOnCreate/Update
// (pkg/registry/resource/resourceslice/strategy_test.go), transcribed by case name, then
// cases of our own: the defects the fake used to let through and the differences between
// releases. Usage: node kube_validation_test.mjs (exit status 0 when all pass).
//
// Upstream cases run at the release the upstream sources are of (UPSTREAM_MAIN, the 1.38
// development cycle), with each case's feature gates. Expected errors are compared as
// upstream's assertFailures does (type, field, detail substring, origin where the case names
// one), and the bad value where it is a plain string or number.
//
// Adapted, not skipped (and why):
//  - Go-struct bad values (a DeviceAttribute, []core.NodeSelectorTerm(nil)) are not
//    compared: Go prints internal structs with json.Marshal of their Go field names, which
//    this port only approximates.
//  - Strategy cases "keep-fields-partition-type-attribute" (create) and
//    "keep-existing-fields-partition-type-attribute-disabled-feature" (update): the stored
//    strategy_test.go predates the validation that refuses partitionTypeAttribute on a
//    slice without counter-consuming devices (validation test
//    "partition-type-attribute-on-shared-counters-slice"), and uses a sharedCounters-only
//    slice; with today's validation both get that error. The case's point, the field kept,
//    is still asserted. They also name the gate DRAResourcePoolStatus, which v1.37 calls
//    DRAPartitionableDevicesType (feature-gate reference); the latter is used.
//  - Strategy cases with emulatedVersion "1.35" start from the 1.35 gate defaults, the
//    others from the 1.37 ones (Go starts from the binary's defaults).
// Skipped: TestDeclarativeValidate* (declarative_validation_test.go) compares Go's
// declarative and handwritten validators with each other; there is no second validator here.
import assert from "node:assert/strict";
import { check, finish } from "./check.mjs";
import {
  FieldError, GoPanic, QuantityParseError, UPSTREAM_MAIN, ValidateResourceSlice, ValidateResourceSliceUpdate,
  invalidStatus, newMilliQuantity, newQuantity, parseQuantity, resourceSliceWarnings, truncateIfTooLong,
} from "./kube_validation.mjs";
import { RELEASES, dropDisabledFields, gateDefaults, prepareForCreate, prepareForUpdate } from "./kube_release.mjs";
import { E, STRUCT, assertFailures } from "./test_harness.mjs"; // expected errors, upstream's assertFailures

const clone = structuredClone;
const MAIN = UPSTREAM_MAIN;
let upstream = 0;

// --- Builders, as upstream's test helpers (JSON form of resource.k8s.io/v1) ----------------

const goodName = "foo";
const badName = "!@#$%^";
const driverName = "test.example.com";
const badValue = "spaces not allowed";
const rep = (s, n) => s.repeat(n);
const dev = (i) => `spec.devices[${i}]`;
const cap = (i) => `spec.devices[${i}].capacity[a]`;

const testAttributes = () => ({ int: { int: 42 }, string: { string: "hello world" }, version: { version: "1.2.3" }, bool: { bool: true } });
const testCapacity = () => ({ memory: { value: "1Gi" } });
const testCounters = () => ({ memory: { value: "1Gi" } });
function testMultipleCounters(n) {
  const c = {};
  for (let i = 0; i < n; i++) c[`memory-${i}`] = { value: "1Gi" };
  return c;
}
function testResourceSlice(name, nodeName, driver, numDevices) {
  const slice = { metadata: { name }, spec: { nodeName, driver, pool: { name: nodeName, resourceSliceCount: 1 } } };
  for (let d = 0; d < numDevices; d++) {
    (slice.spec.devices ??= []).push({ name: `device-${d}`, attributes: testAttributes(), capacity: testCapacity() });
  }
  return slice;
}
function testResourceSliceWithSharedCounters(name, pool, driver, numCounterSets) {
  const slice = testResourceSlice(name, pool, driver, 1);
  delete slice.spec.devices;
  for (let i = 0; i < numCounterSets; i++) (slice.spec.sharedCounters ??= []).push({ name: `counterset-${i}`, counters: testCounters() });
  return slice;
}
function testResourceSliceWithBindingConditions(name, node, driver, n, conditions, failureConditions) {
  const slice = testResourceSlice(name, node, driver, n);
  for (const d of slice.spec.devices) {
    if (conditions) d.bindingConditions = conditions;
    if (failureConditions) d.bindingFailureConditions = failureConditions;
  }
  return slice;
}
function testResourceSliceWithNodeAllocatableResources(name, node, driver, n) {
  const slice = { metadata: { name }, spec: { nodeName: node, driver, pool: { name: node, resourceSliceCount: 1 } } };
  for (let d = 0; d < n; d++) {
    (slice.spec.devices ??= []).push({
      name: `device-${d}`, attributes: testAttributes(),
      capacity: { "dra.example.com/cpu": { value: "100" }, "dra.example.com/memory": { value: "100Gi" } },
      nodeAllocatableResources: {
        cpu: { mapping: { capacityMultiplier: "1", capacityKey: "dra.example.com/cpu" } },
        memory: { mapping: { capacityKey: "dra.example.com/cpu", capacityMultiplier: "1" } },
      },
    });
  }
  return slice;
}
function testResourceSliceWithConsumableCapacity(name, node, driver, n) {
  const slice = { metadata: { name }, spec: { nodeName: node, driver, pool: { name: node, resourceSliceCount: 1 } } };
  for (let d = 0; d < n; d++) {
    (slice.spec.devices ??= []).push({ name: `device-${d}`, allowMultipleAllocations: true,
      capacity: { a: { value: "100", requestPolicy: { default: "10", validValues: ["5", "10", "100"] } } } });
  }
  return slice;
}
function updateConsumableCapacity(slice, i, update) {
  const c = clone(slice.spec.devices[i].capacity.a);
  update(c);
  slice.spec.devices[i].capacity.a = c;
}
function spellFirstValidValueTwice(c) {
  c.requestPolicy.default = "5";
  c.requestPolicy.validValues[1] = "5.0";
}
const createSharedCounters = (n) => Array.from({ length: n }, (_, i) => ({ name: `counterset-${i}`, counters: testCounters() }));
const createConsumesCounters = (n) => Array.from({ length: n }, (_, i) => ({ counterSet: `counterset-${i}`, counters: testCounters() }));
const withTaints = (slice) => {
  for (const d of slice.spec.devices) d.taints = [{ key: "example.com/taint", effect: "NoExecute" }];
  return slice;
};
const tweak = (slice, fn) => { fn(slice); return slice; };
// Quantity arithmetic as the Go cases do it: q.Add(fraction), q.Sub(fraction), q.Set(v).
const qs = (s) => parseQuantity(s);
const add = (s, t) => String(qs(s).add(qs(t)));
const sub = (s, t) => String(qs(s).sub(qs(t)));
const MAX_INT64 = "9223372036854775807";
const maxMilli = String(newMilliQuantity(BigInt(MAX_INT64)));

// Messages of apimachinery's validation used by several cases.
const subdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const labelMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const cIdentMsg = "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')";
const labelValueMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const namePartMsg = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const conditionValidationErrMessage = namePartMsg;
const nodeSelectionMsg = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";
const perDeviceMsg = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec";
const effects = ["NoExecute", "NoSchedule", "None"];

// --- TestValidateResourceSlice ---------------------------------------------------------------

function maxStringAttributeValuesInList(max) {
  const attributes = {};
  for (let i = 0; i < 31; i++) {
    attributes[`list_attr_${i}`] = { strings: i === 0 ? Array(max - 30).fill("x") : ["x"] };
  }
  return attributes;
}
const badListAttributeTooManyValueWithMixedTypes = () => ({ strings: Array(46).fill("x"), ints: [1], bools: [true], versions: ["1.0.0"] });

const createScenarios = {
  "good": { slice: testResourceSlice(goodName, goodName, driverName, 128) },
  "too-large": {
    want: [E.tooMany("spec.devices", 129, 128)],
    slice: testResourceSlice(goodName, goodName, goodName, 129),
  },
  "good-taints": { slice: withTaints(testResourceSlice(goodName, goodName, goodName, 64)) },
  "too-large-taints": {
    want: [E.tooMany("spec.devices", 65, 64)],
    slice: withTaints(testResourceSlice(goodName, goodName, goodName, 65)),
  },
  "good-partition-type-attribute": {
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.spec.devices[0].consumesCounters = createConsumesCounters(1);
      s.spec.partitionTypeAttribute = `${driverName}/string`;
    }),
  },
  "good-partition-type-attribute-with-exempt-device": {
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 2), (s) => {
      s.spec.devices[0].consumesCounters = createConsumesCounters(1);
      delete s.spec.devices[1].attributes;
      s.spec.partitionTypeAttribute = `${driverName}/string`;
    }),
  },
  "partition-type-attribute-without-partitionable-devices": {
    want: [E.invalid("spec.partitionTypeAttribute", `${driverName}/string`, "may only be set on a slice which declares devices that consume counters")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.partitionTypeAttribute = `${driverName}/string`; }),
  },
  "partition-type-attribute-on-shared-counters-slice": {
    want: [E.invalid("spec.partitionTypeAttribute", `${driverName}/string`, "may only be set on a slice which declares devices that consume counters")],
    slice: tweak(testResourceSliceWithSharedCounters(goodName, goodName, driverName, 1), (s) => { s.spec.partitionTypeAttribute = `${driverName}/string`; }),
  },
  "partition-type-attribute-missing-on-partitionable-device": {
    want: [E.required(`${dev(0)}.attributes[gpu.example.com/profile]`, "device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.spec.devices[0].consumesCounters = createConsumesCounters(1);
      s.spec.partitionTypeAttribute = "gpu.example.com/profile";
    }),
  },
  "partition-type-attribute-not-a-string": {
    want: [E.invalid(`${dev(0)}.attributes[${driverName}/int]`, STRUCT, "must be a string value because `partitionTypeAttribute` names this attribute")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.spec.devices[0].consumesCounters = createConsumesCounters(1);
      s.spec.partitionTypeAttribute = `${driverName}/int`;
    }),
  },
  "partition-type-attribute-explicit-form-wins": {
    want: [E.invalid(`${dev(0)}.attributes[${driverName}/string]`, STRUCT, "must be a string value because `partitionTypeAttribute` names this attribute")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.spec.devices[0].consumesCounters = createConsumesCounters(1);
      s.spec.devices[0].attributes[`${driverName}/string`] = { int: 1 };
      s.spec.partitionTypeAttribute = `${driverName}/string`;
    }),
  },
  "missing-name": {
    want: [E.required("metadata.name", "name or generateName is required")],
    slice: testResourceSlice("", goodName, driverName, 1),
  },
  "bad-name": {
    want: [E.invalid("metadata.name", badName, subdomainMsg)],
    slice: testResourceSlice(badName, goodName, driverName, 1),
  },
  "generate-name": { slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.metadata.generateName = "prefix-"; }) },
  "uid": { slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.metadata.uid = "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"; }) },
  "resource-version": { slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.metadata.resourceVersion = "1"; }) },
  "generation": { slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.metadata.generation = 100; }) },
  "creation-timestamp": { slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.metadata.creationTimestamp = new Date().toISOString(); }) },
  "deletion-grace-period-seconds": { slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.metadata.deletionGracePeriodSeconds = 10; }) },
  "owner-references": {
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.metadata.ownerReferences = [{ apiVersion: "v1", kind: "pod", name: "foo", uid: "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d" }];
    }),
  },
  "finalizers": { slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.metadata.finalizers = ["example.com/foo"]; }) },
  "managed-fields": {
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.metadata.managedFields = [{ fieldsType: "FieldsV1", operation: "Apply", apiVersion: "apps/v1", manager: "foo" }];
    }),
  },
  "good-labels": { slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.metadata.labels = { "apps.kubernetes.io/name": "test" }; }) },
  "bad-labels": {
    want: [E.invalid("metadata.labels", badValue, labelValueMsg)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.metadata.labels = { "hello-world": badValue }; }),
  },
  "good-annotations": { slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.metadata.annotations = { foo: "bar" }; }) },
  "bad-annotations": {
    want: [E.invalid("metadata.annotations", badName, namePartMsg)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.metadata.annotations = { [badName]: "hello world" }; }),
  },
  "bad-nodename": {
    want: [E.invalid("spec.pool.name", badName, subdomainMsg), E.invalid("spec.nodeName", badName, subdomainMsg)],
    slice: testResourceSlice(goodName, badName, driverName, 1),
  },
  "bad-multi-pool-name": {
    want: [E.invalid("spec.pool.name", badName, subdomainMsg), E.invalid("spec.pool.name", badName, subdomainMsg),
      E.invalid("spec.nodeName", `${badName}/${badName}`, subdomainMsg)],
    slice: testResourceSlice(goodName, `${badName}/${badName}`, driverName, 1),
  },
  "good-pool-name": { slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.pool.name = rep("x", 253); }) },
  "bad-pool": {
    want: [E.tooLong("spec.pool.name", 253), E.invalid("spec.pool.resourceSliceCount", 0, "must be greater than zero"),
      E.invalid("spec.pool.generation", -1, "must be greater than or equal to zero")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.spec.pool.name = rep("x/", 126) + "xy";
      s.spec.pool.resourceSliceCount = 0;
      s.spec.pool.generation = -1;
    }),
  },
  "missing-pool-name": {
    want: [E.required("spec.pool.name", "")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.pool.name = ""; }),
  },
  "bad-empty-node-selector": {
    want: [E.required("spec.nodeSelector.nodeSelectorTerms", "must have at least one node selector term"),
      E.invalid("spec.nodeSelector.nodeSelectorTerms", null, "must have exactly one node selector term")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { delete s.spec.nodeName; s.spec.nodeSelector = {}; }),
  },
  "bad-node-selection": {
    want: [E.invalid("spec", "{`nodeName`, `nodeSelector`}", `${nodeSelectionMsg}, but multiple fields are set`)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.spec.nodeName = "worker";
      s.spec.nodeSelector = { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["worker"] }] }] };
    }),
  },
  "bad-node-selection-all-nodes": {
    want: [E.invalid("spec", "{`nodeName`, `allNodes`}", `${nodeSelectionMsg}, but multiple fields are set`)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.nodeName = "worker"; s.spec.allNodes = true; }),
  },
  "empty-node-selection": {
    want: [E.required("spec", nodeSelectionMsg)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { delete s.spec.nodeName; }),
  },
  "bad-drivername": {
    want: [E.invalid("spec.driver", badName, subdomainMsg)],
    slice: testResourceSlice(goodName, goodName, badName, 1),
  },
  "both-shared-counters-and-devices": {
    want: [E.invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.sharedCounters = [{ name: "counterset", counters: testCounters() }]; }),
  },
  "bad-devices": {
    want: [E.invalid(`${dev(1)}.name`, badName, labelMsg)],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 3), (s) => { s.spec.devices[1].name = badName; }),
  },
  "bad-attribute": {
    want: [
      E.invalid(`${dev(1)}.attributes`, badName, cIdentMsg),
      E.invalid(`${dev(1)}.attributes[${badName}]`, "", "exactly one value must be specified"),
      E.invalid(`${dev(2)}.attributes[${goodName}]`, STRUCT, "exactly one value must be specified"),
      E.invalid(`${dev(3)}.attributes[${goodName}].version`, rep("x", 65), "must be a string compatible with semver.org spec 2.0.0"),
      E.tooLong(`${dev(3)}.attributes[${goodName}].version`, 64),
      E.tooLong(`${dev(4)}.attributes[${goodName}].string`, 64),
    ],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 5), (s) => {
      s.spec.devices[1].attributes = { [badName]: {} };
      s.spec.devices[2].attributes = { [goodName]: { string: "x", version: "1.2.3" } };
      s.spec.devices[3].attributes = { [goodName]: { version: rep("x", 65) } };
      s.spec.devices[4].attributes = { [goodName]: { string: rep("x", 65) } };
    }),
  },
  "good-list-attribute": {
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 4), (s) => {
      s.spec.devices[0].attributes = { [goodName]: { bools: [true] } };
      s.spec.devices[1].attributes = { [goodName]: { ints: [1] } };
      s.spec.devices[2].attributes = { [goodName]: { strings: ["x"] } };
      s.spec.devices[3].attributes = { [goodName]: { versions: ["1.2.3"] } };
    }),
  },
  "bad-list-attribute": {
    want: [
      E.invalid(`${dev(0)}.attributes[${goodName}]`, STRUCT, "exactly one value must be specified", "union"),
      E.invalid(`${dev(1)}.attributes[${goodName}].strings`, [], "must not be empty if specified"),
      E.invalid(`${dev(1)}.attributes[${goodName}]`, STRUCT, "exactly one value must be specified", "union"),
      { ...E.tooLong(`${dev(2)}.attributes[${goodName}].strings[0]`, 64), origin: "maxBytes" },
      E.invalid(`${dev(3)}.attributes[${goodName}].versions[0]`, rep("x", 65), "must be a string compatible with semver.org spec 2.0.0"),
      E.tooLong(`${dev(3)}.attributes[${goodName}].versions[0]`, 64),
      E.invalid(`${dev(4)}.attributes[${goodName}].bools`, [], "must not be empty if specified"),
      E.invalid(`${dev(5)}.attributes[${goodName}].ints`, [], "must not be empty if specified"),
      E.invalid(`${dev(6)}.attributes[${goodName}].strings`, [], "must not be empty if specified"),
      E.invalid(`${dev(7)}.attributes[${goodName}].versions`, [], "must not be empty if specified"),
    ],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 8), (s) => {
      const a = (v) => ({ [goodName]: v });
      s.spec.devices[0].attributes = a({ ints: [1], bools: [true] });
      s.spec.devices[1].attributes = a({ ints: [1], bools: [true], strings: [] });
      s.spec.devices[2].attributes = a({ strings: [rep("x", 65)] });
      s.spec.devices[3].attributes = a({ versions: [rep("x", 65)] });
      s.spec.devices[4].attributes = a({ bools: [] });
      s.spec.devices[5].attributes = a({ ints: [] });
      s.spec.devices[6].attributes = a({ strings: [] });
      s.spec.devices[7].attributes = a({ versions: [] });
    }),
  },
  "good-attribute-names": {
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 2), (s) => {
      s.spec.devices[1].attributes = { [rep("x", 32)]: { string: "y" }, [rep("x", 63) + "/" + rep("y", 32)]: { string: "z" } };
    }),
  },
  "bad-attribute-c-identifier": {
    want: [E.tooLong(`${dev(1)}.attributes`, 32), E.invalid(`${dev(1)}.attributes`, rep(".", 33), cIdentMsg)],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 2), (s) => { s.spec.devices[1].attributes = { [rep(".", 33)]: { string: "y" } }; }),
  },
  "bad-attribute-domain": {
    want: [E.tooLong(`${dev(1)}.attributes`, 63), E.invalid(`${dev(1)}.attributes`, rep("_", 64), subdomainMsg)],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 2), (s) => { s.spec.devices[1].attributes = { [rep("_", 64) + "/y"]: { string: "z" } }; }),
  },
  "bad-key-too-long": {
    want: [E.tooLong(`${dev(1)}.attributes`, 63), E.tooLong(`${dev(1)}.attributes`, 32)],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 2), (s) => {
      s.spec.devices[1].attributes = { [rep("x", 64) + "/" + rep("y", 33)]: { string: "z" } };
    }),
  },
  "bad-attribute-empty-domain-and-c-identifier": {
    want: [E.invalid(`${dev(1)}.attributes`, "", "the domain must not be empty"), E.invalid(`${dev(1)}.attributes`, "", "the name must not be empty")],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 2), (s) => { s.spec.devices[1].attributes = { "/": { string: "z" } }; }),
  },
  "combined-attributes-capacity-length": {
    want: [E.invalid(dev(3), 33, "the total number of attributes and capacities must not exceed 32")],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 5), (s) => {
      const d = s.spec.devices;
      d[0].attributes = {};
      delete d[0].capacity;
      for (let i = 0; i < 32; i++) d[0].attributes[`attr_${i}`] = { string: "x" };
      d[1].attributes = {};
      d[1].capacity = {};
      for (let i = 0; i < 32; i++) d[1].capacity[`cap_${i}`] = { value: "1Gi" };
      d[3].attributes = clone(d[0].attributes);
      d[3].capacity = { cap: { value: "1Gi" } };
    }),
  },
  "max-attribute-values-with-list": {
    want: [
      ...[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13].map((i) => E.invalid(dev(i), 49, "the total number of attribute values must not exceed 48")),
      E.invalid(`${dev(9)}.attributes[mixed_list_attrs]`, STRUCT, "exactly one value must be specified"),
    ],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 14), (s) => {
      const d = s.spec.devices;
      const extra = [null, { int: 1 }, { bool: true }, { string: "x" }, { version: "1.0.0" }, { ints: [1] }, { bools: [true] },
        { strings: ["extra"] }, { versions: ["1.0.0"] }];
      d[0].attributes = maxStringAttributeValuesInList(48);
      for (let i = 1; i <= 8; i++) d[i].attributes = { ...maxStringAttributeValuesInList(48), extra_attr: extra[i] };
      d[9].attributes = { mixed_list_attrs: badListAttributeTooManyValueWithMixedTypes() };
      const pairs = [{ bools: [true, false] }, { ints: [1, 2] }, { strings: ["a", "b"] }, { versions: ["1.0.0", "1.0.1"] }];
      for (let i = 10; i <= 13; i++) d[i].attributes = { ...maxStringAttributeValuesInList(47), extra_attr: pairs[i - 10] };
      for (const x of d) delete x.capacity;
    }),
  },
  "forbidden-request-policy-on-single-allocatable-capacity": {
    want: [E.forbidden(`${dev(1)}.capacity[cap].requestPolicy`, "allowMultipleAllocations must be true")],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 2), (s) => {
      s.spec.devices[1].capacity = { cap: { value: "1Gi", requestPolicy: { default: "1Mi", validRange: { min: "1Mi" } } } };
    }),
  },
  "invalid-request-policy-zero-step": {
    want: [E.invalid(`${dev(1)}.capacity[cap].requestPolicy.validRange.step`, "0", "must be greater than zero")],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 2), (s) => {
      s.spec.devices[1].allowMultipleAllocations = true;
      s.spec.devices[1].capacity = { cap: { value: "1Gi", requestPolicy: { default: "10Mi", validRange: { min: "1Mi", max: "100Mi", step: "0" } } } };
    }),
  },
  "invalid-request-policy-negative-step": {
    want: [E.invalid(`${dev(1)}.capacity[cap].requestPolicy.validRange.step`, "-1Mi", "must be greater than zero")],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 2), (s) => {
      s.spec.devices[1].allowMultipleAllocations = true;
      s.spec.devices[1].capacity = { cap: { value: "1Gi", requestPolicy: { default: "10Mi", validRange: { min: "1Mi", max: "100Mi", step: "-1Mi" } } } };
    }),
  },
};

// The two consumable-capacity scenarios share their devices, as upstream's do.
function consumableCapacitySlice() {
  const slice = testResourceSliceWithConsumableCapacity(goodName, goodName, driverName, 12);
  const u = (i, fn) => updateConsumableCapacity(slice, i, fn);
  u(1, (c) => { c.value = "-1"; });
  u(2, (c) => { c.requestPolicy.default = "-1"; });
  u(3, (c) => { delete c.requestPolicy.validValues; });
  u(4, (c) => { c.requestPolicy.validRange = { min: "10" }; });
  u(5, (c) => { c.requestPolicy.validRange = { min: "1" }; delete c.requestPolicy.validValues; });
  u(6, (c) => {
    c.requestPolicy.default = add(c.requestPolicy.default, "0.1");
    c.requestPolicy.validValues[0] = add(c.requestPolicy.validValues[0], "0.1");
    c.requestPolicy.validValues[1] = add(c.requestPolicy.validValues[1], "0.1");
  });
  u(7, (c) => { c.requestPolicy.default = "1.05"; c.requestPolicy.validRange = { min: "1.1" }; delete c.requestPolicy.validValues; });
  u(8, (c) => { c.requestPolicy.validValues[0] = sub(c.requestPolicy.validValues[1], "0.1"); });
  u(9, (c) => {
    c.value = MAX_INT64;
    c.requestPolicy.default = MAX_INT64;
    delete c.requestPolicy.validValues;
    c.requestPolicy.validRange = { min: String(newQuantity(0)), step: String(newQuantity(1)), max: MAX_INT64 };
  });
  u(10, (c) => {
    c.value = maxMilli;
    c.requestPolicy.default = maxMilli;
    delete c.requestPolicy.validValues;
    c.requestPolicy.validRange = { min: String(newMilliQuantity(0)), step: String(newMilliQuantity(1)), max: maxMilli };
  });
  u(11, (c) => {
    c.value = MAX_INT64;
    c.requestPolicy.default = MAX_INT64;
    delete c.requestPolicy.validValues;
    c.requestPolicy.validRange = { min: String(newMilliQuantity(0)), step: String(newMilliQuantity(1)), max: MAX_INT64 };
  });
  return slice;
}
const consumableCommon = [
  E.invalid(`${cap(1)}.requestPolicy.validValues[0]`, "5", "option is larger than capacity value: -1"),
  E.invalid(`${cap(1)}.requestPolicy.validValues[1]`, "10", "option is larger than capacity value: -1"),
  E.invalid(`${cap(1)}.requestPolicy.validValues[2]`, "100", "option is larger than capacity value: -1"),
  E.invalid(`${cap(2)}.requestPolicy.validValues`, "-1", "default value is not valid according to the requestPolicy"),
  E.forbidden(`${cap(4)}.requestPolicy`, 'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time'),
  E.invalid(`${cap(7)}.requestPolicy.validRange.default`, "1050m", "default is less than min: 1100m"),
];
createScenarios["consumable-capacity-integer"] = {
  gates: { DRAConsumableCapacity: true, DRAFractionalCapacityRange: false },
  slice: consumableCapacitySlice(),
  want: [...consumableCommon, E.duplicate(`${cap(8)}.requestPolicy.validValues[1]`, "10")],
};
createScenarios["consumable-capacity-fractional"] = {
  gates: { DRAConsumableCapacity: true, DRAFractionalCapacityRange: true },
  slice: consumableCapacitySlice(),
  want: [...consumableCommon,
    E.invalid(`${cap(11)}.requestPolicy.validRange.default`, MAX_INT64, "value cannot be represented as a milli value"),
    E.invalid(`${cap(11)}.requestPolicy.validRange.max`, MAX_INT64, "value cannot be represented as a milli value")],
};

Object.assign(createScenarios, {
  "invalid-node-selecor-label-value": {
    want: [E.invalid("spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[0]", "-1", labelValueMsg)],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 3), (s) => {
      delete s.spec.nodeName;
      s.spec.nodeSelector = { nodeSelectorTerms: [{ matchExpressions: [{ key: "foo", operator: "In", values: ["-1"] }] }] };
    }),
  },
  "taints": {
    want: [
      E.invalid(`${dev(0)}.taints[2].key`, "", "name part must be non-empty"),
      E.invalid(`${dev(0)}.taints[2].key`, "", namePartMsg),
      E.required(`${dev(0)}.taints[2].effect`, ""),
      E.invalid(`${dev(0)}.taints[3].key`, badName, namePartMsg),
      E.invalid(`${dev(0)}.taints[3].value`, badName, labelValueMsg),
      E.notSupported(`${dev(0)}.taints[3].effect`, "some-other-effect", effects),
    ],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 3), (s) => {
      s.spec.devices[0].taints = [
        { key: "example.com/taint", effect: "NoExecute" },
        { key: "taint", value: "tainted", effect: "NoSchedule", timeAdded: new Date().toISOString() },
        {},
        { key: badName, value: badName, effect: "some-other-effect" },
      ];
    }),
  },
  "too-many-taints": {
    want: [E.tooMany(`${dev(0)}.taints`, 17, 16)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.spec.devices[0].taints = Array.from({ length: 17 }, () => ({ key: "example.com/taint", effect: "NoExecute" }));
    }),
  },
  "bad-PerDeviceNodeSelection": {
    want: [E.invalid("spec", "{`nodeName`, `perDeviceNodeSelection`}", `${nodeSelectionMsg}, but multiple fields are set`),
      E.required(dev(0), perDeviceMsg)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.nodeName = "worker"; s.spec.perDeviceNodeSelection = true; }),
  },
  "invalid-false-PerDeviceNodeSelection": {
    want: [E.invalid("spec.perDeviceNodeSelection", false, "must be either unset or set to true")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.nodeName = "worker"; s.spec.perDeviceNodeSelection = false; }),
  },
  "invalid-false-AllNodes": {
    want: [E.invalid("spec.allNodes", false, "must be either unset or set to true")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.nodeName = "worker"; s.spec.allNodes = false; }),
  },
  "invalid-empty-NodeName": {
    want: [E.invalid("spec.nodeName", "", "must be either unset or set to a non-empty string")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.nodeName = ""; s.spec.allNodes = true; }),
  },
  "invalid-node-selector-in-basicdevice": {
    want: [E.invalid(`${dev(0)}.nodeName`, "", "must not be empty"), E.invalid(`${dev(0)}.allNodes`, false, "must be either unset or set to true"),
      E.required(dev(0), perDeviceMsg)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.spec.perDeviceNodeSelection = true;
      delete s.spec.nodeName;
      s.spec.devices[0].nodeName = "";
      s.spec.devices[0].allNodes = false;
    }),
  },
  "bad-node-selector-in-basicdevice": {
    want: [E.invalid(dev(0), "{`nodeName`, `allNodes`}", perDeviceMsg)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.spec.perDeviceNodeSelection = true;
      delete s.spec.nodeName;
      s.spec.devices[0].nodeName = "worker";
      s.spec.devices[0].allNodes = true;
    }),
  },
  "missing-name-shared-counters": {
    want: [E.required("spec.sharedCounters[0].name", "")],
    slice: tweak(testResourceSliceWithSharedCounters(goodName, goodName, driverName, 1), (s) => { s.spec.sharedCounters = [{ counters: testCounters() }]; }),
  },
  "bad-name-shared-counters": {
    want: [E.invalid("spec.sharedCounters[0].name", badName, labelMsg)],
    slice: tweak(testResourceSliceWithSharedCounters(goodName, goodName, driverName, 0), (s) => {
      s.spec.sharedCounters = [{ name: badName, counters: testCounters() }];
    }),
  },
  "missing-counter-shared-counters": {
    want: [E.required("spec.sharedCounters[0].counters", "")],
    slice: tweak(testResourceSliceWithSharedCounters(goodName, goodName, driverName, 0), (s) => { s.spec.sharedCounters = [{ name: goodName }]; }),
  },
  "bad-countername-shared-counters": {
    want: [E.invalid("spec.sharedCounters[0].counters", badName, labelMsg)],
    slice: tweak(testResourceSliceWithSharedCounters(goodName, goodName, driverName, 1), (s) => {
      s.spec.sharedCounters = [{ name: goodName, counters: { [badName]: { value: "1Gi" } } }];
    }),
  },
  "duplicate-shared-counters": {
    want: [E.duplicate("spec.sharedCounters[1]", goodName)],
    slice: tweak(testResourceSliceWithSharedCounters(goodName, goodName, driverName, 1), (s) => {
      s.spec.sharedCounters = [{ name: goodName, counters: testCounters() }, { name: goodName, counters: testCounters() }];
    }),
  },
  "max-shared-counters": {
    slice: tweak(testResourceSliceWithSharedCounters(goodName, goodName, driverName, 1), (s) => { s.spec.sharedCounters = createSharedCounters(8); }),
  },
  "too-many-shared-counters": {
    want: [E.tooMany("spec.sharedCounters", 9, 8)],
    slice: tweak(testResourceSliceWithSharedCounters(goodName, goodName, driverName, 1), (s) => { s.spec.sharedCounters = createSharedCounters(9); }),
  },
  "max-counters-in-counter-set": {
    slice: tweak(testResourceSliceWithSharedCounters(goodName, goodName, driverName, 1), (s) => { s.spec.sharedCounters[0].counters = testMultipleCounters(32); }),
  },
  "too-many-counters-in-counter-set": {
    want: [E.tooMany("spec.sharedCounters[0].counters", 33, 32)],
    slice: tweak(testResourceSliceWithSharedCounters(goodName, goodName, driverName, 1), (s) => { s.spec.sharedCounters[0].counters = testMultipleCounters(33); }),
  },
  "missing-name-counterset-consumes-counter": {
    want: [E.required(`${dev(0)}.consumesCounters[0].counterSet`, "")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.devices[0].consumesCounters = [{ counters: testCounters() }]; }),
  },
  "bad-name-counterset-consumes-counter": {
    want: [E.invalid(`${dev(0)}.consumesCounters[0].counterSet`, badName, labelMsg)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.devices[0].consumesCounters = [{ counterSet: badName, counters: testCounters() }]; }),
  },
  "duplicate-counterset-consumes-counter": {
    want: [E.duplicate(`${dev(0)}.consumesCounters[1]`, goodName)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      s.spec.devices[0].consumesCounters = [{ counterSet: goodName, counters: testCounters() }, { counterSet: goodName, counters: testCounters() }];
    }),
  },
  "missing-counter-consumes-counter": {
    want: [E.required(`${dev(0)}.consumesCounters[0].counters`, "")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.devices[0].consumesCounters = [{ counterSet: "counterset-0" }]; }),
  },
  "max-device-counter-consumption-for-device": {
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      delete s.spec.devices[0].attributes;
      delete s.spec.devices[0].capacity;
      s.spec.devices[0].consumesCounters = createConsumesCounters(2);
    }),
  },
  "too-many-device-counter-consumption-for-device": {
    want: [E.tooMany(`${dev(0)}.consumesCounters`, 3, 2)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      delete s.spec.devices[0].attributes;
      delete s.spec.devices[0].capacity;
      s.spec.devices[0].consumesCounters = createConsumesCounters(3);
    }),
  },
  "max-counters-in-device-counter-consumption": {
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      delete s.spec.devices[0].attributes;
      delete s.spec.devices[0].capacity;
      s.spec.devices[0].consumesCounters = [{ counterSet: "counterset-0", counters: testMultipleCounters(32) }];
    }),
  },
  "too-many-counters-in-device-counter-consumption": {
    want: [E.tooMany(`${dev(0)}.consumesCounters[0].counters`, 33, 32)],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => {
      delete s.spec.devices[0].attributes;
      delete s.spec.devices[0].capacity;
      s.spec.devices[0].consumesCounters = [{ counterSet: "counterset-0", counters: testMultipleCounters(33) }];
    }),
  },
  "max-number-of-devices-with-consumes-counters": {
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 64), (s) => {
      for (const d of s.spec.devices) d.consumesCounters = [{ counterSet: "counterset-0", counters: testCounters() }];
    }),
  },
  "too-many-devices-with-consumes-counters": {
    want: [E.tooMany("spec.devices", 65, 64)],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 65), (s) => {
      s.spec.devices[0].consumesCounters = [{ counterSet: "counterset-0", counters: testCounters() }];
    }),
  },
  "good-binding-conditions": {
    slice: testResourceSliceWithBindingConditions(goodName, goodName, driverName, 1, ["example.com/condition1", "condition2"], ["example.com/condition3", "condition4"]),
  },
  "too-many-binding-conditions": {
    want: [E.tooMany(`${dev(0)}.bindingConditions`, 5, 4)],
    slice: testResourceSliceWithBindingConditions(goodName, goodName, driverName, 1, ["condition1", "condition2", "condition3", "condition4", "condition5"], ["condition6", "condition7"]),
  },
  "too-many-binding-failure-conditions": {
    want: [E.tooMany(`${dev(0)}.bindingFailureConditions`, 5, 4)],
    slice: testResourceSliceWithBindingConditions(goodName, goodName, driverName, 1, ["condition1", "condition2"], ["condition3", "condition4", "condition5", "condition6", "condition7"]),
  },
  "invalid-binding-conditions": {
    want: [E.invalid(`${dev(0)}.bindingConditions[1]`, "condition2!", conditionValidationErrMessage)],
    slice: testResourceSliceWithBindingConditions(goodName, goodName, driverName, 1, ["condition1", "condition2!"], ["condition3", "condition4"]),
  },
  "invalid-binding-failure-conditions": {
    want: [E.invalid(`${dev(0)}.bindingFailureConditions[0]`, "condition3!", conditionValidationErrMessage)],
    slice: testResourceSliceWithBindingConditions(goodName, goodName, driverName, 1, ["condition1", "condition2"], ["condition3!", "condition4"]),
  },
  "invalid-slice-has-binding-failure-but-no-binding-conditions": {
    want: [E.invalid(`${dev(0)}.bindingConditions`, null, "bindingConditions are required to use bindingFailureConditions")],
    slice: testResourceSliceWithBindingConditions(goodName, goodName, driverName, 1, null, ["condition1", "condition2"]),
  },
  "invalid-slice-has-binding-conditions-but-no-binding-failure-conditions": {
    want: [E.invalid(`${dev(0)}.bindingFailureConditions`, null, "bindingFailureConditions are required to use bindingConditions")],
    slice: testResourceSliceWithBindingConditions(goodName, goodName, driverName, 1, ["condition1", "condition2"], null),
  },
  "duplicate-binding-conditions": {
    want: [E.duplicate(`${dev(0)}.bindingConditions[1]`, "condition1")],
    slice: testResourceSliceWithBindingConditions(goodName, goodName, driverName, 1, ["condition1", "condition1"], ["condition2", "condition3"]),
  },
  "duplicate-binding-failure-conditions": {
    want: [E.duplicate(`${dev(0)}.bindingFailureConditions[1]`, "condition3")],
    slice: testResourceSliceWithBindingConditions(goodName, goodName, driverName, 1, ["condition1", "condition2"], ["condition3", "condition3"]),
  },
  "overlapping-binding-conditions": {
    want: [E.invalid(`${dev(0)}.bindingFailureConditions[0]`, "condition1", "bindingFailureConditions must not overlap with bindingConditions")],
    slice: testResourceSliceWithBindingConditions(goodName, goodName, driverName, 1, ["condition1", "condition2"], ["condition1", "condition3"]),
  },
});

// The node allocatable resource cases: one device, its nodeAllocatableResources replaced.
const nar = `${dev(0)}.nodeAllocatableResources`;
function withNAR(resources, base = testResourceSliceWithNodeAllocatableResources) {
  const slice = base(goodName, goodName, driverName, 1);
  slice.spec.devices[0].nodeAllocatableResources = resources;
  return slice;
}
const narCases = {
  "correct-node-allocatable-resource-mappings": { slice: testResourceSliceWithNodeAllocatableResources(goodName, goodName, driverName, 1) },
  "node-allocatable-resources-both-quantityfrom": { slice: withNAR({ cpu: { mapping: { capacityKey: "dra.example.com/cpu", capacityMultiplier: "1" } } }) },
  "bad-node-allocatable-resources-capacityKey-empty": {
    want: [E.invalid(`${nar}[cpu].mapping.capacityKey`, "", "capacityKey must not be an empty string")],
    slice: withNAR({ cpu: { mapping: { capacityKey: "", capacityMultiplier: "1" } } }),
  },
  "bad-node-allocatable-resources-capacity-key-not-found": {
    want: [E.notFound(`${nar}[cpu].mapping.capacityKey`, "nonexistent")],
    slice: withNAR({ cpu: { mapping: { capacityKey: "nonexistent", capacityMultiplier: "1" } } }),
  },
  "bad-node-allocatable-resources-invalid-device-multiplier-negative": {
    want: [E.invalid(`${nar}[cpu].mapping.deviceMultiplier`, "-1", "must be positive")],
    slice: withNAR({ cpu: { mapping: { deviceMultiplier: "-1" } } }, testResourceSlice),
  },
  "bad-node-allocatable-resources-invalid-capacity-multiplier-negative": {
    want: [E.invalid(`${nar}[cpu].mapping.capacityMultiplier`, "-1", "must be positive")],
    slice: withNAR({ cpu: { mapping: { capacityKey: "dra.example.com/cpu", capacityMultiplier: "-1" } } }),
  },
  "bad-node-allocatable-resources-invalid-device-multiplier-zero": {
    want: [E.invalid(`${nar}[cpu].mapping.deviceMultiplier`, "0", "must be positive")],
    slice: withNAR({ cpu: { mapping: { deviceMultiplier: "0" } } }, testResourceSlice),
  },
  "bad-node-allocatable-resources-invalid-capacity-multiplier-zero": {
    want: [E.invalid(`${nar}[cpu].mapping.capacityMultiplier`, "0", "must be positive")],
    slice: withNAR({ cpu: { mapping: { capacityKey: "dra.example.com/cpu", capacityMultiplier: "0" } } }),
  },
  "capacity key not in spec.devices[].capacity": {
    want: [E.notFound(`${nar}[memory].mapping.capacityKey`, "dra.example.com/hugepages")],
    slice: withNAR({ memory: { mapping: { capacityKey: "dra.example.com/hugepages", capacityMultiplier: "1" } } }),
  },
  "mapped resource is not a node allocatable resource": {
    want: [E.invalid(`${nar}[dra.example.com/gpu]`, "dra.example.com/gpu", "must be a node allocatable resource name")],
    slice: withNAR({ "dra.example.com/gpu": { mapping: { capacityKey: "dra.example.com/cpu", capacityMultiplier: "1" } } }),
  },
  "non standard resource name": {
    want: [E.invalid(`${nar}[abc]`, "abc", "must be a node allocatable resource name")],
    slice: withNAR({ abc: { overhead: { perPod: "1" } } }),
  },
  "kubernetes.io namespace is rejected": {
    want: [E.invalid(`${nar}[kubernetes.io/foo]`, "kubernetes.io/foo", "must be a node allocatable resource name")],
    slice: withNAR({ "kubernetes.io/foo": { overhead: { perPod: "1" } } }),
  },
  "ephemeral-storage is rejected": {
    want: [E.invalid(`${nar}[ephemeral-storage]`, "ephemeral-storage", "must be a node allocatable resource name")],
    slice: withNAR({ "ephemeral-storage": { overhead: { perPod: "2Gi" } } }),
  },
  "valid hugepages resource": { slice: withNAR({ "hugepages-2Mi": { overhead: { perPod: "2Mi" } } }) },
  "bad-node-allocatable-resources-overhead-neither-perpod-nor-percontainer-set": {
    want: [E.invalid(`${nar}[memory].overhead`, "", "at least one of perPod or perContainer must be set")],
    slice: withNAR({ memory: { overhead: {} } }),
  },
  "bad-node-allocatable-resources-overhead-negative-perpod": {
    want: [E.invalid(`${nar}[memory].overhead.perPod`, "-1Gi", "must be non-negative")],
    slice: withNAR({ memory: { overhead: { perPod: "-1Gi" } } }),
  },
  "bad-node-allocatable-resources-overhead-negative-percontainer": {
    want: [E.invalid(`${nar}[memory].overhead.perContainer`, "-500Mi", "must be non-negative")],
    slice: withNAR({ memory: { overhead: { perContainer: "-500Mi" } } }),
  },
  "good-node-allocatable-resources-overhead": { slice: withNAR({ memory: { overhead: { perPod: "1Gi", perContainer: "500Mi" } } }) },
  "good-node-allocatable-resources-both-mapping-and-overhead-set": {
    slice: withNAR({ cpu: { mapping: { capacityKey: "dra.example.com/cpu", capacityMultiplier: "1" }, overhead: { perPod: "1Gi" } } }),
  },
  "bad-node-allocatable-resources-neither-mapping-nor-overhead-set": {
    want: [E.required(`${nar}[cpu]`, "at least one of mapping or overhead must be set")],
    slice: withNAR({ cpu: {} }),
  },
  "bad-node-allocatable-resources-capacity-key-set-without-multiplier": {
    want: [E.required(`${nar}[cpu].mapping.capacityMultiplier`, "capacityMultiplier is required when capacityKey is set")],
    slice: withNAR({ cpu: { mapping: { capacityKey: "dra.example.com/cpu" } } }),
  },
  "bad-node-allocatable-resources-multiplier-set-without-capacity-key": {
    want: [E.required(`${nar}[cpu].mapping.capacityKey`, "capacityKey is required when capacityMultiplier is set")],
    slice: withNAR({ cpu: { mapping: { capacityMultiplier: "1" } } }),
  },
};
for (const [name, c] of Object.entries(narCases)) createScenarios[name] = { ...c, gates: { DRANodeAllocatableResources: true } };

Object.assign(createScenarios, {
  "valid: skipNodeOperations All and Prepare": {
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.skipNodeOperations = ["*", "NodePrepareResources"]; }),
  },
  "valid: skipNodeOperations Prepare and Unprepare": {
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.skipNodeOperations = ["NodePrepareResources", "NodeUnprepareResources"]; }),
  },
  "invalid: skipNodeOperations Prepare only": {
    want: [E.invalid("spec.skipNodeOperations", ["NodePrepareResources"], "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped")],
    slice: tweak(testResourceSlice(goodName, goodName, driverName, 1), (s) => { s.spec.skipNodeOperations = ["NodePrepareResources"]; }),
  },
});

for (const kind of ["int", "bool", "string", "version"]) {
  const values = { int: { ints: [1, 2, 3] }, bool: { bools: [true, false, true] }, string: { strings: ["a", "b", "c"] }, version: { versions: ["1.0.0", "2.0.0", "3.0.0"] } }[kind];
  const attr = { int: "ints", bool: "bools", string: "strings", version: "versions" }[kind];
  createScenarios[`max-devices-with-list-of-${kind}-attributes`] = {
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 64), (s) => { for (const d of s.spec.devices) d.attributes[attr] = clone(values); }),
  };
  createScenarios[`too-many-devices-with-list-of-${kind}-attributes`] = {
    want: [E.tooMany("spec.devices", 65, 64)],
    slice: tweak(testResourceSlice(goodName, goodName, goodName, 65), (s) => { s.spec.devices[0].attributes[attr] = clone(values); }),
  };
}

for (const [name, c] of Object.entries(createScenarios)) {
  upstream++;
  check(`TestValidateResourceSlice/${name}`, () => {
    assertFailures(c.want ?? [], ValidateResourceSlice(c.slice, { release: MAIN, gates: c.gates ?? {} }));
  });
}

// --- TestValidateResourceSliceUpdate ---------------------------------------------------------

{
  const name = "valid";
  const validResourceSlice = testResourceSlice(name, name, name, 1);
  const invalidResourceSliceWithTaints = clone(validResourceSlice);
  invalidResourceSliceWithTaints.spec.devices[0].taints = [
    { key: "unhealthy-power", effect: "NoExecute" }, { key: "unhealthy-mem", effect: "some-other-effect" }];
  const cc = () => testResourceSliceWithConsumableCapacity(name, name, name, 1);
  const fractionAsDuplicate = (s) => updateConsumableCapacity(s, 0, (c) => { c.requestPolicy.validValues[0] = sub(c.requestPolicy.validValues[1], "0.1"); });
  const int64Bound = (s) => updateConsumableCapacity(s, 0, (c) => { c.requestPolicy = { default: "0", validRange: { min: "-1", step: "1" } }; });
  const bigRange = (s) => updateConsumableCapacity(s, 0, (c) => {
    c.value = MAX_INT64;
    c.requestPolicy.default = MAX_INT64;
    delete c.requestPolicy.validValues;
    c.requestPolicy.validRange = { min: String(newMilliQuantity(0)), step: String(newMilliQuantity(1)), max: MAX_INT64 };
  });
  const stored = (fn) => tweak(cc(), fn);
  const updateScenarios = {
    "valid-no-op-update": { old: validResourceSlice, update: (s) => s },
    "invalid-name-update": {
      old: validResourceSlice, update: (s) => tweak(s, () => { s.metadata.name += "-update"; }),
      want: [E.invalid("metadata.name", `${name}-update`, "field is immutable")],
    },
    "invalid-update-nodename": {
      old: validResourceSlice, update: (s) => tweak(s, () => { s.spec.nodeName += "-updated"; }),
      want: [E.invalid("spec.nodeName", `${name}-updated`, "field is immutable")],
    },
    "invalid-update-drivername": {
      old: validResourceSlice, update: (s) => tweak(s, () => { s.spec.driver += "-updated"; }),
      want: [E.invalid("spec.driver", `${name}-updated`, "field is immutable")],
    },
    "invalid-update-pool": {
      old: validResourceSlice, update: (s) => tweak(s, () => { s.spec.pool.name += "-updated"; }),
      want: [E.invalid("spec.pool.name", `${name}-updated`, "field is immutable")],
    },
    "invalid-update-to-invalid-nodeselector-label-value": {
      old: tweak(clone(validResourceSlice), (s) => {
        delete s.spec.nodeName;
        s.spec.nodeSelector = { nodeSelectorTerms: [{ matchExpressions: [{ key: "foo", operator: "In", values: ["bar"] }] }] };
      }),
      update: (s) => tweak(s, () => {
        s.spec.nodeSelector = { nodeSelectorTerms: [{ matchExpressions: [{ key: "foo", operator: "In", values: ["-1"] }] }] };
      }),
      want: [E.invalid("spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values[0]", "-1", labelValueMsg)],
    },
    "invalid-new-effect-in-old-device": {
      old: validResourceSlice, update: (s) => tweak(s, () => { s.spec.devices[0].taints = clone(invalidResourceSliceWithTaints.spec.devices[0].taints); }),
      want: [E.notSupported(`${dev(0)}.taints[1].effect`, "some-other-effect", effects)],
    },
    "valid-old-effect": {
      old: invalidResourceSliceWithTaints, update: (s) => tweak(s, () => { s.spec.devices[0].attributes.foo = { string: "bar" }; }),
    },
    "invalid-new-effect-in-new-device": {
      old: invalidResourceSliceWithTaints,
      update: (s) => tweak(s, () => { const d = clone(s.spec.devices[0]); d.name += "-other"; s.spec.devices.push(d); }),
      want: [E.notSupported(`${dev(1)}.taints[1].effect`, "some-other-effect", effects)],
    },
    "consumable-capacity-valid-values-integer": {
      gates: { DRAFractionalCapacityRange: false }, old: cc(), update: (s) => tweak(s, fractionAsDuplicate),
      want: [E.duplicate(`spec.devices[0].capacity[a].requestPolicy.validValues[1]`, "10")],
    },
    "consumable-capacity-valid-values-integer-okay-if-stored": {
      gates: { DRAFractionalCapacityRange: false }, old: stored(fractionAsDuplicate), update: (s) => s,
    },
    "consumable-capacity-valid-values-spelling-fractional-gate": {
      gates: { DRAFractionalCapacityRange: true }, old: cc(), update: (s) => tweak(s, (x) => updateConsumableCapacity(x, 0, spellFirstValidValueTwice)),
      want: [E.duplicate(`spec.devices[0].capacity[a].requestPolicy.validValues[1]`, "5")],
    },
    "consumable-capacity-valid-values-spelling-fractional-gate-okay-if-stored": {
      gates: { DRAFractionalCapacityRange: true }, old: stored((x) => updateConsumableCapacity(x, 0, spellFirstValidValueTwice)),
      update: (s) => tweak(s, () => { s.metadata.labels = { updated: "true" }; }),
    },
    "consumable-capacity-valid-values-spelling-fractional-gate-rechecked": {
      gates: { DRAFractionalCapacityRange: true }, old: stored((x) => updateConsumableCapacity(x, 0, spellFirstValidValueTwice)),
      update: (s) => tweak(s, () => { s.spec.devices[0].capacity.b = { value: "1" }; }),
      want: [E.duplicate(`spec.devices[0].capacity[a].requestPolicy.validValues[1]`, "5")],
    },
    "consumable-capacity-valid-range-out-of-int64-bound": {
      old: cc(), update: (s) => tweak(s, int64Bound),
      want: [E.invalid(`spec.devices[0].capacity[a].requestPolicy.validRange.min`, "-1", "must be greater than or equal to 0")],
    },
    "consumable-capacity-valid-range-out-of-int64-bound-okay-if-stored": { old: stored(int64Bound), update: (s) => s },
    "consumable-capacity-valid-values-milli-values": {
      gates: { DRAFractionalCapacityRange: true }, old: cc(), update: (s) => tweak(s, fractionAsDuplicate),
    },
    "consumable-capacity-valid-range-integer": {
      gates: { DRAFractionalCapacityRange: false }, old: cc(), update: (s) => tweak(s, bigRange),
    },
    "consumable-capacity-valid-range-integer-okay-if-stored": {
      gates: { DRAFractionalCapacityRange: true }, old: stored(bigRange), update: (s) => s,
    },
    "consumable-capacity-valid-range-milli-values": {
      gates: { DRAFractionalCapacityRange: true }, old: cc(), update: (s) => tweak(s, bigRange),
      want: [E.invalid(`spec.devices[0].capacity[a].requestPolicy.validRange.default`, MAX_INT64, "value cannot be represented as a milli value"),
        E.invalid(`spec.devices[0].capacity[a].requestPolicy.validRange.max`, MAX_INT64, "value cannot be represented as a milli value")],
    },
  };
  for (const [caseName, c] of Object.entries(updateScenarios)) {
    upstream++;
    check(`TestValidateResourceSliceUpdate/${caseName}`, () => {
      const old = clone(c.old);
      old.metadata.resourceVersion = "1";
      const updated = c.update(clone(old));
      assertFailures(c.want ?? [], ValidateResourceSliceUpdate(updated, old, { release: MAIN, gates: c.gates ?? {} }));
    });
  }
}

// --- strategy_test.go -------------------------------------------------------------------------

{
  const slice = { metadata: { name: "valid-resource-slice" },
    spec: { nodeName: "valid-node-name", driver: "testdriver.example.com", pool: { name: "valid-pool-name", resourceSliceCount: 1 }, devices: [{ name: "device-0" }] } };
  const sliceWithDeviceTaints = tweak(clone(slice), (s) => { s.spec.devices[0].taints = [{ key: "example.com/tainted", effect: "NoSchedule" }]; });
  const sliceWithBindingConditions = tweak(clone(slice), (s) => {
    Object.assign(s.spec.devices[0], { bindingConditions: ["cond1"], bindingFailureConditions: ["fail1"], bindsToNode: true });
  });
  const sliceWithPerDeviceNodeSelection = { metadata: { name: "valid-resource-slice" }, spec: { perDeviceNodeSelection: true, driver: "testdriver.example.com",
    pool: { name: "valid-pool-name", resourceSliceCount: 1, generation: 1 }, devices: [{ name: "device", nodeName: "valid-node-name" }] } };
  const sliceWithConsumesCounters = { metadata: { name: "valid-resource-slice" }, spec: { nodeName: "valid-node-name", driver: "testdriver.example.com",
    pool: { name: "valid-pool-name", resourceSliceCount: 1, generation: 1 },
    devices: [{ name: "device", consumesCounters: [{ counterSet: "pool-1", counters: { memory: { value: "40Gi" } } }],
      attributes: { version: { string: "v1" } }, capacity: { memory: { value: "40Gi" } } }] } };
  const sliceWithSharedCounters = { metadata: { name: "valid-resource-slice" }, spec: { nodeName: "valid-node-name", driver: "testdriver.example.com",
    pool: { name: "valid-pool-name", resourceSliceCount: 1, generation: 1 }, sharedCounters: [{ name: "pool-1", counters: { memory: { value: "40Gi" } } }] } };
  const sliceWithCapacity = tweak(clone(slice), (s) => { s.spec.devices[0].capacity = { memory: { value: "40Gi" } }; });
  const sliceWithConsumableCapacity = tweak(clone(sliceWithCapacity), (s) => {
    s.spec.devices[0].allowMultipleAllocations = true;
    s.spec.devices[0].capacity.memory = { value: "40Gi", requestPolicy: { default: "1Gi", validRange: { min: "1Gi" } } };
  });
  const sliceWithNodeAllocatableResources = tweak(clone(slice), (s) => {
    s.spec.devices[0].nodeAllocatableResourceMappings = { cpu: { allocationMultiplier: "1" } };
  });
  const sliceWithListTypeAttributes = tweak(clone(slice), (s) => { s.spec.devices[0].attributes = { list_attribute: { strings: ["value1", "value2"] } }; });
  const sliceWithPartitionTypeAttribute = tweak(clone(sliceWithSharedCounters), (s) => { s.spec.partitionTypeAttribute = "gpu.example.com/profile"; });
  const gen1 = (s) => tweak(clone(s), (x) => { x.metadata.generation = 1; });
  const rv4 = (s, g) => tweak(clone(s), (x) => { x.metadata.resourceVersion = "4"; if (g) x.metadata.generation = g; });
  const gatesFor = (emulated, overrides) => ({ ...gateDefaults(emulated ?? "1.37"), ...overrides });

  // featureOverrides, expectObj (or expectedValidationError)
  const createCases = {
    "simple": { obj: slice, expect: gen1(slice) },
    "validation error": { obj: tweak(clone(slice), (s) => { s.metadata.name = "%#@$%$"; }), error: true },
    "drop-fields-device-taints": { obj: sliceWithDeviceTaints, gates: { DRADeviceTaints: false }, emulated: "1.35", expect: gen1(slice) },
    "keep-fields-device-taints": { obj: sliceWithDeviceTaints, gates: { DRADeviceTaints: true }, expect: gen1(sliceWithDeviceTaints) },
    "drop-fields-partitionable-devices-with-consumes-counters": {
      obj: sliceWithConsumesCounters, gates: { DRAPartitionableDevices: false },
      expect: tweak(gen1(sliceWithConsumesCounters), (s) => { delete s.spec.devices[0].consumesCounters; }),
    },
    "drop-fields-partitionable-devices-with-per-device-node-selection": { obj: sliceWithPerDeviceNodeSelection, gates: { DRAPartitionableDevices: false }, error: true },
    "drop-fields-partitionable-devices-with-shared-counters": {
      obj: sliceWithSharedCounters, gates: { DRAPartitionableDevices: false }, expect: tweak(gen1(sliceWithSharedCounters), (s) => { delete s.spec.sharedCounters; }),
    },
    "keep-fields-partitionable-devices-with-consumes-counters": { obj: sliceWithConsumesCounters, gates: { DRAPartitionableDevices: true }, expect: gen1(sliceWithConsumesCounters) },
    "keep-fields-partitionable-devices-with-per-device-node-selection": { obj: sliceWithPerDeviceNodeSelection, gates: { DRAPartitionableDevices: true }, expect: gen1(sliceWithPerDeviceNodeSelection) },
    "keep-fields-partitionable-devices-with-shared-counters": { obj: sliceWithSharedCounters, gates: { DRAPartitionableDevices: true }, expect: gen1(sliceWithSharedCounters) },
    "drop-fields-binding-conditions": {
      obj: sliceWithBindingConditions, emulated: "1.35", gates: { DRADeviceBindingConditions: false, DRAResourceClaimDeviceStatus: false }, expect: gen1(slice),
    },
    "drop-fields-binding-conditions-with-binding-conditions": {
      obj: sliceWithBindingConditions, gates: { DRADeviceBindingConditions: false, DRAResourceClaimDeviceStatus: true }, expect: gen1(slice),
    },
    "keep-fields-binding-conditions": {
      obj: sliceWithBindingConditions, gates: { DRADeviceBindingConditions: true, DRAResourceClaimDeviceStatus: true }, expect: gen1(sliceWithBindingConditions),
    },
    "keep-fields-consumable-capacity": { obj: sliceWithConsumableCapacity, gates: { DRAConsumableCapacity: true }, expect: gen1(sliceWithConsumableCapacity) },
    "drop-fields-consumable-capacity-disabled-feature": { obj: sliceWithConsumableCapacity, gates: { DRAConsumableCapacity: false }, expect: gen1(sliceWithCapacity) },
    "keep-fields-node-allocatable-dra-claims": { obj: sliceWithNodeAllocatableResources, gates: { DRANodeAllocatableResources: true }, expect: gen1(sliceWithNodeAllocatableResources) },
    "drop-fields-node-allocatable-dra-claims-disabled-feature": { obj: sliceWithNodeAllocatableResources, gates: { DRANodeAllocatableResources: false }, expect: gen1(slice) },
    "keep-fields-list-type-attributes": { obj: sliceWithListTypeAttributes, gates: { DRAListTypeAttributes: true }, expect: gen1(sliceWithListTypeAttributes) },
    "drop-fields-list-type-attributes": { obj: sliceWithListTypeAttributes, gates: { DRAListTypeAttributes: false }, error: true },
    // Adapted (header): the field is kept, and today's validation refuses it on this slice.
    "keep-fields-partition-type-attribute": {
      obj: sliceWithPartitionTypeAttribute, gates: { DRAPartitionableDevices: true, DRAPartitionableDevicesType: true }, error: true,
      kept: (s) => assert.equal(s.spec.partitionTypeAttribute, "gpu.example.com/profile"),
    },
    "drop-fields-partition-type-attribute": {
      obj: sliceWithPartitionTypeAttribute, gates: { DRAPartitionableDevices: true, DRAPartitionableDevicesType: false }, expect: gen1(sliceWithSharedCounters),
    },
  };
  for (const [caseName, c] of Object.entries(createCases)) {
    upstream++;
    check(`TestResourceSliceStrategyCreate/${caseName}`, () => {
      const gates = gatesFor(c.emulated, c.gates);
      const obj = clone(c.obj);
      prepareForCreate(gates, obj);
      c.kept?.(obj);
      const errs = ValidateResourceSlice(obj, { release: MAIN, gates });
      if (errs.length) {
        assert.ok(c.error, `unexpected validation errors: ${errs.join("; ")}`);
        return;
      }
      assert.ok(!c.error, "expected validation errors, got none");
      assert.deepEqual(resourceSliceWarnings(obj), []);
      assert.deepEqual(obj, c.expect);
    });
  }

  const updateCases = {
    "no-changes-okay": { old: slice, new: rv4(slice), expect: rv4(slice) },
    "name-change-not-allowed": { old: slice, new: tweak(rv4(slice), (s) => { s.metadata.name = "valid-slice-2"; }), error: true },
    "drop-fields-device-taints": { old: slice, new: rv4(slice), gates: { DRADeviceTaints: false }, emulated: "1.35", expect: rv4(slice) },
    "keep-fields-device-taints": { old: slice, new: rv4(sliceWithDeviceTaints), gates: { DRADeviceTaints: true }, expect: rv4(sliceWithDeviceTaints, 1) },
    "keep-existing-fields-device-taints": { old: sliceWithDeviceTaints, new: rv4(sliceWithDeviceTaints), gates: { DRADeviceTaints: true }, expect: rv4(sliceWithDeviceTaints) },
    "keep-existing-fields-device-taints-disabled-feature": {
      old: sliceWithDeviceTaints, new: rv4(sliceWithDeviceTaints), gates: { DRADeviceTaints: false }, emulated: "1.35", expect: rv4(sliceWithDeviceTaints),
    },
    // Adapted (header).
    "keep-existing-fields-partition-type-attribute-disabled-feature": {
      old: sliceWithPartitionTypeAttribute, new: rv4(sliceWithPartitionTypeAttribute), gates: { DRAPartitionableDevices: true, DRAPartitionableDevicesType: false },
      error: true, kept: (s) => assert.equal(s.spec.partitionTypeAttribute, "gpu.example.com/profile"),
    },
    "drop-fields-partitionable-devices-with-consumes-counters": {
      old: slice, new: rv4(sliceWithConsumesCounters), gates: { DRAPartitionableDevices: false },
      expect: tweak(rv4(sliceWithConsumesCounters, 1), (s) => { delete s.spec.devices[0].consumesCounters; }),
    },
    "drop-fields-partitionable-devices-with-per-device-node-selection": {
      old: slice, new: rv4(sliceWithPerDeviceNodeSelection), gates: { DRAPartitionableDevices: false }, error: true,
    },
    "drop-fields-partitionable-devices-with-shared-counters": {
      old: slice, new: rv4(sliceWithSharedCounters), gates: { DRAPartitionableDevices: false },
      expect: tweak(rv4(sliceWithSharedCounters, 1), (s) => { delete s.spec.sharedCounters; }),
    },
    "keep-fields-partitionable-devices-with-consumes-counters": {
      old: slice, new: rv4(sliceWithConsumesCounters), gates: { DRAPartitionableDevices: true }, expect: rv4(sliceWithConsumesCounters, 1),
    },
    "keep-fields-partitionable-devices-with-per-device-node-selection": {
      old: slice, new: rv4(sliceWithPerDeviceNodeSelection), gates: { DRAPartitionableDevices: true }, error: true, // spec.nodeName is immutable
    },
    "keep-fields-partitionable-devices-with-shared-counters": {
      old: slice, new: rv4(sliceWithSharedCounters), gates: { DRAPartitionableDevices: true }, expect: rv4(sliceWithSharedCounters, 1),
    },
    "keep-existing-fields-partitionable-devices-with-consumes-counters": {
      old: sliceWithConsumesCounters, new: rv4(sliceWithConsumesCounters), gates: { DRAPartitionableDevices: true }, expect: rv4(sliceWithConsumesCounters),
    },
    "keep-existing-fields-partitionable-devices-with-per-device-node-selection": {
      old: sliceWithPerDeviceNodeSelection, new: rv4(sliceWithPerDeviceNodeSelection), gates: { DRAPartitionableDevices: true }, expect: rv4(sliceWithPerDeviceNodeSelection),
    },
    "keep-existing-fields-partitionable-devices-with-shared-counters": {
      old: sliceWithSharedCounters, new: rv4(sliceWithSharedCounters), gates: { DRAPartitionableDevices: true }, expect: rv4(sliceWithSharedCounters),
    },
    "keep-existing-fields-partitionable-devices-consumes-counters-disabled-feature": {
      old: sliceWithConsumesCounters, new: rv4(sliceWithConsumesCounters), gates: { DRAPartitionableDevices: false }, expect: rv4(sliceWithConsumesCounters),
    },
    "keep-existing-fields-partitionable-devices-per-device-node-selection-disabled-feature": {
      old: sliceWithPerDeviceNodeSelection, new: rv4(sliceWithPerDeviceNodeSelection), gates: { DRAPartitionableDevices: false }, expect: rv4(sliceWithPerDeviceNodeSelection),
    },
    "keep-existing-fields-partitionable-devices-shared-counters-disabled-feature": {
      old: sliceWithSharedCounters, new: rv4(sliceWithSharedCounters), gates: { DRAPartitionableDevices: false }, expect: rv4(sliceWithSharedCounters),
    },
    "drop-fields-binding-conditions": {
      old: slice, new: rv4(sliceWithBindingConditions), emulated: "1.35",
      gates: { DRADeviceBindingConditions: false, DRAResourceClaimDeviceStatus: false }, expect: rv4(slice, 1),
    },
    "drop-fields-binding-conditions-with-binding-conditions": {
      old: slice, new: rv4(sliceWithBindingConditions), gates: { DRADeviceBindingConditions: false, DRAResourceClaimDeviceStatus: true }, expect: rv4(slice, 1),
    },
    "keep-fields-binding-conditions": {
      old: slice, new: rv4(sliceWithBindingConditions), gates: { DRADeviceBindingConditions: true, DRAResourceClaimDeviceStatus: true }, expect: rv4(sliceWithBindingConditions, 1),
    },
    "keep-existing-fields-binding-conditions-without-featuregate-enabled": {
      old: sliceWithBindingConditions, new: rv4(sliceWithBindingConditions, 1),
      gates: { DRADeviceBindingConditions: false, DRAResourceClaimDeviceStatus: true }, expect: rv4(sliceWithBindingConditions, 1),
    },
    "keep-consumable-capacity": { old: slice, new: rv4(sliceWithConsumableCapacity), gates: { DRAConsumableCapacity: true }, expect: rv4(sliceWithConsumableCapacity, 1) },
    "keep-existing-fields-consumable-capacity-disabled-feature": {
      old: sliceWithConsumableCapacity, new: rv4(sliceWithConsumableCapacity), gates: { DRAConsumableCapacity: false }, expect: rv4(sliceWithConsumableCapacity),
    },
    "drop-fields-consumable-capacity-disabled-feature": {
      old: sliceWithCapacity, new: rv4(sliceWithConsumableCapacity), gates: { DRAConsumableCapacity: false }, expect: rv4(sliceWithCapacity, 1),
    },
    "drop-list-type-attributes": { old: slice, new: rv4(sliceWithListTypeAttributes), gates: { DRAListTypeAttributes: false }, error: true },
    "keep-fields-list-type-attributes": { old: slice, new: rv4(sliceWithListTypeAttributes), gates: { DRAListTypeAttributes: true }, expect: rv4(sliceWithListTypeAttributes, 1) },
    "keep-existing-fields-list-type-attributes": {
      old: sliceWithListTypeAttributes, new: rv4(sliceWithListTypeAttributes), gates: { DRAListTypeAttributes: true }, expect: rv4(sliceWithListTypeAttributes),
    },
    "keep-existing-list-type-attributes-without-featuregate-enabled": {
      old: sliceWithListTypeAttributes, new: rv4(sliceWithListTypeAttributes), gates: { DRAListTypeAttributes: false }, expect: rv4(sliceWithListTypeAttributes),
    },
  };
  for (const [caseName, c] of Object.entries(updateCases)) {
    upstream++;
    check(`TestResourceSliceStrategyUpdate/${caseName}`, () => {
      const gates = gatesFor(c.emulated, c.gates);
      const old = clone(c.old);
      const obj = clone(c.new);
      prepareForUpdate(gates, obj, old);
      c.kept?.(obj);
      const errs = ValidateResourceSliceUpdate(obj, old, { release: MAIN, gates });
      if (errs.length) {
        assert.ok(c.error, `unexpected validation errors: ${errs.join("; ")}`);
        return;
      }
      assert.ok(!c.error, "expected validation error(s), got none");
      assert.deepEqual(resourceSliceWarnings(obj), []);
      assert.deepEqual(obj, c.expect);
    });
  }

  for (const [caseName, driver, want] of [
    ["valid driver", slice.spec.driver, []],
    ["uppercase driver warning", "Foo.COM", ['spec.driver: driver names should be lowercase; "Foo.COM" contains uppercase characters']],
  ]) {
    for (const test of ["TestWarningsOnCreate", "TestWarningsOnUpdate"]) {
      upstream++;
      check(`${test}/${caseName}${test.endsWith("Update") && caseName !== "valid driver" ? " on update" : test.endsWith("Update") ? " update" : ""}`, () => {
        assert.deepEqual(resourceSliceWarnings(tweak(clone(slice), (s) => { s.spec.driver = driver; })), want);
      });
    }
  }

  // validation_common_test.go TestTruncateIfTooLong
  for (const [caseName, str, max, want] of [
    ["nop", "hello", 10, "hello"],
    ["truncate-to-limit", "hello world how are you", 18, "hello wo...are you"],
    ["truncate-to-builtin-limit", "hello world how are you", 1, "hello w...re you"],
    ["truncate-odd-string-even-limit", "abcdefghijklmnopqrs", 16, "abcdefg...nopqrs"],
    ["truncate-even-string-even-limit", "abcdefghijklmnopqrst", 16, "abcdefg...opqrst"],
    ["truncate-odd-string-odd-limit", "abcdefghijklmnopqrs", 17, "abcdefg...mnopqrs"],
    ["truncate-even-string-odd-limit", "abcdefghijklmnopqrst", 17, "abcdefg...nopqrst"],
  ]) {
    upstream++;
    check(`TestTruncateIfTooLong/${caseName}`, () => assert.equal(truncateIfTooLong(str, max), want));
  }
}

// --- Our own cases: the defect, and what differs between releases --------------------------

// One device, one consumable capacity, the way the plugin publishes shares.
function sharesSlice(value, validRange) {
  return {
    metadata: { name: "worker-1-hca-abcde" },
    spec: { driver: "rdma.k8s-rdma-shared-dp.io", nodeName: "worker-1", pool: { name: "worker-1/hca", generation: 1, resourceSliceCount: 1 },
      devices: [{ name: "hca-0000-10-00-0", allowMultipleAllocations: true,
        capacity: { shares: { value, requestPolicy: { default: "1", validRange } } } }] },
  };
}
const stepTooLarge = 'spec.devices[0].capacity[shares].requestPolicy.validRange.step: Invalid value: "1": one step 2 is larger than capacity value: 1';
const allReleases = [...RELEASES, MAIN];

for (const release of allReleases) {
  check(`defect, ${release}: value "1" with validRange {min "1", step "1"} is refused: "one step 2 is larger than capacity value: 1"`, () => {
    assert.deepEqual(ValidateResourceSlice(sharesSlice("1", { min: "1", step: "1" }), { release }).map(String), [stepTooLarge]);
  });
  check(`defect, ${release}: value "1" with validRange {min "1"} (no step) is accepted`, () => {
    assert.deepEqual(ValidateResourceSlice(sharesSlice("1", { min: "1" }), { release }).map(String), []);
  });
  check(`defect, ${release}: value "2" with validRange {min "1", step "1"} is accepted`, () => {
    assert.deepEqual(ValidateResourceSlice(sharesSlice("2", { min: "1", step: "1" }), { release }).map(String), []);
  });
}
for (const release of RELEASES) {
  const kept = gateDefaults(release).DRAConsumableCapacity;
  check(`defect through the strategy, ${release}: the request policy is ${kept ? "kept, so the slice is refused" : "dropped (DRAConsumableCapacity off), so the slice is stored"}`, () => {
    const gates = gateDefaults(release);
    const s = sharesSlice("1", { min: "1", step: "1" });
    prepareForCreate(gates, s);
    assert.deepEqual(ValidateResourceSlice(s, { release, gates }).map(String), kept ? [stepTooLarge] : []);
  });
}
check("one step larger than a 1000-share capacity is refused with the canonical quantity (1k)", () => {
  assert.deepEqual(ValidateResourceSlice(tweak(sharesSlice("1000", { min: "1000", step: "1" }), (x) => {
    x.spec.devices[0].capacity.shares.requestPolicy.default = "1000";
  }), { release: "1.37" }).map(String), [
    'spec.devices[0].capacity[shares].requestPolicy.validRange.step: Invalid value: "1": one step 1001 is larger than capacity value: 1k']);
});

check("releases: the taint effect None is refused on 1.34 (not yet supported), accepted from 1.35", () => {
  const s = withTaints(testResourceSlice(goodName, goodName, driverName, 1));
  s.spec.devices[0].taints[0].effect = "None";
  assert.deepEqual(ValidateResourceSlice(s, { release: "1.34" }).map(String),
    ['spec.devices[0].taints[0].effect: Unsupported value: "None": supported values: "NoExecute", "NoSchedule"']);
  for (const release of ["1.35", "1.36", "1.37"]) assert.deepEqual(ValidateResourceSlice(s, { release }), []);
});
check("releases: a bad attribute key is reported on attributes[key] up to 1.35 and on attributes from 1.36", () => {
  const s = tweak(testResourceSlice(goodName, goodName, driverName, 1), (x) => { x.spec.devices[0].attributes = { "bad-key": { string: "x" } }; });
  for (const [release, field] of [["1.34", "spec.devices[0].attributes[bad-key]"], ["1.35", "spec.devices[0].attributes[bad-key]"],
    ["1.36", "spec.devices[0].attributes"], ["1.37", "spec.devices[0].attributes"]]) {
    assert.deepEqual(ValidateResourceSlice(s, { release }).map((e) => e.field), [field], release);
  }
});
check("releases: a zero step panics the 1.34-1.36 server (divide by zero, a 500) and is an error from 1.37", () => {
  const s = sharesSlice("10", { min: "1", step: "0" });
  for (const release of ["1.34", "1.35", "1.36"]) assert.throws(() => ValidateResourceSlice(s, { release }), GoPanic, release);
  assert.deepEqual(ValidateResourceSlice(s, { release: "1.37" }).map(String),
    ['spec.devices[0].capacity[shares].requestPolicy.validRange.step: Invalid value: "0": must be greater than zero']);
});
check("releases: a default below min is reported on validRange.min up to 1.36, on validRange.default from 1.37", () => {
  const s = sharesSlice("10", { min: "2" });
  assert.deepEqual(ValidateResourceSlice(s, { release: "1.36" }).map(String),
    ['spec.devices[0].capacity[shares].requestPolicy.validRange.min: Invalid value: "1": default is less than min: 2']);
  assert.deepEqual(ValidateResourceSlice(s, { release: "1.37" }).map(String),
    ['spec.devices[0].capacity[shares].requestPolicy.validRange.default: Invalid value: "1": default is less than min: 2']);
});
check("releases: an update leaving a stored (now invalid) capacity alone is checked again up to 1.36, not from 1.37", () => {
  const old = sharesSlice("1", { min: "1", step: "1" });
  old.metadata.resourceVersion = "1";
  const updated = tweak(clone(old), (s) => { s.metadata.labels = { touched: "yes" }; });
  assert.deepEqual(ValidateResourceSliceUpdate(updated, old, { release: "1.36" }).map(String), [stepTooLarge]);
  assert.deepEqual(ValidateResourceSliceUpdate(updated, old, { release: "1.37" }), []);
});
check("releases: list-typed attributes exist from 1.36 (an attribute with only a list has no value before)", () => {
  const s = tweak(testResourceSlice(goodName, goodName, driverName, 1), (x) => { x.spec.devices[0].attributes = { roots: { strings: ["a"] } }; });
  assert.deepEqual(ValidateResourceSlice(s, { release: "1.35" }).map(String),
    ['spec.devices[0].attributes[roots]: Invalid value: "": exactly one value must be specified']);
  assert.deepEqual(ValidateResourceSlice(s, { release: "1.36" }), []);
});
check("releases: a qualified name with two slashes passes up to 1.37 and is refused after", () => {
  const s = tweak(testResourceSlice(goodName, goodName, driverName, 1), (x) => { x.spec.devices[0].attributes = { "a.b/c/d": { string: "x" } }; });
  for (const release of RELEASES) assert.deepEqual(ValidateResourceSlice(s, { release }), [], release);
  assert.deepEqual(ValidateResourceSlice(s, { release: MAIN }).map(String),
    ['spec.devices[0].attributes: Invalid value: "a.b/c/d": must not contain more than one slash']);
});
check("every release: 65 devices with a taint are too many, 64 are fine; 128 untainted fine, 129 not", () => {
  for (const release of allReleases) {
    assert.deepEqual(ValidateResourceSlice(withTaints(testResourceSlice(goodName, goodName, driverName, 65)), { release }).map(String),
      ["spec.devices: Too many: 65: must have at most 64 items"], release);
    assert.deepEqual(ValidateResourceSlice(withTaints(testResourceSlice(goodName, goodName, driverName, 64)), { release }), [], release);
    assert.deepEqual(ValidateResourceSlice(testResourceSlice(goodName, goodName, driverName, 128), { release }), [], release);
    assert.equal(ValidateResourceSlice(testResourceSlice(goodName, goodName, driverName, 129), { release }).length, 1, release);
  }
});
check("DOS short-circuit: 129 devices with bad names report only the count", () => {
  const s = testResourceSlice(goodName, goodName, driverName, 129);
  for (const d of s.spec.devices) d.name = badName;
  assert.deepEqual(ValidateResourceSlice(s).map(String), ["spec.devices: Too many: 129: must have at most 128 items"]);
});
check("validValues: unsorted, above capacity, more than 10 options", () => {
  const s = sharesSlice("10", undefined);
  const policy = s.spec.devices[0].capacity.shares.requestPolicy;
  delete policy.validRange;
  policy.validValues = ["1", "20", "5"];
  assert.deepEqual(ValidateResourceSlice(s).map(String), [
    'spec.devices[0].capacity[shares].requestPolicy.validValues[2]: Invalid value: "5": values must be sorted in ascending order',
    'spec.devices[0].capacity[shares].requestPolicy.validValues[1]: Invalid value: "20": option is larger than capacity value: 10',
  ]);
  policy.validValues = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "10"];
  assert.deepEqual(ValidateResourceSlice(s).map(String), [
    "spec.devices[0].capacity[shares].requestPolicy.validValues: Too many: 11: must have at most 10 items",
    'spec.devices[0].capacity[shares].requestPolicy.validValues: Invalid value: "1": default value is not valid according to the requestPolicy',
  ]);
});
check("a malformed quantity is a decoding error (400), not a validation error", () => {
  assert.throws(() => ValidateResourceSlice(sharesSlice("lots", { min: "1" })), QuantityParseError);
});
check("the 422 Status reads as kube-apiserver's (errors.NewInvalid)", () => {
  const errs = ValidateResourceSlice(sharesSlice("1", { min: "1", step: "1" }));
  const st = invalidStatus("ResourceSlice", "resource.k8s.io", "worker-1-hca-abcde", errs);
  assert.equal(st.message, `ResourceSlice.resource.k8s.io "worker-1-hca-abcde" is invalid: ${stepTooLarge}`);
  assert.equal(st.code, 422);
  assert.deepEqual(st.details.causes, [{ reason: "FieldValueInvalid", message: 'Invalid value: "1": one step 2 is larger than capacity value: 1',
    field: "spec.devices[0].capacity[shares].requestPolicy.validRange.step" }]);
  const two = invalidStatus("ResourceSlice", "resource.k8s.io", "x", [...errs, ...errs, new FieldError("FieldValueRequired", "spec", "", "")]);
  assert.equal(two.message, `ResourceSlice.resource.k8s.io "x" is invalid: [${stepTooLarge}, spec: Required value]`);
});

// --- resource.Quantity ----------------------------------------------------------------------

check("Quantity: parse and canonical String (quantity.go CanonicalizeBytes)", () => {
  const cases = [["0", "0"], ["1", "1"], ["1000", "1k"], ["1.05", "1050m"], ["1.1", "1100m"], ["0.1", "100m"], ["100m", "100m"],
    ["1Gi", "1Gi"], ["1024Mi", "1Gi"], ["-1Mi", "-1Mi"], ["0.5Gi", "512Mi"], ["1.5Ki", "1536"], ["1536", "1536"], ["1e3", "1e3"],
    ["1E3", "1E3"], ["2000", "2k"], ["1.5e3", "1500"], ["12e3", "12e3"], ["1k", "1k"], ["1000k", "1M"], ["0.000000001", "1n"], ["0.0000000001", "1n"],
    ["1Ei", "1Ei"], ["8Ei", "9223372036854775807"], ["+5", "+5"], ["5.0", "5"], [MAX_INT64, MAX_INT64], ["10E", "10E"], ["1000E", "1"]];
  for (const [input, want] of cases) assert.equal(String(parseQuantity(input)), want, input);
});
check("Quantity: Value rounds up (away from zero), MilliValue, Cmp, Add, Sub", () => {
  assert.equal(parseQuantity("0.1").value(), 1n);
  assert.equal(parseQuantity("-0.1").value(), -1n);
  assert.equal(parseQuantity("1.0001").milliValue(), 1001n);
  assert.equal(parseQuantity("1Ki").value(), 1024n);
  assert.equal(parseQuantity("10E").value(), 0n); // int64 overflow reads as 0 (the reason for validateInt64Range)
  assert.equal(parseQuantity("1Gi").cmp(parseQuantity("1024Mi")), 0);
  assert.equal(parseQuantity("1").cmp(parseQuantity("999m")), 1);
  assert.equal(String(parseQuantity("1").add(parseQuantity("1"))), "2");
  assert.equal(String(parseQuantity("1Gi").add(parseQuantity("1Mi"))), "1025Mi");
  assert.equal(String(parseQuantity("10").sub(parseQuantity("0.1"))), "9900m");
  assert.equal(String(parseQuantity(MAX_INT64).add(parseQuantity("1"))), "9223372036854775808");
  assert.equal(parseQuantity("5.0").decimalString(), "5");
});
check("Quantity: malformed strings are refused as ParseQuantity does", () => {
  for (const bad of ["", "abc", "1x", "1.2.3", "--1", "1e"]) assert.throws(() => parseQuantity(bad), QuantityParseError, bad);
});

// --- kube_release.mjs -------------------------------------------------------------------------

check("gate defaults per release (kube_features.go, v1.37 feature-gate reference)", () => {
  const want = {
    "1.34": { DRADeviceTaints: false, DRAConsumableCapacity: false, DRAPartitionableDevices: false, DRADeviceBindingConditions: false, DRAResourceClaimDeviceStatus: true },
    "1.35": { DRADeviceTaints: false, DRAConsumableCapacity: false, DRAPartitionableDevices: false, DRADeviceBindingConditions: false, DRAResourceClaimDeviceStatus: true },
    "1.36": { DRADeviceTaints: true, DRAConsumableCapacity: true, DRAPartitionableDevices: true, DRADeviceBindingConditions: true, DRAListTypeAttributes: false },
    "1.37": { DRADeviceTaints: true, DRAConsumableCapacity: true, DRAPartitionableDevices: true, DRAOptionalNodeOperations: false, DRAFractionalCapacityRange: false },
  };
  for (const [release, gates] of Object.entries(want)) {
    const got = gateDefaults(release);
    for (const [gate, value] of Object.entries(gates)) assert.equal(got[gate], value, `${release} ${gate}`);
  }
});
check("dropDisabledFields: taints, allowMultipleAllocations and request policies go on 1.34/1.35, stay on 1.36/1.37", () => {
  for (const release of RELEASES) {
    const s = sharesSlice("10", { min: "1", step: "1" });
    s.spec.devices[0].taints = [{ key: "example.com/down", effect: "NoSchedule" }];
    const dropped = dropDisabledFields(gateDefaults(release), s, null);
    const off = !gateDefaults(release).DRAConsumableCapacity;
    assert.deepEqual(dropped, off ? ["devices[].taints", "devices[].allowMultipleAllocations", "capacity.requestPolicy"] : [], release);
    assert.equal("taints" in s.spec.devices[0], !off, release);
  }
});
check("dropDisabledFields: what the stored slice already uses is kept on update with the gate off", () => {
  const gates = gateDefaults("1.35");
  const old = sharesSlice("10", { min: "1" });
  const updated = clone(old);
  assert.deepEqual(dropDisabledFields(gates, updated, old), []);
  assert.deepEqual(updated, old);
});

finish(`kube validation (${upstream} upstream cases)`);
