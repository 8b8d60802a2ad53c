// kube-apiserver's handling of an Event written through events.k8s.io/v1 (and the rules it
// shares with core/v1 and events.k8s.io/v1beta1), ported to JavaScript rule for rule so that
// the fake API server (fake_apiserver.mjs) refuses what the real one refuses, with the same
// field paths and messages. Each function names the upstream Go function it mirrors; none of
// the Go code is copied, it is re-expressed here. FieldError, the name checks and the
// object-meta checks come from kube_validation.mjs.
//
// What it ports (kubernetes/kubernetes):
//  - pkg/apis/core/validation/events.go: ValidateEventCreate, ValidateEventUpdate,
//    validateV1EventSeries, legacyValidateEvent and its limits (ReportingInstanceLengthLimit,
//    ActionLengthLimit, ReasonLengthLimit, NoteLengthLimit), with the request's group/version
//    as a parameter: core/v1 and events.k8s.io/v1beta1 get the legacy checks only,
//    events.k8s.io/v1 (and any later or unknown version) the strict ones too.
//  - pkg/registry/core/event/strategy.go: the strategy the events.k8s.io/v1 endpoint shares
//    with core/v1 (PrepareForCreate does nothing, Validate/ValidateUpdate pass the request's
//    group/version from requestGroupVersion, no warnings, Canonicalize does nothing), and
//    pkg/apis/events/selection.go EventToSelectableFields (the field-selector set).
//  - pkg/apis/events/v1/conversion.go: Convert_v1_Event_To_core_Event and back (with the
//    generated autoConvert part) and AddFieldLabelConversionsForEvent (field selectors of
//    events.k8s.io/v1); pkg/apis/core/v1's autoConvert_v1_Event_To_core_Event for a core/v1
//    body (reportingComponent is the internal ReportingController).
//  - core validation ValidateObjectMeta / ValidateObjectMetaUpdate (with namespace required,
//    NameIsDNSSubdomain for the name, NameIsDNSLabel for the namespace, the kube finalizer-name
//    check), ValidateImmutableField; apimachinery ValidateObjectMetaAccessor's namespace rule.
//  - staging/src/k8s.io/apiserver: rest.BeforeCreate (EnsureObjectNamespaceMatchesRequestNamespace,
//    the strategy's validation, then the generic object-meta check with ValidatePathSegmentName),
//    the decoding of the request body (handlers/create.go transformDecodeError), errors
//    NewInvalid / NewAlreadyExists / NewNotFound / NewBadRequest for the answers.
//  - staging/src/k8s.io/apimachinery: metav1.MicroTime and metav1.Time UnmarshalJSON
//    (RFC3339Micro "2006-01-02T15:04:05.000000Z07:00" and RFC3339), Go's time.Parse for those
//    two layouts with its error text (time/format.go), encoding/json's type errors.
//
// What the real server answers, and so this port: validation runs on the internal (core)
// Event after conversion, and the field paths are the internal names whatever version the
// client wrote: `regarding` is reported as `involvedObject`, `note` as `message`,
// `deprecatedSource` as `source`, `deprecatedFirstTimestamp`/`deprecatedLastTimestamp`/
// `deprecatedCount` as `firstTimestamp`/`lastTimestamp`/`count`; the namespace checks of
// legacyValidateEvent are on `namespace`, not `metadata.namespace`. Only the reporting
// controller is renamed per request, to `reportingComponent` for core/v1 requests (pull
// 111506, 1.25); events.k8s.io requests get `reportingController`. The 422 Status names the
// kind of the internal object's first registration, the core group's: `Event "x" is invalid:
// ...`, details {kind: "Event", no group} (an events.k8s.io/v1beta1 client quotes the same).
//
// Which release it follows. The newest events.go stored for this work in kubernetes/kubernetes
// itself predates pull 111506; its newer shape (legacyValidateEvent taking the request version,
// the default-namespace rule of pull 100125 for new events, the sub-microsecond eventTime
// tolerance of issue 111928) was read from a kubernetes fork of the 1.34/1.35 development cycle
// (validation-gen work: the qualified-name check there is marked covered by declarative
// validation, which changes no answer: no declarative rule exists for Event fields upstream and
// the event strategy does not call declarative validation). strategy.go, selection.go and
// conversion.go were read at a recent kubernetes/kubernetes commit (after the field-selector
// code moved to pkg/apis/events, 2024 or later); events_test.go is the newest stored copy (it
// has TestEventV1EventTimeImmutability, so 1.25 or later). Exact release-branch copies of
// 1.34..1.37 could not be read; no rule of this path is known to differ between 1.34, 1.35,
// 1.36 and 1.37 (events.go has had this shape since 1.25), so nothing here takes a release.
//
// Known gaps:
//  - A Go struct as a bad value (ValidateImmutableField on involvedObject, source, related or a
//    time) is printed as Go prints the internal struct, which this port only approximates
//    (goJSON of the JSON form; a time as Go's time.String in UTC). Field, type and detail match.
//  - Decoding: the body's numbers are JavaScript numbers, so a type error quotes them as
//    JavaScript prints them ("number 1.5"; Go keeps the literal, "number 1e3"); non-ASCII text
//    in a time is quoted per UTF-16 unit, not per byte. JSON syntax errors are JavaScript's text.
//  - A time written explicitly as 0001-01-01T00:00:00.000000Z is not zero for Go (its location
//    is Local, and validation compares with ==), and is not zero here either; only an absent or
//    null time is.
//  - Label selectors are not supported on lists (field selectors are).

import { FieldError, goQuote, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, validateCommonFields }
  from "./kube_validation.mjs";

// The request versions (schema.GroupVersion.String()) the strategy tells apart.
export const CORE_V1 = "v1";
export const EVENTS_V1BETA1 = "events.k8s.io/v1beta1";
export const EVENTS_V1 = "events.k8s.io/v1";

// events.go
export const LIMITS = { ReportingInstanceLengthLimit: 128, ActionLengthLimit: 128, ReasonLengthLimit: 128, NoteLengthLimit: 1024 };

// --- field/errors.go constructors over kube_validation's FieldError --------------------------

const required = (field, detail = "") => new FieldError("FieldValueRequired", field, "", detail);
const invalid = (field, value, detail) => new FieldError("FieldValueInvalid", field, value, detail);
const blen = (s) => Buffer.byteLength(s, "utf8");
const str = (v) => (typeof v === "string" ? v : "");

// --- Go's time, as far as events use it -------------------------------------------------------

// A time.Time instant: Unix seconds and nanoseconds (0 <= nsec < 1e9). The zero time.Time is
// null (or undefined) here, never an instant.
export const goTime = (sec, nsec = 0) => ({ sec: sec + Math.floor(nsec / 1e9), nsec: ((nsec % 1e9) + 1e9) % 1e9 });
export const isZeroTime = (t) => t === null || t === undefined;
const sameInstant = (a, b) => (isZeroTime(a) || isZeroTime(b) ? isZeroTime(a) && isZeroTime(b) : a.sec === b.sec && a.nsec === b.nsec);
// time.Time.Truncate(time.Microsecond) (the zero time stays zero)
const truncateMicro = (t) => (isZeroTime(t) ? t : { sec: t.sec, nsec: t.nsec - (t.nsec % 1000) });
// time.Time.String() of a UTC time, for a bad value: "2017-09-19 13:49:16 +0000 UTC"
function goTimeString(t) {
  if (isZeroTime(t)) return "0001-01-01 00:00:00 +0000 UTC";
  const iso = new Date(t.sec * 1000).toISOString();
  const frac = t.nsec ? "." + String(t.nsec).padStart(9, "0").replace(/0+$/, "") : "";
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac} +0000 UTC`;
}

// metav1.RFC3339Micro and time.RFC3339
export const RFC3339Micro = "2006-01-02T15:04:05.000000Z07:00";
export const RFC3339 = "2006-01-02T15:04:05Z07:00";
// The layouts as time/format.go's nextStdChunk cuts them: [literal prefix, std element].
const CHUNKS = {
  [RFC3339Micro]: [["", "2006"], ["-", "01"], ["-", "02"], ["T", "15"], [":", "04"], [":", "05"], ["", ".000000"], ["", "Z07:00"]],
  [RFC3339]: [["", "2006"], ["-", "01"], ["-", "02"], ["T", "15"], [":", "04"], [":", "05"], ["", "Z07:00"]],
};

// time.ParseError
export class GoTimeParseError extends Error {}

// time/format.go quote: ASCII as is (with " and \ escaped), anything else as \x bytes.
function timeQuote(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (c >= 0x80 || c < 0x20) {
      for (const b of Buffer.from(ch, "utf8")) out += "\\x" + b.toString(16).padStart(2, "0");
    } else {
      out += (ch === '"' || ch === "\\" ? "\\" : "") + ch;
    }
  }
  return out + '"';
}

const isDigit = (s, i) => i < s.length && s[i] >= "0" && s[i] <= "9";
// getnum: one or two digits (exactly two when fixed). Returns [n, rest, err].
function getnum(s, fixed) {
  if (!isDigit(s, 0)) return [0, s, true];
  if (!isDigit(s, 1)) return fixed ? [0, s, true] : [Number(s[0]), s.slice(1), false];
  return [Number(s[0]) * 10 + Number(s[1]), s.slice(2), false];
}
// atoi: an optional sign, then leading digits that must be the whole string ("" reads as 0).
function atoi(s) {
  let neg = false;
  if (s.length && (s[0] === "-" || s[0] === "+")) {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  let i = 0;
  let x = 0;
  for (; i < s.length && s[i] >= "0" && s[i] <= "9"; i++) x = x * 10 + Number(s[i]);
  if (i < s.length) return null;
  return neg ? -x : x;
}
// parseNanoseconds: value[0] is '.' or ',', then nbytes-1 digits. Returns [ns, rangeErr, err].
function parseNanoseconds(value, nbytes) {
  if (value[0] !== "." && value[0] !== ",") return [0, "", true];
  if (nbytes > 10) nbytes = 10;
  let ns = atoi(value.slice(1, nbytes));
  if (ns === null) return [0, "", true];
  if (ns < 0) return [0, "fractional second", false];
  for (let i = 0; i < 10 - nbytes; i++) ns *= 10;
  return [ns, "", false];
}
const daysIn = (month, year) => (month === 2 ? ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28)
  : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]);

// time.Parse(layout, value) for RFC3339Micro and RFC3339; throws GoTimeParseError with Go's text.
export function goParseTime(layout, value) {
  const fail = (layoutElem, valueElem, message = "") => {
    throw new GoTimeParseError(message ? `parsing time ${timeQuote(value)}${message}`
      : `parsing time ${timeQuote(value)} as ${timeQuote(layout)}: cannot parse ${timeQuote(valueElem)} as ${timeQuote(layoutElem)}`);
  };
  const chunks = CHUNKS[layout];
  let v = value;
  let year = 0, month = -1, day = -1, hour = 0, min = 0, sec = 0, nsec = 0, offset = 0;
  for (let c = 0; c < chunks.length; c++) {
    const [prefix, std] = chunks[c];
    for (const ch of prefix) { // skip
      if (!v.length || v[0] !== ch) fail(prefix, v);
      v = v.slice(1);
    }
    const hold = v;
    let err = false;
    let range = "";
    switch (std) {
      case "2006":
        if (v.length < 4 || !isDigit(v, 0)) { err = true; break; }
        year = atoi(v.slice(0, 4));
        v = v.slice(4);
        if (year === null) err = true;
        break;
      case "01":
        [month, v, err] = getnum(v, true);
        if (!err && (month <= 0 || month > 12)) range = "month";
        break;
      case "02": // any one- or two-digit day; checked against the month after the loop
        [day, v, err] = getnum(v, true);
        break;
      case "15":
        [hour, v, err] = getnum(v, false);
        if (!err && hour >= 24) range = "hour";
        break;
      case "04":
        [min, v, err] = getnum(v, true);
        if (!err && min >= 60) range = "minute";
        break;
      case "05":
        [sec, v, err] = getnum(v, true);
        if (err) break;
        if (sec >= 60) { range = "second"; break; }
        // A fraction in the value that the layout does not spell out is taken whole.
        if (v.length >= 2 && (v[0] === "." || v[0] === ",") && isDigit(v, 1) && chunks[c + 1]?.[1] !== ".000000") {
          let n = 2;
          while (n < v.length && isDigit(v, n)) n++;
          [nsec, range, err] = parseNanoseconds(v, n);
          v = v.slice(n);
        }
        break;
      case ".000000":
        if (v.length < 7) { err = true; break; }
        [nsec, range, err] = parseNanoseconds(v, 7);
        v = v.slice(7);
        break;
      case "Z07:00": {
        if (v.length >= 1 && v[0] === "Z") { v = v.slice(1); break; }
        if (v.length < 6 || v[3] !== ":") { err = true; break; }
        const sign = v[0];
        let hr, mm;
        [hr, , err] = getnum(v.slice(1, 3), true);
        if (!err) [mm, , err] = getnum(v.slice(4, 6), true);
        v = v.slice(6);
        if (hr > 24) range = "time zone offset hour";
        if (mm > 60) range = "time zone offset minute";
        offset = (hr * 60 + (mm ?? 0)) * 60;
        if (sign === "-") offset = -offset;
        else if (sign !== "+") err = true;
        break;
      }
    }
    if (range) fail(std, v, `: ${range} out of range`);
    if (err) fail(std, hold);
  }
  if (v.length) fail("", v, `: extra text: ${timeQuote(v)}`);
  if (day < 1 || day > daysIn(month, year)) fail("", v, ": day out of range");
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, min, sec, 0);
  return goTime(d.getTime() / 1000 - offset, nsec);
}

// --- Decoding the body (encoding/json into k8s.io/api/events/v1 Event) ------------------------

// What the request body cannot be decoded as: the real server answers 400 BadRequest.
export class EventDecodeError extends Error {}

// The Go shape of events.k8s.io/v1 Event (staging/src/k8s.io/api/events/v1/types.go): JSON name
// -> "string", "int32", "MicroTime", "Time", "ObjectMeta" or a nested struct.
const OBJECT_REFERENCE = { type: "v1.ObjectReference", struct: "ObjectReference", fields: {
  kind: "string", namespace: "string", name: "string", uid: "string", apiVersion: "string", resourceVersion: "string",
  fieldPath: "string" } };
const EVENT_SOURCE = { type: "v1.EventSource", struct: "EventSource", fields: { component: "string", host: "string" } };
const EVENT_SERIES = { type: "v1.EventSeries", struct: "EventSeries",
  fields: { count: "int32", lastObservedTime: "MicroTime" } };
const EVENT_V1 = { type: "v1.Event", struct: "Event", fields: {
  kind: "string", apiVersion: "string", metadata: "ObjectMeta", eventTime: "MicroTime", series: EVENT_SERIES,
  reportingController: "string", reportingInstance: "string", action: "string", reason: "string",
  regarding: OBJECT_REFERENCE, related: OBJECT_REFERENCE, note: "string", type: "string",
  deprecatedSource: EVENT_SOURCE, deprecatedFirstTimestamp: "Time", deprecatedLastTimestamp: "Time",
  deprecatedCount: "int32" } };
const POINTERS = new Set(["series", "related"]); // *EventSeries, *ObjectReference: nil when absent

const jsonKind = (v) => (Array.isArray(v) ? "array" : v === null ? "null" : typeof v === "object" ? "object"
  : typeof v === "boolean" ? "bool" : typeof v);

// Decodes one struct; a time that cannot be parsed aborts (its UnmarshalJSON fails), a type
// mismatch is kept and decoding goes on (encoding/json's saveError), the first one wins.
function decodeStruct(value, shape, stack, state) {
  const out = {};
  for (const [name, kind] of Object.entries(shape.fields)) { // the zero values
    out[name] = kind === "string" ? "" : kind === "int32" ? 0
      : kind === "MicroTime" || kind === "Time" || POINTERS.has(name) ? null
        : kind === "ObjectMeta" ? {} : decodeStruct({}, kind, [], { saved: null });
  }
  for (const [name, v] of Object.entries(value)) {
    const kind = shape.fields[name];
    // unknown fields were dropped before; null (undefined in JavaScript) leaves the zero value
    if (kind === undefined || v === null || v === undefined) continue;
    const path = [...stack, name].join(".");
    const typeError = (value, type) => {
      state.saved ??= `json: cannot unmarshal ${value} into Go struct field ${shape.struct}.${path} of type ${type}`;
    };
    if (kind === "MicroTime" || kind === "Time") {
      // metav1.MicroTime/Time.UnmarshalJSON: a JSON string, parsed with RFC3339Micro/RFC3339
      if (typeof v !== "string") {
        throw new EventDecodeError(`json: cannot unmarshal ${jsonKind(v)} into Go value of type string`);
      }
      try {
        out[name] = goParseTime(kind === "MicroTime" ? RFC3339Micro : RFC3339, v);
      } catch (e) {
        if (e instanceof GoTimeParseError) throw new EventDecodeError(e.message);
        throw e;
      }
    } else if (kind === "string") {
      if (typeof v === "string") out[name] = v;
      else typeError(jsonKind(v), "string");
    } else if (kind === "int32") {
      if (typeof v !== "number") typeError(jsonKind(v), "int32");
      else if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31) typeError(`number ${v}`, "int32");
      else out[name] = v;
    } else if (kind === "ObjectMeta") {
      if (jsonKind(v) === "object") out[name] = v;
      else typeError(jsonKind(v), "v1.ObjectMeta");
    } else if (jsonKind(v) === "object") {
      out[name] = decodeStruct(v, kind, [...stack, name], state);
    } else {
      typeError(jsonKind(v), kind.type);
    }
  }
  return out;
}

// The JSON body of an events.k8s.io/v1 Event decoded as the server's decoder does; throws
// EventDecodeError with Go's text. Times become goTime instants (null when zero). A body of
// JSON null decodes to the zero Event, as in Go.
export function decodeEvent(json) {
  if (json !== null && jsonKind(json) !== "object") {
    throw new EventDecodeError(`json: cannot unmarshal ${jsonKind(json)} into Go value of type v1.Event`);
  }
  const state = { saved: null };
  const out = decodeStruct(json ?? {}, EVENT_V1, [], state);
  if (state.saved) throw new EventDecodeError(state.saved);
  return out;
}

// --- Conversion: pkg/apis/events/v1/conversion.go ---------------------------------------------

const objectReference = (r) => (r ? { kind: str(r.kind), namespace: str(r.namespace), name: str(r.name), uid: str(r.uid),
  apiVersion: str(r.apiVersion), resourceVersion: str(r.resourceVersion), fieldPath: str(r.fieldPath) } : null);

// The fields of an events.k8s.io/v1 Event and of the internal Event, one row per field:
// [v1 name, internal name, value conversion]. The two generated conversions of
// pkg/apis/events/v1 (autoConvert_v1_Event_To_core_Event and autoConvert_core_Event_To_v1_Event)
// copy each field to its counterpart, renaming where the names differ.
const seriesOf = (s) => (s ? { count: s.count ?? 0, lastObservedTime: s.lastObservedTime ?? null } : null);
const sourceOf = (s) => ({ component: str(s?.component), host: str(s?.host) });
const orNull = (v) => v ?? null;
const EVENT_FIELDS = [
  ["metadata", "metadata", (m) => m ?? {}],
  ["eventTime", "eventTime", orNull],
  ["series", "series", seriesOf],
  ["reportingController", "reportingController", str],
  ["reportingInstance", "reportingInstance", str],
  ["action", "action", str],
  ["reason", "reason", str],
  ["regarding", "involvedObject", (r) => objectReference(r ?? {})],
  ["related", "related", objectReference],
  ["note", "message", str],
  ["type", "type", str],
  ["deprecatedSource", "source", sourceOf],
  ["deprecatedFirstTimestamp", "firstTimestamp", orNull],
  ["deprecatedLastTimestamp", "lastTimestamp", orNull],
  ["deprecatedCount", "count", (n) => n ?? 0],
];
const convertEvent = (e, from, to) =>
  Object.fromEntries(EVENT_FIELDS.map((f) => [f[to], f[2](e[f[from]])]));

// Convert_v1_Event_To_core_Event (with autoConvert_v1_Event_To_core_Event): a decoded
// events.k8s.io/v1 Event to the internal Event every version is validated as.
export const convertV1EventToCore = (e) => convertEvent(e, 0, 1);

// Convert_core_Event_To_v1_Event (with autoConvert_core_Event_To_v1_Event)
export const convertCoreEventToV1 = (e) => convertEvent(e, 1, 0);

// pkg/apis/core/v1 autoConvert_v1_Event_To_core_Event: a core/v1 Event (its times already
// decoded) to the internal Event; the JSON name of ReportingController there is reportingComponent.
export function convertCoreV1EventToCore(e) {
  return {
    metadata: e.metadata ?? {},
    involvedObject: objectReference(e.involvedObject ?? {}),
    reason: str(e.reason),
    message: str(e.message),
    source: { component: str(e.source?.component), host: str(e.source?.host) },
    firstTimestamp: e.firstTimestamp ?? null,
    lastTimestamp: e.lastTimestamp ?? null,
    count: e.count ?? 0,
    type: str(e.type),
    eventTime: e.eventTime ?? null,
    series: e.series ? { count: e.series.count ?? 0, lastObservedTime: e.series.lastObservedTime ?? null } : null,
    action: str(e.action),
    related: objectReference(e.related),
    reportingController: str(e.reportingComponent),
    reportingInstance: str(e.reportingInstance),
  };
}

// --- Object meta -------------------------------------------------------------------------------

// apimachinery NameIsDNSSubdomain / NameIsDNSLabel (maskTrailingDash for a generateName prefix)
const maskTrailingDash = (name) => (name.length > 1 && name.endsWith("-") ? name.slice(0, name.length - 2) + "a" : name);
const nameIsDNSSubdomain = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
const nameIsDNSLabel = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);
// path.ValidatePathSegmentName (the generic registry's name check)
function validatePathSegmentName(name, prefix) {
  const msgs = prefix ? [] : [".", ".."].filter((bad) => name === bad).map((bad) => `may not be '${bad}'`);
  return [...msgs, ...["/", "%"].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`)];
}

// The checks of ValidateObjectMetaAccessor after name and namespace (generation, labels,
// annotations, owner references, finalizers, managed fields): kube_validation's
// validateCommonFields run on the meta with a placeholder name and no namespace, so that it
// reports nothing of its own name and namespace rules.
function otherMetaChecks(meta) {
  const rest = { ...(meta ?? {}), name: "x", namespace: undefined };
  delete rest.generateName;
  return validateCommonFields({ metadata: rest }, null);
}

// apimachinery ValidateObjectMetaAccessor with a name function and requiresNamespace
function validateObjectMetaAccessor(meta, requiresNamespace, nameFn, path) {
  const errs = [];
  const m = meta ?? {};
  const generateName = str(m.generateName);
  const name = str(m.name);
  const namespace = str(m.namespace);
  if (generateName) for (const msg of nameFn(generateName, true)) errs.push(invalid(`${path}.generateName`, generateName, msg));
  if (!name) errs.push(required(`${path}.name`, "name or generateName is required"));
  else for (const msg of nameFn(name, false)) errs.push(invalid(`${path}.name`, name, msg));
  if (requiresNamespace) {
    if (!namespace) errs.push(required(`${path}.namespace`, ""));
    else for (const msg of nameIsDNSLabel(namespace, false)) errs.push(invalid(`${path}.namespace`, namespace, msg));
  } else if (namespace) {
    errs.push(new FieldError("FieldValueForbidden", `${path}.namespace`, "", "not allowed on this type"));
  }
  return [...errs, ...otherMetaChecks(m)];
}

// core validation validateKubeFinalizerName
function validateKubeFinalizerNames(finalizers, path) {
  const standard = ["kubernetes", "orphan", "foregroundDeletion"];
  return (Array.isArray(finalizers) ? finalizers : []).flatMap((f, i) => (String(f).split("/").length === 1 && !standard.includes(f)
    ? [invalid(`${path}[${i}]`, f, "name is neither a standard finalizer name nor is it fully qualified")] : []));
}

// core validation ValidateObjectMeta
export function ValidateObjectMeta(meta, requiresNamespace, nameFn, path) {
  return [...validateObjectMetaAccessor(meta, requiresNamespace, nameFn, path),
    ...validateKubeFinalizerNames(meta?.finalizers, `${path}.finalizers`)];
}

// core validation ValidateObjectMetaUpdate: apimachinery ValidateObjectMetaAccessorUpdate is
// what kube_validation's validateCommonFields adds for an update after the create checks.
export function ValidateObjectMetaUpdate(meta, oldMeta, path = "metadata") {
  const createOnly = validateCommonFields({ metadata: meta }, null).length;
  const update = validateCommonFields({ metadata: meta }, { metadata: oldMeta }).slice(createOnly);
  return [...update.map((e) => Object.assign(e, { field: e.field.replace(/^metadata/, path) })),
    ...validateKubeFinalizerNames(meta?.finalizers, `${path}.finalizers`)];
}

// --- ValidateImmutableField over the internal Event's values ----------------------------------

const isTimeValue = (v) => v !== null && typeof v === "object" && "sec" in v && "nsec" in v;
// apiequality.Semantic.DeepEqual as far as an Event's fields need it (times compare instants).
function semanticEqual(a, b) {
  if (isTimeValue(a) || isTimeValue(b)) return sameInstant(a, b);
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => semanticEqual(a[k] ?? null, b[k] ?? null));
}

// A time as a bad value: Go prints a fmt.Stringer unquoted (time.String).
class StringerValueError extends FieldError {
  errorBody() { return `Invalid value: ${this.badValue}${this.detail ? `: ${this.detail}` : ""}`; }
}

// core validation ValidateImmutableField (apimachinery FieldImmutableErrorMsg); strings and
// numbers print as Go prints them, structs as JSON (approximate, see the header).
function validateImmutableField(newVal, oldVal, path, { time = false } = {}) {
  if (semanticEqual(newVal ?? null, oldVal ?? null)) return [];
  if (time) return [new StringerValueError("FieldValueInvalid", path, goTimeString(newVal), "field is immutable")];
  return [invalid(path, newVal ?? null, "field is immutable")];
}

// --- pkg/apis/core/validation/events.go --------------------------------------------------------

// ValidateEventCreate: `event` is the internal Event, `requestVersion` the request's
// group/version ("v1", "events.k8s.io/v1beta1", "events.k8s.io/v1"; "" when unknown).
export function ValidateEventCreate(event, requestVersion) {
  const errs = legacyValidateEvent(event, requestVersion);
  if (requestVersion === CORE_V1 || requestVersion === EVENTS_V1BETA1) return errs; // backwards compatibility
  errs.push(...ValidateObjectMeta(event.metadata, true, nameIsDNSSubdomain, "metadata"));
  errs.push(...validateV1EventSeries(event));
  if (isZeroTime(event.eventTime)) errs.push(required("eventTime", ""));
  const type = str(event.type);
  if (type !== "Normal" && type !== "Warning") errs.push(invalid("type", "", `has invalid value: ${type}`));
  if (!isZeroTime(event.firstTimestamp)) errs.push(invalid("firstTimestamp", "", "needs to be unset"));
  if (!isZeroTime(event.lastTimestamp)) errs.push(invalid("lastTimestamp", "", "needs to be unset"));
  if ((event.count ?? 0) !== 0) errs.push(invalid("count", "", "needs to be unset"));
  if (str(event.source?.component) !== "" || str(event.source?.host) !== "") errs.push(invalid("source", "", "needs to be unset"));
  return errs;
}

// ValidateEventUpdate (reason is checked twice upstream, and so here: two identical errors)
export function ValidateEventUpdate(newEvent, oldEvent, requestVersion) {
  const errs = legacyValidateEvent(newEvent, requestVersion);
  if (requestVersion === CORE_V1 || requestVersion === EVENTS_V1BETA1) return errs;
  errs.push(...ValidateObjectMetaUpdate(newEvent.metadata, oldEvent.metadata, "metadata"));
  // reflect.DeepEqual of the series: only a changed series is validated again
  if (!semanticEqual(newEvent.series ?? null, oldEvent.series ?? null)) errs.push(...validateV1EventSeries(newEvent));
  const n = newEvent;
  const o = oldEvent;
  errs.push(...validateImmutableField(objectReference(n.involvedObject ?? {}), objectReference(o.involvedObject ?? {}), "involvedObject"));
  errs.push(...validateImmutableField(str(n.reason), str(o.reason), "reason"));
  errs.push(...validateImmutableField(str(n.message), str(o.message), "message"));
  errs.push(...validateImmutableField({ component: str(n.source?.component), host: str(n.source?.host) },
    { component: str(o.source?.component), host: str(o.source?.host) }, "source"));
  errs.push(...validateImmutableField(n.firstTimestamp ?? null, o.firstTimestamp ?? null, "firstTimestamp", { time: true }));
  errs.push(...validateImmutableField(n.lastTimestamp ?? null, o.lastTimestamp ?? null, "lastTimestamp", { time: true }));
  errs.push(...validateImmutableField(n.count ?? 0, o.count ?? 0, "count"));
  errs.push(...validateImmutableField(str(n.reason), str(o.reason), "reason"));
  errs.push(...validateImmutableField(str(n.type), str(o.type), "type"));
  // Changes of eventTime below a microsecond are tolerated (issue 111928: clients that
  // truncate to microseconds, or send nanoseconds through protobuf).
  if (!sameInstant(truncateMicro(n.eventTime ?? null), truncateMicro(o.eventTime ?? null))) {
    errs.push(...validateImmutableField(n.eventTime ?? null, o.eventTime ?? null, "eventTime", { time: true }));
  }
  errs.push(...validateImmutableField(str(n.action), str(o.action), "action"));
  errs.push(...validateImmutableField(objectReference(n.related), objectReference(o.related), "related"));
  errs.push(...validateImmutableField(str(n.reportingController), str(o.reportingController), "reportingController"));
  errs.push(...validateImmutableField(str(n.reportingInstance), str(o.reportingInstance), "reportingInstance"));
  return errs;
}

// validateV1EventSeries
function validateV1EventSeries(event) {
  const errs = [];
  if (event.series) {
    if ((event.series.count ?? 0) < 2) errs.push(invalid("series.count", "", "should be at least 2"));
    if (isZeroTime(event.series.lastObservedTime)) errs.push(required("series.lastObservedTime", ""));
  }
  return errs;
}

// legacyValidateEvent: what every Event must pass, whatever version it was written in.
export function legacyValidateEvent(event, requestVersion) {
  const errs = [];
  const reportingControllerField = requestVersion === CORE_V1 ? "reportingComponent" : "reportingController";
  const namespace = str(event.metadata?.namespace);
  const involvedNamespace = str(event.involvedObject?.namespace);
  const mismatch = () => invalid("involvedObject.namespace", involvedNamespace, "does not match event.namespace");
  if (isZeroTime(event.eventTime)) {
    // An old-style Event: its namespace is the involved object's, or empty or "default" for a
    // cluster-scoped one (old clients).
    if (involvedNamespace === "") {
      if (namespace !== "" && namespace !== "default") errs.push(mismatch());
    } else if (namespace !== involvedNamespace) {
      errs.push(mismatch());
    }
  } else {
    // A new-style Event (eventTime set): a cluster-scoped object's events go to "default" or
    // "kube-system"; a namespaced object's namespace is not compared.
    if (involvedNamespace === "" && namespace !== "default" && namespace !== "kube-system") errs.push(mismatch());
    const controller = str(event.reportingController);
    if (controller.length === 0) errs.push(required(reportingControllerField, ""));
    for (const msg of isQualifiedName(controller)) errs.push(invalid(reportingControllerField, controller, msg));
    const instance = str(event.reportingInstance);
    if (instance.length === 0) errs.push(required("reportingInstance", ""));
    if (blen(instance) > LIMITS.ReportingInstanceLengthLimit) {
      errs.push(invalid("reportingInstance", "", `can have at most ${LIMITS.ReportingInstanceLengthLimit} characters`));
    }
    const action = str(event.action);
    if (action.length === 0) errs.push(required("action", ""));
    if (blen(action) > LIMITS.ActionLengthLimit) errs.push(invalid("action", "", `can have at most ${LIMITS.ActionLengthLimit} characters`));
    const reason = str(event.reason);
    if (reason.length === 0) errs.push(required("reason", ""));
    if (blen(reason) > LIMITS.ReasonLengthLimit) errs.push(invalid("reason", "", `can have at most ${LIMITS.ReasonLengthLimit} characters`));
    if (blen(str(event.message)) > LIMITS.NoteLengthLimit) {
      errs.push(invalid("message", "", `can have at most ${LIMITS.NoteLengthLimit} characters`));
    }
  }
  for (const msg of isDNS1123Subdomain(namespace)) errs.push(invalid("namespace", namespace, msg));
  return errs;
}

// --- The registry: pkg/registry/core/event/strategy.go and rest.BeforeCreate -------------------

export const eventStrategy = {
  namespaceScoped: true,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: (event, requestVersion) => ValidateEventCreate(event, requestVersion),
  validateUpdate: (event, old, requestVersion) => ValidateEventUpdate(event, old, requestVersion),
  warningsOnCreate: () => [],
  warningsOnUpdate: () => [],
  canonicalize() {},
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
};

// metav1.Status of an error answer (errors.StatusError), `details` left out when empty.
function statusOf(code, reason, message, details) {
  const st = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message };
  if (reason) st.reason = reason;
  if (details) st.details = details;
  st.code = code;
  return st;
}

// errors.NewInvalid for the internal Event: its first registered kind is the core group's, so
// the message reads `Event "name" is invalid: ...` and details carry no group.
export function eventInvalidStatus(name, errs) {
  const msgs = [...new Set(errs.map(String))]; // field.ErrorList.ToAggregate drops duplicates
  const agg = msgs.length === 1 ? msgs[0] : `[${msgs.join(", ")}]`;
  return statusOf(422, "Invalid", `Event ${goQuote(name ?? "")} is invalid${msgs.length ? `: ${agg}` : ""}`, {
    name: name ?? "", kind: "Event",
    causes: errs.map((e) => ({ reason: e.type, message: e.errorBody(), field: e.field })),
  });
}
// errors.NewBadRequest
export const eventBadRequestStatus = (message) => statusOf(400, "BadRequest", message);
// errors.NewAlreadyExists / NewNotFound with the request's qualified resource
// (Store.qualifiedResourceFromContext): events.events.k8s.io
export const eventAlreadyExistsStatus = (name) => statusOf(409, "AlreadyExists", `events.events.k8s.io ${goQuote(name)} already exists`,
  { name, group: "events.k8s.io", kind: "events" });
export const eventNotFoundStatus = (name) => statusOf(404, "NotFound", `events.events.k8s.io ${goQuote(name)} not found`,
  { name, group: "events.k8s.io", kind: "events" });

// The request body decoded as handlers/create.go does; a failure is a 400 from
// transformDecodeError. Returns null or {code, message, status}.
export function checkEventDecodes(json, version = "v1") {
  try {
    if (json !== null && typeof json === "object" && !Array.isArray(json) && json.apiVersion !== undefined &&
        json.apiVersion !== `events.k8s.io/${version}`) {
      // scope.AcceptsGroupVersion: an object of another group/version is refused
      const message = `the API version in the data (${json.apiVersion}) does not match the expected API version (events.k8s.io/${version})`;
      return { code: 400, message, status: eventBadRequestStatus(message) };
    }
    decodeEvent(json);
    return null;
  } catch (e) {
    if (!(e instanceof EventDecodeError)) throw e;
    const message = `Event in version ${goQuote(version)} cannot be handled as a Event: ${e.message}`;
    return { code: 400, message, status: eventBadRequestStatus(message) };
  }
}

// rest.BeforeCreate for an events.k8s.io/v1 Event already decoded and named (Store.Create
// generates the name first): the namespace is the request's (set when the body has none,
// 400 when it has another), then the strategy's validation of the internal Event, then the
// generic object-meta check, each a 422. `json` is the body (its namespace is filled in).
// Returns null or {code, message, status}.
export function beforeCreateEvent(json, requestNamespace, requestVersion = EVENTS_V1) {
  json.metadata ??= {};
  const objNamespace = str(json.metadata.namespace);
  if (objNamespace !== requestNamespace) {
    if (objNamespace !== "") {
      const message = "the namespace of the provided object does not match the namespace sent on the request";
      return { code: 400, message, status: eventBadRequestStatus(message) };
    }
    json.metadata.namespace = requestNamespace;
  }
  const event = convertV1EventToCore(decodeEvent(json));
  eventStrategy.prepareForCreate(event);
  let errs = eventStrategy.validate(event, requestVersion);
  // Custom validation passed: the common object-meta validation, after it so that the
  // specific messages show first.
  if (errs.length === 0) errs = validateObjectMetaAccessor(json.metadata, eventStrategy.namespaceScoped, validatePathSegmentName, "metadata");
  if (errs.length) {
    const status = eventInvalidStatus(str(json.metadata.name), errs);
    return { code: 422, message: status.message, status };
  }
  eventStrategy.canonicalize(event);
  return null;
}

// --- Field selectors: pkg/apis/events/selection.go and the events.k8s.io/v1 label conversion ---

// EventToSelectableFields of the internal Event (runtime.DefaultSelectableFields: the
// namespace and the name).
export function EventToSelectableFields(event) {
  const io = objectReference(event.involvedObject ?? {});
  const source = str(event.source?.component) || str(event.reportingController);
  return {
    "involvedObject.kind": io.kind, "involvedObject.namespace": io.namespace, "involvedObject.name": io.name,
    "involvedObject.uid": io.uid, "involvedObject.apiVersion": io.apiVersion,
    "involvedObject.resourceVersion": io.resourceVersion, "involvedObject.fieldPath": io.fieldPath,
    reason: str(event.reason), reportingComponent: str(event.reportingController), source, type: str(event.type),
    "metadata.name": str(event.metadata?.name), "metadata.namespace": str(event.metadata?.namespace),
  };
}

// AddFieldLabelConversionsForEvent (events.k8s.io/v1): the labels a client may select on.
const V1_FIELD_LABELS = {
  reason: "reason", "regarding.kind": "involvedObject.kind", "regarding.namespace": "involvedObject.namespace",
  "regarding.name": "involvedObject.name", "regarding.uid": "involvedObject.uid",
  "regarding.apiVersion": "involvedObject.apiVersion", "regarding.resourceVersion": "involvedObject.resourceVersion",
  "regarding.fieldPath": "involvedObject.fieldPath", reportingController: "reportingComponent", source: "source",
  type: "type", "metadata.namespace": "metadata.namespace", "metadata.name": "metadata.name",
};

// A field selector the list cannot take: the real server answers 400 BadRequest.
export class FieldSelectorError extends Error {}

// A fieldSelector of an events.k8s.io/v1 list, parsed (fields.ParseSelector: terms joined by
// ",", operators "=", "==", "!=") and converted to the internal labels. Throws
// FieldSelectorError for a term it cannot read or a label it does not know.
export function parseEventFieldSelector(selector) {
  const terms = [];
  for (const term of (selector ?? "").split(",").filter(Boolean)) {
    const m = /^([^=!]*)(==|!=|=)(.*)$/.exec(term);
    if (!m) throw new FieldSelectorError(`invalid selector: '${selector}'; can't understand '${term}'`);
    const label = V1_FIELD_LABELS[m[1]];
    if (label === undefined) throw new FieldSelectorError(`field label not supported: ${m[1]}`);
    terms.push({ label, negate: m[2] === "!=", value: m[3] });
  }
  return terms;
}

// Whether a stored events.k8s.io/v1 Event (its JSON) matches parsed field-selector terms.
export function eventMatchesFields(json, terms) {
  const fields = EventToSelectableFields(convertV1EventToCore(decodeEvent(json)));
  return terms.every((t) => (fields[t.label] === t.value) !== t.negate);
}

