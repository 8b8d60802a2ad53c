// Tests of event_validation.mjs and of the fake API server's events.k8s.io/v1 endpoints: the
// cases of upstream's TestValidateEventForCoreV1Events, TestValidateEventForNewV1beta1Events,
// TestValidateEventCreateForNewV1Events, TestValidateEventUpdateForNewV1Events and
// TestEventV1EventTimeImmutability (pkg/apis/core/validation/events_test.go),
// Test_convert_v1_Event_To_core_Event and Test_convert_core_Event_To_v1_Event
// (pkg/apis/events/v1/conversion_test.go) and TestEventGetAttrs (pkg/apis/events/selection_test.go),
// transcribed by case name, then cases of our own: decoding (Go's time formats and type
// errors), the answers of rest.BeforeCreate, field selectors, and the fake server itself,
// started here on loopback. Usage: node event_validation_test.mjs (exit status 0 when all pass).
//
// Upstream's events tests assert only whether a case is valid (len(errs) == 0); each case here
// asserts that too, and also the errors the Go code yields for it (field, type, detail
// substring, and the bad value where it is a plain string or number), worked out by hand from
// events.go: the expected lists are ours, not upstream's.
//
// Adapted, not skipped (and why):
//  - The Go cases build internal core.Event values; here they are the port's internal form (the
//    internal field names, times as instants, null for a zero time). The long reportingInstance
//    and message literals are rebuilt with repeat() at the Go literals' lengths (149 and 1035 bytes).
//  - TestEventV1EventTimeImmutability and the update cases print a time bad value as Go's
//    time.String in UTC (the Go test's Local zone is not pinned); struct bad values (involvedObject,
//    source, related) are not compared (see event_validation.mjs).
//  - TestEventGetAttrs is run as two checks, one per event of the Go test.
// Skipped: TestSelectableFieldLabelConversions (strategy_test.go of older releases) checks the
// core/v1 field-label conversions against pkg/api/testing, which the fake does not serve.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { check, finish } from "./check.mjs";
import {
  CORE_V1, EVENTS_V1, EVENTS_V1BETA1, EventToSelectableFields, FieldSelectorError, RFC3339, RFC3339Micro,
  ValidateEventCreate, ValidateEventUpdate, beforeCreateEvent, checkEventDecodes, convertCoreEventToV1,
  convertV1EventToCore, decodeEvent, eventInvalidStatus, eventMatchesFields, goParseTime, goTime,
  parseEventFieldSelector,
} from "./event_validation.mjs";
import { E, STRUCT, assertFailures as assertFailuresBy } from "./test_harness.mjs";

const clone = structuredClone;
let upstream = 0;

// --- Expected errors: test_harness.mjs's E, compared by its assertFailures ----------------

// Bad values are compared as strings, anything else as JSON.
const renderBadValue = (v) => (typeof v === "string" ? v : JSON.stringify(v));
const assertFailures = (want, got) => assertFailuresBy(want, got, renderBadValue);

// The Go test's check: valid exactly when there are no errors; here the errors as well.
function assertCase(valid, want, got) {
  assert.equal(got.length === 0, valid, `valid: want ${valid}, got errors: ${got.join("; ")}`);
  assertFailures(want, got);
}

// --- Builders, as upstream's core.Event literals (the port's internal form) ----------------

// A core.Event: every field at its zero value unless the case sets it.
function coreEvent({ name, namespace, resourceVersion, involvedObject = {}, ...fields } = {}) {
  const metadata = {};
  if (name !== undefined) metadata.name = name;
  if (namespace !== undefined) metadata.namespace = namespace;
  if (resourceVersion !== undefined) metadata.resourceVersion = resourceVersion;
  return {
    metadata, involvedObject, reason: "", message: "", source: { component: "", host: "" }, firstTimestamp: null,
    lastTimestamp: null, count: 0, type: "", eventTime: null, series: null, action: "", related: null,
    reportingController: "", reportingInstance: "", ...fields,
  };
}
const someTime = goTime(1505828956, 0); // metav1.MicroTime{Time: time.Unix(1505828956, 0)}
const longInstance = "node-xy" + "z".repeat(142); // the Go literal, 149 bytes
const longMessage = ("z".repeat(95) + "\n").repeat(10) + "z".repeat(75); // the Go literal, 1035 bytes

// Messages of apimachinery's validation.
const subdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const namePartMsg = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const twoSlashesMsg = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const mismatch = (value) => E.invalid("involvedObject.namespace", value, "does not match event.namespace");
const badType = (value) => E.invalid("type", "", `has invalid value: ${value}`);
const immutable = (field, value) => E.invalid(field, value, "field is immutable");

// --- TestValidateEventForCoreV1Events ------------------------------------------------------

{
  const table = [
    [coreEvent({ name: "test1", namespace: "foo", involvedObject: { namespace: "bar", kind: "Pod" } }), false, [mismatch("bar")]],
    [coreEvent({ name: "test2", namespace: "aoeu-_-aoeu", involvedObject: { namespace: "aoeu-_-aoeu", kind: "Pod" } }), false,
      [E.invalid("namespace", "aoeu-_-aoeu", subdomainMsg)]],
    [coreEvent({ name: "test3", namespace: "default", involvedObject: { apiVersion: "v1", kind: "Node" } }), true, []],
    [coreEvent({ name: "test4", namespace: "default", involvedObject: { apiVersion: "v1", kind: "Namespace" } }), true, []],
    [coreEvent({ name: "test5", namespace: "default", involvedObject: { apiVersion: "apps/v1", kind: "NoKind", namespace: "default" } }), true, []],
    [coreEvent({ name: "test6", namespace: "default", involvedObject: { apiVersion: "batch/v1", kind: "Job", namespace: "foo" } }), false, [mismatch("foo")]],
    [coreEvent({ name: "test7", namespace: "default", involvedObject: { apiVersion: "batch/v1", kind: "Job", namespace: "default" } }), true, []],
    [coreEvent({ name: "test8", namespace: "default", involvedObject: { apiVersion: "other/v1beta1", kind: "Job", namespace: "foo" } }), false, [mismatch("foo")]],
    [coreEvent({ name: "test9", namespace: "foo", involvedObject: { apiVersion: "other/v1beta1", kind: "Job", namespace: "foo" } }), true, []],
    [coreEvent({ name: "test10", namespace: "default", involvedObject: { apiVersion: "batch", kind: "Job", namespace: "foo" } }), false, [mismatch("foo")]],
    [coreEvent({ name: "test11", namespace: "foo", involvedObject: { apiVersion: "batch/v1", kind: "Job", namespace: "foo" } }), true, []],
    [coreEvent({ name: "test12", namespace: "foo", involvedObject: { apiVersion: "other/v1beta1", kind: "FooBar", namespace: "bar" } }), false, [mismatch("bar")]],
    [coreEvent({ name: "test13", namespace: "", involvedObject: { apiVersion: "other/v1beta1", kind: "FooBar", namespace: "bar" } }), false,
      [mismatch("bar"), E.invalid("namespace", "", subdomainMsg)]],
    [coreEvent({ name: "test14", namespace: "foo", involvedObject: { apiVersion: "other/v1beta1", kind: "FooBar", namespace: "" } }), false, [mismatch("")]],
  ];
  for (const [event, valid, want] of table) {
    upstream++;
    check(`TestValidateEventForCoreV1Events/${event.metadata.name}`, () => {
      assertCase(valid, want, ValidateEventCreate(clone(event), CORE_V1));
      assertCase(valid, want, ValidateEventUpdate(clone(event), coreEvent(), CORE_V1));
    });
  }
}

// --- TestValidateEventForNewV1beta1Events --------------------------------------------------

const node = { apiVersion: "v1", kind: "Node" };
const controller = "k8s.io/my-controller";
{
  const table = {
    "Old Event with EventTime should trigger new validation and fail": [
      coreEvent({ name: "test", namespace: "default", involvedObject: node, eventTime: someTime }), false,
      [E.required("reportingController"), E.invalid("reportingController", "", "name part must be non-empty"),
        E.invalid("reportingController", "", namePartMsg), E.required("reportingInstance"), E.required("action"), E.required("reason")]],
    "Valid new Event": [coreEvent({ name: "test", namespace: "kube-system", involvedObject: node, eventTime: someTime,
      reportingController: controller, reportingInstance: "node-xyz", action: "Do", reason: "Because" }), true, []],
    "not qualified reportingController": [coreEvent({ name: "test", namespace: "kube-system", involvedObject: node, eventTime: someTime,
      reportingController: "my-contr@ller", reportingInstance: "node-xyz", action: "Do", reason: "Because" }), false,
    [E.invalid("reportingController", "my-contr@ller", namePartMsg)]],
    "too long reporting instance": [coreEvent({ name: "test", namespace: "kube-system", involvedObject: node, eventTime: someTime,
      reportingController: controller, reportingInstance: longInstance, action: "Do", reason: "Because" }), false,
    [E.invalid("reportingInstance", "", "can have at most 128 characters")]],
    "missing reason": [coreEvent({ name: "test", namespace: "kube-system", involvedObject: node, eventTime: someTime,
      reportingController: controller, reportingInstance: "node-xyz", action: "Do" }), false, [E.required("reason")]],
    "missing action": [coreEvent({ name: "test", namespace: "kube-system", involvedObject: node, eventTime: someTime,
      reportingController: controller, reportingInstance: "node-xyz", reason: "Because" }), false, [E.required("action")]],
    "missing namespace": [coreEvent({ name: "test", involvedObject: node, eventTime: someTime,
      reportingController: controller, reportingInstance: "node-xyz", reason: "Because" }), false,
    [mismatch(""), E.required("action"), E.invalid("namespace", "", subdomainMsg)]],
    "too long message": [coreEvent({ name: "test", involvedObject: node, eventTime: someTime, reportingController: controller,
      reportingInstance: "node-xyz", action: "Do", reason: "Because", message: longMessage }), false,
    [mismatch(""), E.invalid("message", "", "can have at most 1024 characters"), E.invalid("namespace", "", subdomainMsg)]],
  };
  for (const [msg, [event, valid, want]] of Object.entries(table)) {
    upstream++;
    check(`TestValidateEventForNewV1beta1Events/${msg}`, () => {
      assertCase(valid, want, ValidateEventCreate(clone(event), EVENTS_V1BETA1));
      assertCase(valid, want, ValidateEventUpdate(clone(event), coreEvent(), EVENTS_V1BETA1));
    });
  }
}

// --- TestValidateEventCreateForNewV1Events -------------------------------------------------

// The Go cases' valid new event, the base of the later ones.
const newV1Event = (fields = {}) => coreEvent({ name: "test", namespace: "kube-system", involvedObject: node, eventTime: someTime,
  reportingController: controller, reportingInstance: "node-xyz", action: "Do", reason: "Because", type: "Normal", ...fields });
{
  const table = {
    "valid new event": [newV1Event(), true, []],
    "missing name in objectMeta": [coreEvent({ namespace: "kube-system", involvedObject: node, eventTime: someTime,
      reportingController: controller, reportingInstance: "node-xyz", reason: "Because" }), false,
    [E.required("action"), E.required("metadata.name", "name or generateName is required"), badType("")]],
    "missing namespace in objectMeta": [coreEvent({ name: "test", involvedObject: node, eventTime: someTime,
      reportingController: controller, reportingInstance: "node-xyz", reason: "Because" }), false,
    [mismatch(""), E.required("action"), E.invalid("namespace", "", subdomainMsg), E.required("metadata.namespace"), badType("")]],
    "missing EventTime": [coreEvent({ name: "test", namespace: "default", involvedObject: node }), false,
      [E.required("eventTime"), badType("")]],
    "not qualified reportingController": [coreEvent({ name: "test", namespace: "kube-system", involvedObject: node, eventTime: someTime,
      reportingController: "my-contr@ller", reportingInstance: "node-xyz", action: "Do", reason: "Because" }), false,
    [E.invalid("reportingController", "my-contr@ller", namePartMsg), badType("")]],
    "too long reporting instance": [coreEvent({ name: "test", namespace: "kube-system", involvedObject: node, eventTime: someTime,
      reportingController: controller, reportingInstance: longInstance, action: "Do", reason: "Because" }), false,
    [E.invalid("reportingInstance", "", "can have at most 128 characters"), badType("")]],
    "missing reason": [coreEvent({ name: "test", namespace: "kube-system", involvedObject: node, eventTime: someTime,
      reportingController: controller, reportingInstance: "node-xyz", action: "Do" }), false, [E.required("reason"), badType("")]],
    "missing action": [coreEvent({ name: "test", namespace: "kube-system", involvedObject: node, eventTime: someTime,
      reportingController: controller, reportingInstance: "node-xyz", reason: "Because" }), false, [E.required("action"), badType("")]],
    "too long message": [coreEvent({ name: "test", involvedObject: node, eventTime: someTime, reportingController: controller,
      reportingInstance: "node-xyz", action: "Do", reason: "Because", message: longMessage }), false,
    [mismatch(""), E.invalid("message", "", "can have at most 1024 characters"), E.invalid("namespace", "", subdomainMsg),
      E.required("metadata.namespace"), badType("")]],
    "invalid type": [newV1Event({ type: "invalid-type" }), false, [badType("invalid-type")]],
    "non-empty firstTimestamp": [newV1Event({ firstTimestamp: goTime(1505828956) }), false, [E.invalid("firstTimestamp", "", "needs to be unset")]],
    "non-empty lastTimestamp": [newV1Event({ lastTimestamp: goTime(1505828956) }), false, [E.invalid("lastTimestamp", "", "needs to be unset")]],
    "non-empty count": [newV1Event({ count: 123 }), false, [E.invalid("count", "", "needs to be unset")]],
    "non-empty source": [newV1Event({ source: { component: "", host: "host" } }), false, [E.invalid("source", "", "needs to be unset")]],
    "non-nil series with cound < 2": [newV1Event({ series: { count: 0, lastObservedTime: someTime } }), false,
      [E.invalid("series.count", "", "should be at least 2")]],
    "non-nil series with empty lastObservedTime": [newV1Event({ series: { count: 2, lastObservedTime: null } }), false,
      [E.required("series.lastObservedTime")]],
  };
  for (const [msg, [event, valid, want]] of Object.entries(table)) {
    upstream++;
    check(`TestValidateEventCreateForNewV1Events/${msg}`, () => assertCase(valid, want, ValidateEventCreate(clone(event), EVENTS_V1)));
  }
}

// --- TestValidateEventUpdateForNewV1Events -------------------------------------------------

{
  // The Go cases' old event (the new one differs in the field each case names).
  const stored = (fields = {}) => coreEvent({ name: "test", namespace: "kube-system", resourceVersion: "1", involvedObject: node,
    eventTime: someTime, reportingController: controller, reportingInstance: "node-xyz", action: "Do", reason: "Yeees", type: "Normal", ...fields });
  const v2Node = { apiVersion: "v2", kind: "Node" };
  const table = {
    "valid new updated event": [
      stored({ resourceVersion: "2", involvedObject: v2Node, series: { count: 2, lastObservedTime: someTime } }),
      stored({ resourceVersion: "2", involvedObject: v2Node, series: { count: 1, lastObservedTime: someTime } }), true, []],
    "forbidden updates to involvedObject": [stored({ involvedObject: v2Node }), stored(), false, [immutable("involvedObject", STRUCT)]],
    // ValidateEventUpdate checks the reason twice: two identical errors
    "forbidden updates to reason": [stored({ reason: "Yeees-new" }), stored(), false,
      [immutable("reason", "Yeees-new"), immutable("reason", "Yeees-new")]],
    "forbidden updates to message": [stored({ message: "new-message" }), stored({ message: "message" }), false, [immutable("message", "new-message")]],
    "forbidden updates to source": [stored(), stored({ source: { component: "", host: "host" } }), false, [immutable("source", STRUCT)]],
    "forbidden updates to firstTimestamp": [stored(), stored({ firstTimestamp: goTime(1505828956) }), false,
      [immutable("firstTimestamp", "0001-01-01 00:00:00 +0000 UTC")]],
    "forbidden updates to lastTimestamp": [stored(), stored({ lastTimestamp: goTime(1505828956) }), false,
      [immutable("lastTimestamp", "0001-01-01 00:00:00 +0000 UTC")]],
    "forbidden updates to count": [stored(), stored({ count: 2 }), false, [immutable("count", 0)]],
    "forbidden updates to type": [stored({ type: "Warning" }), stored(), false, [immutable("type", "Warning")]],
    "forbidden updates to eventTime": [stored({ eventTime: goTime(1505828999) }), stored(), false,
      [immutable("eventTime", "2017-09-19 13:49:59 +0000 UTC")]],
    "forbidden updates to action": [stored({ action: "Undo" }), stored(), false, [immutable("action", "Undo")]],
    "forbidden updates to related": [stored({ related: { apiVersion: "v1" } }), stored(), false, [immutable("related", STRUCT)]],
    "forbidden updates to reportingController": [stored({ reportingController: "k8s.io/my-controller/new" }), stored(), false,
      [E.invalid("reportingController", "k8s.io/my-controller/new", twoSlashesMsg), immutable("reportingController", "k8s.io/my-controller/new")]],
    "forbidden updates to reportingInstance": [stored({ reportingInstance: "node-xyz-new" }), stored(), false,
      [immutable("reportingInstance", "node-xyz-new")]],
  };
  for (const [msg, [newEvent, oldEvent, valid, want]] of Object.entries(table)) {
    upstream++;
    check(`TestValidateEventUpdateForNewV1Events/${msg}`, () => assertCase(valid, want, ValidateEventUpdate(newEvent, oldEvent, EVENTS_V1)));
  }
}

// --- TestEventV1EventTimeImmutability ------------------------------------------------------

{
  const us = 1000; // time.Microsecond in nanoseconds
  const table = {
    "noop microsecond precision": [goTime(100, 5 * us), goTime(100, 5 * us), true],
    "noop nanosecond precision": [goTime(100, 5), goTime(100, 5), true],
    "modify nanoseconds within the same microsecond": [goTime(100, 5), goTime(100, 6), true],
    "modify microseconds": [goTime(100, 5 * us), goTime(100, 5 * us - 1), false, "1970-01-01 00:01:40.000004999 +0000 UTC"],
    "modify seconds": [goTime(100, 0), goTime(101, 0), false, "1970-01-01 00:01:41 +0000 UTC"],
  };
  for (const [name, [oldTime, newTime, valid, printed]] of Object.entries(table)) {
    upstream++;
    check(`TestEventV1EventTimeImmutability/${name}`, () => {
      const oldEvent = coreEvent({ name: "test", namespace: "kube-system", resourceVersion: "2", involvedObject: { apiVersion: "v2", kind: "Node" },
        series: { count: 2, lastObservedTime: oldTime }, eventTime: oldTime, reportingController: controller,
        reportingInstance: "node-xyz", action: "Do", reason: "Yeees", type: "Normal" });
      const newEvent = clone(oldEvent);
      newEvent.eventTime = newTime;
      assertCase(valid, valid ? [] : [immutable("eventTime", printed)], ValidateEventUpdate(newEvent, oldEvent, EVENTS_V1));
    });
  }
}

// --- conversion_test.go --------------------------------------------------------------------

const emptyRef = { kind: "", namespace: "", name: "", uid: "", apiVersion: "", resourceVersion: "", fieldPath: "" };
upstream++;
check("Test_convert_v1_Event_To_core_Event/Test_convert_v1_Event_To_core_Event", () => {
  const got = convertV1EventToCore(decodeEvent({ metadata: { name: "foo", namespace: "default" },
    regarding: { kind: "Pod", namespace: "default", name: "foo" },
    deprecatedSource: { component: "controller-manager", host: "master1" }, note: "convert v1 event to core event" }));
  assert.deepEqual(got, coreEvent({ name: "foo", namespace: "default", involvedObject: { ...emptyRef, namespace: "default", name: "foo", kind: "Pod" },
    source: { component: "controller-manager", host: "master1" }, message: "convert v1 event to core event" }));
});
upstream++;
check("Test_convert_core_Event_To_v1_Event/Test_convert_core_Event_To_v1_Event", () => {
  const got = convertCoreEventToV1(coreEvent({ name: "foo", namespace: "default", involvedObject: { namespace: "default", name: "foo", kind: "Pod" },
    source: { component: "controller-manager", host: "master1" }, message: "convert core event to v1 event" }));
  assert.deepEqual(got, { metadata: { name: "foo", namespace: "default" }, eventTime: null, series: null, reportingController: "",
    reportingInstance: "", action: "", reason: "", regarding: { ...emptyRef, kind: "Pod", namespace: "default", name: "foo" }, related: null,
    note: "convert core event to v1 event", type: "", deprecatedSource: { component: "controller-manager", host: "master1" },
    deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null, deprecatedCount: 0 });
});

// --- selection_test.go TestEventGetAttrs ---------------------------------------------------

{
  const involved = { kind: "Pod", name: "foo", namespace: "baz", uid: "long uid string", apiVersion: "v1", resourceVersion: "0", fieldPath: "" };
  const expect = (reportingComponent) => ({
    "metadata.name": "f0118", "metadata.namespace": "default", "involvedObject.kind": "Pod", "involvedObject.name": "foo",
    "involvedObject.namespace": "baz", "involvedObject.uid": "long uid string", "involvedObject.apiVersion": "v1",
    "involvedObject.resourceVersion": "0", "involvedObject.fieldPath": "", reason: "ForTesting", reportingComponent, source: "test", type: "Normal",
  });
  upstream++;
  check("TestEventGetAttrs/eventA (source.component)", () => {
    const eventA = coreEvent({ name: "f0118", namespace: "default", involvedObject: involved, reason: "ForTesting",
      source: { component: "test", host: "" }, type: "Normal" });
    assert.deepEqual(EventToSelectableFields(eventA), expect(""));
  });
  upstream++;
  check("TestEventGetAttrs/eventB (source falls back to reportingController)", () => {
    const eventB = coreEvent({ name: "f0118", namespace: "default", involvedObject: involved, reason: "ForTesting",
      reportingController: "test", type: "Normal" });
    assert.deepEqual(EventToSelectableFields(eventB), expect("test"));
  });
}

// --- Cases of our own: what an events.k8s.io/v1 client meets -------------------------------

// A valid events.k8s.io/v1 Event as a client writes it (namespace from the URL).
const goodBody = (fields = {}) => ({
  apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { name: "hca-down.1" },
  eventTime: "2026-03-01T10:00:00.123456Z", reportingController: "rdma.example.com/rdma-shared-dp", reportingInstance: "node-1",
  action: "Publish", reason: "HcaDown", regarding: { kind: "Node", apiVersion: "v1", name: "node-1" }, note: "mlx5_0 is down",
  type: "Warning", ...fields,
});
const missingControllerMessage = "Event \"hca-down.1\" is invalid: [reportingController: Required value, " +
  `reportingController: Invalid value: "": name part must be non-empty, reportingController: Invalid value: "": ${namePartMsg}]`;
const badRegardingMessage = "Event \"hca-down.1\" is invalid: involvedObject.namespace: Invalid value: \"\": does not match event.namespace";

check("a valid events.k8s.io/v1 Event passes in its own namespace and in default (a cluster-scoped regarding)", () => {
  assert.equal(checkEventDecodes(goodBody()), null);
  const body = goodBody({ regarding: { kind: "Pod", apiVersion: "v1", name: "p", namespace: "rdma" } });
  assert.equal(beforeCreateEvent(body, "rdma"), null);
  assert.equal(body.metadata.namespace, "rdma"); // filled from the request
  assert.equal(beforeCreateEvent(goodBody(), "default"), null);
  assert.equal(beforeCreateEvent(goodBody(), "kube-system"), null);
});
check("missing reportingController: 422, three errors on reportingController (the v1 name)", () => {
  const body = goodBody();
  delete body.reportingController;
  const bad = beforeCreateEvent(body, "default");
  assert.equal(bad.code, 422);
  assert.equal(bad.message, missingControllerMessage);
  assert.deepEqual(bad.status.details.causes.map((c) => [c.field, c.reason]),
    [["reportingController", "FieldValueRequired"], ["reportingController", "FieldValueInvalid"], ["reportingController", "FieldValueInvalid"]]);
  assert.equal(bad.status.details.kind, "Event");
  assert.equal("group" in bad.status.details, false);
});
check("a bad regarding (no namespace, event outside default/kube-system) is reported on involvedObject.namespace", () => {
  const bad = beforeCreateEvent(goodBody(), "rdma");
  assert.equal(bad.code, 422);
  assert.equal(bad.message, badRegardingMessage);
  assert.deepEqual(bad.status.details.causes, [{ reason: "FieldValueInvalid", message: "Invalid value: \"\": does not match event.namespace", field: "involvedObject.namespace" }]);
  const none = goodBody();
  delete none.regarding;
  assert.equal(beforeCreateEvent(none, "rdma").message, badRegardingMessage);
  // a new Event's namespaced regarding is not compared with the Event's namespace
  assert.equal(beforeCreateEvent(goodBody({ regarding: { kind: "Pod", name: "p", namespace: "other" } }), "rdma"), null);
});
check("deprecated fields and note are reported by their internal names", () => {
  const bad = beforeCreateEvent(goodBody({ deprecatedCount: 2, deprecatedSource: { component: "x" }, note: "n".repeat(1025),
    deprecatedFirstTimestamp: "2026-03-01T10:00:00Z", deprecatedLastTimestamp: "2026-03-01T10:00:00Z" }), "default");
  assert.deepEqual(bad.status.details.causes.map((c) => c.field), ["message", "firstTimestamp", "lastTimestamp", "count", "source"]);
});
check("core/v1 requests name the reporting controller reportingComponent (pull 111506)", () => {
  const event = convertV1EventToCore(decodeEvent(goodBody({ metadata: { name: "x", namespace: "default" }, reportingController: undefined })));
  assert.deepEqual([...new Set(ValidateEventCreate(event, CORE_V1).map((e) => e.field))], ["reportingComponent"]);
  assert.deepEqual([...new Set(ValidateEventCreate(event, EVENTS_V1).map((e) => e.field))], ["reportingController"]);
});
check("an unknown request version gets the strict checks (only core/v1 and events/v1beta1 are spared)", () => {
  const event = convertV1EventToCore(decodeEvent(goodBody({ metadata: { namespace: "default" }, type: "" })));
  assert.equal(ValidateEventCreate(event, EVENTS_V1BETA1).length, 0);
  assert.deepEqual(ValidateEventCreate(event, "").map((e) => e.field), ["metadata.name", "type"]);
});
check("a body namespace other than the URL's is a 400 (EnsureObjectNamespaceMatchesRequestNamespace)", () => {
  const bad = beforeCreateEvent(goodBody({ metadata: { name: "x", namespace: "other" } }), "default");
  assert.equal(bad.code, 400);
  assert.equal(bad.status.reason, "BadRequest");
  assert.equal(bad.message, "the namespace of the provided object does not match the namespace sent on the request");
});
check("a bad name: the strategy's DNS-subdomain message (the generic path-segment check never runs)", () => {
  const bad = beforeCreateEvent(goodBody({ metadata: { name: "Hca/Down" } }), "default");
  assert.deepEqual(bad.status.details.causes.map((c) => c.field), ["metadata.name"]);
  assert.match(bad.message, /^Event "Hca\/Down" is invalid: metadata\.name: Invalid value: "Hca\/Down": a lowercase RFC 1123 subdomain/);
});
check("eventTime must be RFC3339 with exactly six fraction digits (metav1.MicroTime): Go's parse errors, a 400", () => {
  const cases = {
    "2026-03-01T10:00:00Z": `parsing time "2026-03-01T10:00:00Z" as "${RFC3339Micro}": cannot parse "Z" as ".000000"`,
    "2026-03-01T10:00:00.123Z": `parsing time "2026-03-01T10:00:00.123Z" as "${RFC3339Micro}": cannot parse ".123Z" as ".000000"`,
    "2026-03-01T10:00:00.123456789Z": `parsing time "2026-03-01T10:00:00.123456789Z" as "${RFC3339Micro}": cannot parse "789Z" as "Z07:00"`,
    "2026-03-01 10:00:00.123456Z": `parsing time "2026-03-01 10:00:00.123456Z" as "${RFC3339Micro}": cannot parse " 10:00:00.123456Z" as "T"`,
    "2026-13-01T10:00:00.123456Z": "parsing time \"2026-13-01T10:00:00.123456Z\": month out of range",
    "2026-02-30T10:00:00.123456Z": "parsing time \"2026-02-30T10:00:00.123456Z\": day out of range",
    "2026-03-01T10:00:00.123456Zjunk": "parsing time \"2026-03-01T10:00:00.123456Zjunk\": extra text: \"junk\"",
  };
  for (const [value, text] of Object.entries(cases)) {
    const bad = checkEventDecodes(goodBody({ eventTime: value }));
    assert.equal(bad?.code, 400, value);
    assert.equal(bad.message, `Event in version "v1" cannot be handled as a Event: ${text}`, value);
  }
  assert.deepEqual(goParseTime(RFC3339Micro, "2026-03-01T12:00:00.000001+02:00"), goTime(Date.UTC(2026, 2, 1, 10) / 1000, 1000));
  assert.deepEqual(goParseTime(RFC3339, "2026-03-01T10:00:00.5Z"), goTime(Date.UTC(2026, 2, 1, 10) / 1000, 5e8));
  assert.deepEqual(goParseTime(RFC3339, "2026-03-01T10:00:00Z"), goTime(Date.UTC(2026, 2, 1, 10) / 1000));
});
check("a null eventTime is a zero time: eventTime: Required value (422, not 400)", () => {
  const body = goodBody({ eventTime: null });
  assert.equal(checkEventDecodes(body), null);
  // an old-style Event for legacyValidateEvent (no reporting checks), then the strict rule
  assert.deepEqual(beforeCreateEvent(body, "default").status.details.causes.map((c) => c.field), ["eventTime"]);
});
check("type errors are encoding/json's, the first in the body wins; a time error aborts at once", () => {
  const text = (b) => checkEventDecodes(b)?.message.replace('Event in version "v1" cannot be handled as a Event: ', "");
  assert.equal(text(goodBody({ reason: 3 })), "json: cannot unmarshal number into Go struct field Event.reason of type string");
  assert.equal(text(goodBody({ series: { count: "2" } })), "json: cannot unmarshal string into Go struct field EventSeries.series.count of type int32");
  assert.equal(text(goodBody({ deprecatedCount: 1.5 })), "json: cannot unmarshal number 1.5 into Go struct field Event.deprecatedCount of type int32");
  assert.equal(text(goodBody({ regarding: "node-1" })), "json: cannot unmarshal string into Go struct field Event.regarding of type v1.ObjectReference");
  assert.equal(text(goodBody({ reason: 3, eventTime: 5 })), "json: cannot unmarshal number into Go value of type string");
  assert.equal(checkEventDecodes(goodBody({ apiVersion: "v1" })).message,
    "the API version in the data (v1) does not match the expected API version (events.k8s.io/v1)");
});
check("the Status of errors.NewInvalid: duplicates dropped from the message, kept in the causes", () => {
  const errs = ValidateEventUpdate(newV1Event({ resourceVersion: "1", reason: "B" }), newV1Event({ reason: "A" }), EVENTS_V1)
    .filter((e) => e.field === "reason");
  const st = eventInvalidStatus("x", errs);
  assert.equal(st.message, "Event \"x\" is invalid: reason: Invalid value: \"B\": field is immutable");
  assert.equal(st.details.causes.length, 2);
  assert.equal(st.code, 422);
});
check("field selectors: the events.k8s.io/v1 labels, converted to the internal ones", () => {
  const body = goodBody({ metadata: { name: "e", namespace: "default" } });
  assert.equal(eventMatchesFields(body, parseEventFieldSelector("regarding.name=node-1,type=Warning")), true);
  assert.equal(eventMatchesFields(body, parseEventFieldSelector("regarding.kind!=Node")), false);
  assert.equal(eventMatchesFields(body, parseEventFieldSelector("reportingController==rdma.example.com/rdma-shared-dp")), true);
  assert.equal(eventMatchesFields(body, parseEventFieldSelector("source=rdma.example.com/rdma-shared-dp")), true);
  assert.throws(() => parseEventFieldSelector("involvedObject.name=x"), (e) => e instanceof FieldSelectorError &&
    e.message === "field label not supported: involvedObject.name");
  assert.throws(() => parseEventFieldSelector("type"), FieldSelectorError);
});

// --- The fake server's events.k8s.io/v1 endpoints, end to end ------------------------------

const here = path.dirname(fileURLToPath(import.meta.url));
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "event-validation-"));
const server = spawn(process.execPath, [path.join(here, "fake_apiserver.mjs"), stateDir], { stdio: ["ignore", "pipe", "inherit"] });
let ports;
try {
  ports = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("fake_apiserver.mjs did not start in 30 s")), 30000);
    server.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) {
        clearTimeout(timer);
        resolve(JSON.parse(out.slice(0, out.indexOf("\n"))));
      }
    });
    server.on("exit", (code) => reject(new Error(`fake_apiserver.mjs exited (${code})`)));
  });
} catch (e) {
  check("the fake server starts", () => assert.fail(e.message));
}

if (ports) {
  const ca = fs.readFileSync(path.join(stateDir, "ca.crt"));
  const token = fs.readFileSync(path.join(stateDir, "token"), "utf8");
  const call = (lib, options, body) => new Promise((resolve, reject) => {
    const req = lib.request({ host: "127.0.0.1", timeout: 10000, ...options }, (res) => {
      let text = "";
      res.on("data", (d) => { text += d; });
      res.on("end", () => resolve({ code: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : null }));
    });
    req.on("timeout", () => req.destroy(new Error(`${options.method} ${options.path}: no answer`)));
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
  const api = (method, p, body) => call(https, { port: ports.apiPort, method, path: p, ca,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } }, body);
  const admin = (method, p, body) => call(http, { port: ports.adminPort, method, path: p }, body);
  const NS = "/apis/events.k8s.io/v1/namespaces";
  const r = {};
  try {
    r.created = await api("POST", `${NS}/default/events`, goodBody());
    r.duplicate = await api("POST", `${NS}/default/events`, goodBody());
    r.generated = await api("POST", `${NS}/default/events`, goodBody({ metadata: { generateName: "hca-down-" }, unknownField: 1 }));
    const noController = goodBody({ metadata: { name: "hca-down.1" } });
    delete noController.reportingController;
    r.noController = await api("POST", `${NS}/default/events`, noController);
    r.badRegarding = await api("POST", `${NS}/rdma/events`, goodBody());
    r.badTime = await api("POST", `${NS}/default/events`, goodBody({ metadata: { name: "t" }, eventTime: "2026-03-01T10:00:00Z" }));
    r.withRv = await api("POST", `${NS}/default/events`, goodBody({ metadata: { name: "rv", resourceVersion: "5" } }));
    r.dryRun = await api("POST", `${NS}/default/events?dryRun=All`, goodBody({ metadata: { name: "dry" } }));
    r.otherNs = await api("POST", `${NS}/rdma/events`, goodBody({ regarding: { kind: "Pod", name: "p", namespace: "rdma" } }));
    await admin("POST", "/fault", { method: "POST", match: "/apis/events.k8s.io/", code: 500 });
    r.faulted = await api("POST", `${NS}/default/events`, goodBody({ metadata: { name: "faulted" } }));
    r.listDefault = await api("GET", `${NS}/default/events`);
    r.listAll = await api("GET", "/apis/events.k8s.io/v1/events");
    r.selected = await api("GET", "/apis/events.k8s.io/v1/events?fieldSelector=regarding.kind%3DPod");
    r.badSelector = await api("GET", "/apis/events.k8s.io/v1/events?fieldSelector=involvedObject.name%3Dx");
    r.one = await api("GET", `${NS}/default/events/hca-down.1`);
    r.missing = await api("GET", `${NS}/default/events/nope`);
    r.adminEvents = await admin("GET", "/events");
    r.stats = await admin("GET", "/stats");
  } catch (e) {
    r.error = e;
  }
  server.kill("SIGTERM");
  fs.rmSync(stateDir, { recursive: true, force: true });

  check("server: the requests were all answered", () => assert.equal(r.error, undefined, String(r.error)));
  check("server: create answers 201 with uid, resourceVersion and creationTimestamp filled, the namespace from the URL", () => {
    assert.equal(r.created.code, 201);
    const m = r.created.body.metadata;
    assert.match(m.uid, /^[0-9a-f-]{36}$/);
    assert.match(m.resourceVersion, /^\d+$/);
    assert.match(m.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(m.namespace, "default");
    assert.equal(r.created.body.note, "mlx5_0 is down");
  });
  check("server: a taken name is 409 AlreadyExists, as the real server words it", () => {
    assert.equal(r.duplicate.code, 409);
    assert.deepEqual(r.duplicate.body, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure",
      message: "events.events.k8s.io \"hca-down.1\" already exists", reason: "AlreadyExists",
      details: { name: "hca-down.1", group: "events.k8s.io", kind: "events" }, code: 409 });
  });
  check("server: generateName is honoured; an unknown field is dropped with a warning", () => {
    assert.equal(r.generated.code, 201);
    assert.match(r.generated.body.metadata.name, /^hca-down-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.equal("unknownField" in r.generated.body, false);
    assert.equal(String(r.generated.headers.warning), '299 - "unknown field \\"unknownField\\""');
  });
  check("server: missing reportingController is 422 with the real message", () => {
    assert.equal(r.noController.code, 422);
    assert.equal(r.noController.body.message, missingControllerMessage);
    assert.equal(r.noController.body.reason, "Invalid");
  });
  check("server: a regarding without a namespace in namespace rdma is 422 on involvedObject.namespace", () => {
    assert.equal(r.badRegarding.code, 422);
    assert.equal(r.badRegarding.body.message, badRegardingMessage);
  });
  check("server: a second-precision eventTime is a 400 BadRequest with Go's parse error", () => {
    assert.equal(r.badTime.code, 400);
    assert.equal(r.badTime.body.message, `Event in version "v1" cannot be handled as a Event: parsing time "2026-03-01T10:00:00Z" as "${RFC3339Micro}": cannot parse "Z" as ".000000"`);
  });
  check("server: a resourceVersion on create is etcd's 500; dryRun=All validates and stores nothing", () => {
    assert.equal(r.withRv.code, 500);
    assert.equal(r.withRv.body.message, "resourceVersion should not be set on objects to be created");
    assert.equal(r.dryRun.code, 201);
    assert.equal(r.adminEvents.body.some((e) => e.metadata.name === "dry"), false);
  });
  check("server: POST /fault with method and match fails the next event create", () => {
    assert.equal(r.faulted.code, 500);
    assert.equal(r.faulted.body.message, "injected 500");
  });
  check("server: lists per namespace and across namespaces, with field selectors; one by name; 404", () => {
    assert.equal(r.listDefault.code, 200);
    assert.equal(r.listDefault.body.kind, "EventList");
    assert.equal(r.listDefault.body.items.length, 2);
    assert.equal(r.listAll.body.items.length, 3);
    assert.deepEqual(r.selected.body.items.map((e) => e.metadata.namespace), ["rdma"]);
    assert.equal(r.badSelector.code, 400);
    assert.equal(r.badSelector.body.message, "field label not supported: involvedObject.name");
    assert.equal(r.one.body.metadata.uid, r.created.body.metadata.uid);
    assert.equal(r.missing.code, 404);
    assert.equal(r.missing.body.message, "events.events.k8s.io \"nope\" not found");
  });
  check("server: GET /events and /stats: every stored Event, creates counted, refusals recorded", () => {
    assert.equal(r.adminEvents.body.length, 3);
    assert.equal(r.stats.body.eventCreates, 3);
    assert.deepEqual(r.stats.body.invalid, [missingControllerMessage, badRegardingMessage, r.badTime.body.message,
      "resourceVersion should not be set on objects to be created"]);
    assert.equal(r.stats.body.creates, 0); // slices' counters are the slices' own
  });
}

finish(`event validation (${upstream} upstream cases)`);
