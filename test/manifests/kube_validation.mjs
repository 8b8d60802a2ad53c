// kube-apiserver's validation of a resource.k8s.io/v1 ResourceSlice, ported to JavaScript
// rule for rule so that the fake API server (fake_apiserver.mjs) refuses what the real one
// refuses, with the same field paths and messages. Each function names the upstream Go
// function it mirrors; none of the Go code is copied, it is re-expressed here.
//
// What it ports (kubernetes/kubernetes, https://github.com/kubernetes/kubernetes):
//  - pkg/apis/resource/validation/validation.go: ValidateResourceSlice,
//    ValidateResourceSliceUpdate and everything they call (spec, pool, driver and device
//    names, node selection, devices, attributes, capacity and request policies, taints,
//    counters, binding conditions, node allocatable resources, validateSet/Slice/Map).
//  - pkg/apis/resource/types.go: the limits (ResourceSliceMaxDevices and friends).
//  - pkg/apis/core/validation (ValidateObjectMeta, ValidateObjectMetaUpdate,
//    ValidateNodeSelector, ValidateCSIDriverName, the kube finalizer-name check) and
//    staging/src/k8s.io/apimachinery (api/validation/objectmeta.go, util/validation's
//    IsDNS1123Label/IsDNS1123Subdomain/IsQualifiedName/IsValidLabelValue/IsCIdentifier,
//    util/validation/field/errors.go for the error text, api/resource/quantity.go for
//    Quantity, api/errors NewInvalid for the 422 message).
//  - staging/src/k8s.io/apiserver/pkg/registry/rest (BeforeCreate/BeforeUpdate: the
//    generic object-meta checks and the name generator).
//
// Which release it follows. The port follows the newest upstream sources stored for this
// work: validation.go at a kubernetes/kubernetes commit of the 1.38 development cycle
// (it already rejects qualified names with two slashes), validation_resourceslice_test.go
// of the same period, and an older validation.go of the 1.35 cycle (the one that still
// has ResourceSliceMaxDevicesWithTaintsOrConsumesCounters). Exact release-branch copies
// (release-1.34 .. release-1.37) could not be read, so the rules that changed between
// releases are switched on by `release` (RULES below), each with the pull request that
// changed it and how its release was dated (merge date against the code freeze: 1.35
// froze 2025-11, 1.36 on 2026-03-19, 1.37 on 2026-07-23, release 2026-08-26). "1.38"
// (or "main") selects everything the newest source does; the upstream test cases are run
// there. Known gaps, by release:
//  - 1.34: the partitionable-devices rules (sharedCounters, consumesCounters limits) are
//    the 1.35 ones (pull 134189 rewrote them for 1.35); the 1.34 rules were not available.
//    DRAPartitionableDevices is alpha and off in 1.34, so its fields are dropped before
//    validation unless someone turns the gate on. The 64-device limit with taints or
//    counters is applied from 1.34 on (it exists in the 1.35 source; in 1.34 both
//    features are gated off by default, so the limit cannot bite a default 1.34 server).
//  - 1.36: `nodeAllocatableResourceMappings` (the 1.36 alpha shape of node allocatable
//    resources, gate off by default) is not validated; its 1.37 successor
//    `nodeAllocatableResources` is.
//  - Declarative-only rules (validation-gen tags with no handwritten twin) are ported only
//    where the handwritten code says it relies on them: the partitionTypeAttribute name
//    format and the skipNodeOperations enum and uniqueness (approximate messages).
//  - BadValue of Go structs (a DeviceAttribute in "exactly one value must be specified")
//    is printed as JSON of the internal type's field names; the text may differ slightly
//    from Go's json.Marshal of the internal struct. Field path, type and detail match.
//  - Go map iteration is random; errors for attributes/capacity come here in key order.
//
// Usage: ValidateResourceSlice(slice, {release, gates}) and
// ValidateResourceSliceUpdate(slice, oldSlice, {release, gates}) return an array of
// FieldError; String(error) is Go's field.Error.Error(), e.g.
//   spec.devices[0].capacity[shares].requestPolicy.validRange.step: Invalid value: "1": one step 2 is larger than capacity value: 1
// A malformed quantity throws QuantityParseError (the real server answers 400 while
// decoding), and a release whose Go code would panic (a zero validRange.step before 1.37)
// throws GoPanic (the real server answers 500).
// claim_status_validation.mjs reuses what this file exports beyond that (the field.Error
// constructors and field.Path helpers, the object-meta, name, node-selector, set and slice
// checks), rather than repeating them.

// --- Releases and the rules that changed between them -------------------------------------

// The minor release that first has each rule, and where that comes from.
export const RULES = {
  // DeviceTaintEffectNone: pull 134152 "DRA: device taints: new ResourceSlice API, new
  // features" (1.35; its release note introduces the "None" effect).
  taintEffectNone: 35,
  // validateMap reports key errors on the map's path, not on map[key]: pull 134836
  // (Oct 2025), reverted by 135119, re-applied by 136079 (Jan 2026), so 1.36.
  mapKeyErrorsOnMapPath: 36,
  // List-typed attributes (bools/ints/strings/versions), ResourceSliceMaxAttributeValues-
  // PerDevice and the 64-device limit when a slice uses them: pull 137190 (KEP-5491, gate
  // DRAListTypeAttributes alpha in 1.36; issue 137903 cites v1.36.0's
  // ResourceSliceMaxDevicesWithAdvancedFeatures).
  listTypeAttributes: 36,
  // A zero or negative validRange.step is an error (before: Go divides by zero and the
  // server panics): pull 139698, merged 2026-06 (issue 139653), so 1.37. Whether patch
  // releases of 1.34-1.36 got it as a cherry-pick was not verified; here they panic.
  stepMustBePositive: 37,
  // Request-policy rework of pull 140161 (merged July 2026, gate DRAFractionalCapacityRange
  // introduced at 1.37): capacity left unchanged by an update is not validated again,
  // "default is less/more than ..." is reported on validRange.default, validValues are
  // keyed by their exact decimal value when the gate is on, fractional ranges use milli
  // arithmetic. The error-path move is dated by this pull (the 1.35 source has the old
  // paths; no 1.36 copy was available).
  requestPolicyRework: 37,
  // partitionTypeAttribute (pull 140170, July 2026; gate DRAPartitionableDevicesType,
  // alpha in 1.37 per the v1.37 feature-gate reference), skipNodeOperations (gate
  // DRAOptionalNodeOperations, alpha in 1.37) and nodeAllocatableResources in its 1.37
  // shape (mapping/overhead).
  v137Fields: 37,
  // Bounds of step/min/max/default must be within [0, MaxInt64]: pull 140666, opened
  // 2026-07-17, six days before the 1.37 code freeze. Its merge date could not be read;
  // it is placed after 1.37 (uncertain: it may be in 1.37).
  int64BoundGuard: 38,
  // A qualified name with more than one slash is an error: pull 141644 (2026-08/09, after
  // the 1.37 release).
  qualifiedNameOneSlash: 38,
};

export const UPSTREAM_MAIN = "1.38";

function minorOf(release) {
  if (release === undefined || release === "main") return 38;
  const m = /^1\.(\d+)$/.exec(String(release));
  if (!m) throw new Error(`unknown release ${release}`);
  return Number(m[1]);
}

// The release a validation follows ({release, gates}; 1.37 unless named) and which of `rules`
// (the minor release that first has each) it has.
export function releaseContext(opts = {}, rules = RULES) {
  const minor = minorOf(opts.release ?? "1.37");
  return { minor, gates: opts.gates ?? {}, has: (rule) => minor >= rules[rule] };
}
const context = (opts) => releaseContext(opts);

// --- Limits: pkg/apis/resource/types.go -----------------------------------------------------

export const LIMITS = {
  ResourceSliceMaxDevices: 128,
  // Named ResourceSliceMaxDevicesWithTaintsOrConsumesCounters before 1.36.
  ResourceSliceMaxDevicesWithAdvancedFeatures: 64,
  PoolNameMaxLength: 253,
  DriverNameMaxLength: 63,
  BindingConditionsMaxSize: 4,
  BindingFailureConditionsMaxSize: 4,
  ResourceSliceMaxCounterSets: 8,
  ResourceSliceMaxCountersPerCounterSet: 32,
  ResourceSliceMaxDeviceCounterConsumptionsPerDevice: 2,
  ResourceSliceMaxCountersPerDeviceCounterConsumption: 32,
  ResourceSliceMaxAttributesAndCapacitiesPerDevice: 32,
  ResourceSliceMaxAttributeValuesPerDevice: 48,
  DeviceMaxDomainLength: 63,
  DeviceMaxIDLength: 32,
  DeviceAttributeMaxValueLength: 64,
  DeviceTaintsMaxLength: 16,
  CapacityRequestPolicyDiscreteMaxOptions: 10,
  DNS1123LabelMaxLength: 63,
  DNS1123SubdomainMaxLength: 253,
};
const L = LIMITS;
// validation.go attributeAndCapacityMaxKeyLength: domain + "/" + ID.
const attributeAndCapacityMaxKeyLength = L.DeviceMaxDomainLength + 1 + L.DeviceMaxIDLength;

// --- field.Error: staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go ------

const OMIT = Symbol("omitValue");
const TYPE_TEXT = {
  FieldValueNotFound: "Not found", FieldValueRequired: "Required value",
  FieldValueDuplicate: "Duplicate value", FieldValueInvalid: "Invalid value",
  FieldValueNotSupported: "Unsupported value", FieldValueForbidden: "Forbidden",
  FieldValueTooLong: "Too long", FieldValueTooMany: "Too many", FieldValueTooFew: "Too few",
  InternalError: "Internal error", FieldValueTypeInvalid: "Invalid value", FieldValueTooShort: "Too short",
};

// A BadValue that Go prints with its String method (fmt.Stringer): unquoted. Used by
// claim_status_validation.mjs (structured.SharedDeviceID).
export class GoStringer {
  constructor(s) { this.s = s; }
  toString() { return this.s; }
}

// field.Error. `badValue` keeps the JavaScript value; errorBody() renders it as Go does:
// strings quoted (%q), numbers and booleans plain, a GoStringer by its String form,
// anything else as JSON.
export class FieldError {
  constructor(type, field, badValue, detail, origin = "") {
    this.type = type;
    this.field = field;
    this.badValue = badValue;
    this.detail = detail;
    this.origin = origin;
    this.coveredByDeclarative = false;
  }
  withOrigin(origin) { this.origin = origin; return this; }
  markCoveredByDeclarative() { this.coveredByDeclarative = true; return this; }
  // Error.ErrorBody
  errorBody() {
    let s;
    switch (this.type) {
      case "FieldValueRequired": case "FieldValueForbidden": case "FieldValueTooLong":
      case "FieldValueTooShort": case "InternalError":
        s = TYPE_TEXT[this.type];
        break;
      default: {
        const v = this.badValue;
        if (v === OMIT) s = TYPE_TEXT[this.type];
        else if (typeof v === "string") s = `${TYPE_TEXT[this.type]}: ${goQuote(v)}`;
        else if (v instanceof GoStringer) s = `${TYPE_TEXT[this.type]}: ${v.s}`;
        else if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") s = `${TYPE_TEXT[this.type]}: ${v}`;
        else s = `${TYPE_TEXT[this.type]}: ${goJSON(v)}`;
      }
    }
    if (this.detail) s += `: ${this.detail}`;
    return s;
  }
  // Error.Error
  toString() { return `${this.field}: ${this.errorBody()}`; }
}

// The constructors of field/errors.go.
export const required = (field, detail) => new FieldError("FieldValueRequired", field, "", detail);
export const invalid = (field, value, detail) => new FieldError("FieldValueInvalid", field, value, detail);
export const forbidden = (field, detail) => new FieldError("FieldValueForbidden", field, "", detail);
export const duplicate = (field, value) => new FieldError("FieldValueDuplicate", field, value, "");
const notFound = (field, value) => new FieldError("FieldValueNotFound", field, value, "");
// field.NotSupported: the supported values quoted and joined.
export const notSupported = (field, value, valid) => new FieldError("FieldValueNotSupported", field, value,
  valid.length ? "supported values: " + valid.map((v) => goQuote(String(v))).join(", ") : "");
// field.TooLong (and the deprecated TooLongMaxLength, which now calls it): the value is
// never shown.
export const tooLong = (field, maxLength) => new FieldError("FieldValueTooLong", field, "<value omitted>",
  maxLength >= 0 ? `may not be more than ${maxLength} ${maxLength === 1 ? "byte" : "bytes"}` : "value is too long");
// field.TooMany
export const tooMany = (field, actual, max) => new FieldError("FieldValueTooMany", field, actual >= 0 ? actual : OMIT,
  max >= 0 ? `must have at most ${max} ${max === 1 ? "item" : "items"}` : "has too many items");

// field.Path: "spec", Child -> ".name", Index -> "[i]", Key -> "[key]".
export const child = (path, ...names) => names.reduce((p, n) => (p ? `${p}.${n}` : n), path);
export const index = (path, i) => `${path}[${i}]`;
const key = (path, k) => `${path}[${k}]`;

// strconv.Quote (what %q prints for a string).
export function goQuote(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (isPrint(c)) out += ch;
    else if (c === 7) out += "\\a";
    else if (c === 8) out += "\\b";
    else if (c === 12) out += "\\f";
    else if (c === 10) out += "\\n";
    else if (c === 13) out += "\\r";
    else if (c === 9) out += "\\t";
    else if (c === 11) out += "\\v";
    else if (c < 0x80) out += "\\x" + c.toString(16).padStart(2, "0");
    else if (c < 0x10000) out += "\\u" + c.toString(16).padStart(4, "0");
    else out += "\\U" + c.toString(16).padStart(8, "0");
  }
  return out + '"';
}

// unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
function isPrint(c) {
  if (c === 0x20) return true;
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(String.fromCodePoint(c));
}

// encoding/json.Marshal: map keys sorted, <, > and & escaped.
export function goJSON(v) {
  const sort = (x) => {
    if (Array.isArray(x)) return x.map(sort);
    if (x && typeof x === "object" && !(x instanceof GoStruct)) {
      return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort(x[k])]));
    }
    if (x instanceof GoStruct) return Object.fromEntries(x.fields.map(([k, val]) => [k, sort(val)]));
    return x;
  };
  const text = JSON.stringify(v === undefined ? null : sort(v), (_, x) => (typeof x === "bigint" ? Number(x) : x));
  return text.replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

// A Go struct as a BadValue: fields in declaration order, every field present.
class GoStruct {
  constructor(fields) { this.fields = fields; }
}

// The internal resource.DeviceAttribute as json.Marshal prints it (no json tags in
// pkg/apis/resource, so Go field names and nulls).
function deviceAttributeValue(attr, ctx) {
  const fields = [["IntValue", attr.int ?? null], ["BoolValue", attr.bool ?? null],
    ["StringValue", attr.string ?? null], ["VersionValue", attr.version ?? null]];
  if (ctx.has("listTypeAttributes")) {
    fields.push(["IntValues", attr.ints ?? null], ["BoolValues", attr.bools ?? null],
      ["StringValues", attr.strings ?? null], ["VersionValues", attr.versions ?? null]);
  }
  return new GoStruct(fields);
}

// A Go panic inside validation: the real server answers 500.
export class GoPanic extends Error {}

// --- Small helpers over the JSON form -------------------------------------------------------

// Go's len() of a string is its UTF-8 byte count.
const blen = (s) => Buffer.byteLength(s, "utf8");
// A pointer or slice/map that Go would see as non-nil: present and not JSON null.
const isSet = (v) => v !== undefined && v !== null;
const len = (v) => (Array.isArray(v) ? v.length : v && typeof v === "object" ? Object.keys(v).length : 0);
const entries = (m) => (m && typeof m === "object" ? Object.entries(m) : []);
const list = (v) => (Array.isArray(v) ? v : []);

// --- k8s.io/apimachinery/pkg/util/validation (content) ------------------------------------

const qualifiedNameCharFmt = "[A-Za-z0-9]";
const qualifiedNameExtCharFmt = "[-A-Za-z0-9_.]";
const qualifiedNameFmt = `(${qualifiedNameCharFmt}${qualifiedNameExtCharFmt}*)?${qualifiedNameCharFmt}`;
const qualifiedNameErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const qualifiedNameMaxLength = 63;
const labelValueFmt = `(${qualifiedNameFmt})?`;
const labelValueErrMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LabelValueMaxLength = 63;
const dns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const dns1123LabelErrMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const cIdentifierFmt = "[A-Za-z_][A-Za-z0-9_]*";
const cIdentifierErrMsg = "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'";
const anchored = (fmt) => new RegExp(`^(?:${fmt})$`);
const qualifiedNameRe = anchored(qualifiedNameFmt);
const labelValueRe = anchored(labelValueFmt);
const dns1123LabelRe = anchored(dns1123LabelFmt);
const dns1123SubdomainRe = anchored(dns1123SubdomainFmt);
const cIdentifierRe = anchored(cIdentifierFmt);

// MaxLenError, EmptyError, RegexError
const maxLenError = (n) => `must be no more than ${n} characters`;
const emptyError = () => "must be non-empty";
export function regexError(msg, fmt, ...examples) {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let s = `${msg} (e.g. `;
  examples.forEach((e, i) => { s += `${i > 0 ? " or " : ""}'${e}', `; });
  return `${s}regex used for validation is '${fmt}')`;
}

// IsQualifiedName
export function isQualifiedName(value) {
  const errs = [];
  const parts = value.split("/");
  let name;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errs.push("prefix part " + emptyError());
    else for (const m of isDNS1123Subdomain(prefix)) errs.push("prefix part " + m);
  } else {
    return ["a qualified name " + regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc") +
      " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"];
  }
  if (name.length === 0) errs.push("name part " + emptyError());
  else if (blen(name) > qualifiedNameMaxLength) errs.push("name part " + maxLenError(qualifiedNameMaxLength));
  if (!qualifiedNameRe.test(name)) errs.push("name part " + regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"));
  return errs;
}

// IsValidLabelValue
export function isValidLabelValue(value) {
  const errs = [];
  if (blen(value) > LabelValueMaxLength) errs.push(maxLenError(LabelValueMaxLength));
  if (!labelValueRe.test(value)) errs.push(regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"));
  return errs;
}

// IsDNS1123Label
export function isDNS1123Label(value) {
  const errs = [];
  if (blen(value) > L.DNS1123LabelMaxLength) errs.push(maxLenError(L.DNS1123LabelMaxLength));
  if (!dns1123LabelRe.test(value)) errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"));
  return errs;
}

// IsDNS1123Subdomain
export function isDNS1123Subdomain(value) {
  const errs = [];
  if (blen(value) > L.DNS1123SubdomainMaxLength) errs.push(maxLenError(L.DNS1123SubdomainMaxLength));
  if (!dns1123SubdomainRe.test(value)) errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, "example.com"));
  return errs;
}

// IsCIdentifier
export function isCIdentifier(value) {
  return cIdentifierRe.test(value) ? [] : [regexError(cIdentifierErrMsg, cIdentifierFmt, "my_name", "MY_NAME", "MyName")];
}

// --- resource.Quantity: staging/src/k8s.io/apimachinery/pkg/api/resource ------------------
//
// Go keeps a Quantity either as int64Amount{value, scale} (value × 10^scale) or as an
// inf.Dec (unscaled × 10^-scale); which one matters for Value() when a number overflows
// int64, so both are kept here: `i` = {value, scale} or `d` = {unscaled, scale}, BigInt.

const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);
const wrap64 = (x) => BigInt.asIntN(64, x);
const fits64 = (x) => x >= MIN_INT64 && x <= MAX_INT64;
const pow10 = (n) => 10n ** BigInt(n);

export class QuantityParseError extends Error {}
const ErrFormatWrong = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const ErrNumeric = "unable to parse quantity's numeric part";
const ErrSuffix = "unable to parse quantity's suffix";

const DEC_SUFFIXES = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BIN_SUFFIXES = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DEC_BY_EXP = Object.fromEntries(Object.entries(DEC_SUFFIXES).map(([s, e]) => [e, s]));
const BIN_BY_EXP = Object.fromEntries(Object.entries(BIN_SUFFIXES).map(([s, e]) => [e, s]));

// int64MultiplyScale (and its 10/100/1000 variants): the wrapped product and whether it
// did not overflow.
function mulScale(a, b) {
  if (a === 0n || a === 1n) return [wrap64(a * b), true];
  if (a === MIN_INT64 && b !== 1n) return [0n, false];
  const c = wrap64(a * b);
  return [c, c / b === a];
}

// positiveScaleInt64
function positiveScaleInt64(base, scale) {
  switch (scale) {
    case 0: return [base, true];
    case 1: return mulScale(base, 10n);
    case 2: return mulScale(base, 100n);
    case 3: return mulScale(base, 1000n);
    case 6: return mulScale(base, 1000000n);
    case 9: return mulScale(base, 1000000000n);
    default: {
      let value = base;
      for (let i = 0; i < scale; i++) {
        let ok;
        [value, ok] = mulScale(value, 10n);
        if (!ok) return [0n, false];
      }
      return [value, true];
    }
  }
}

// negativeScaleInt64: divides by 10^scale, rounding away from zero.
function negativeScaleInt64(base, scale) {
  if (scale === 0) return [base, true];
  let value = base;
  let fraction = false;
  for (let i = 0; i < scale; i++) {
    if (!fraction && value % 10n !== 0n) fraction = true;
    value /= 10n;
    if (value === 0n) {
      if (fraction) return [base > 0n ? 1n : -1n, false];
      return [0n, true];
    }
  }
  if (fraction) value += base > 0n ? 1n : -1n;
  return [value, !fraction];
}

// int64Amount.AsScaledInt64
function asScaledInt64(a, scale) {
  if (a.scale < scale) return [negativeScaleInt64(a.value, scale - a.scale)[0], true];
  return positiveScaleInt64(a.value, a.scale - scale);
}

// scaledValue (the inf.Dec branch of ScaledValue): always rounds up when scaling down, and
// converts with big.Int.Int64(), which keeps the low 64 bits.
function decScaledValue(unscaled, scale, newScale) {
  const dif = scale - newScale;
  if (dif === 0) return wrap64(unscaled);
  if (dif < 0) return wrap64(wrap64(unscaled) * pow10(-dif));
  const divisor = pow10(dif);
  if (unscaled < MAX_INT64 && dif < 19) {
    const u = wrap64(unscaled);
    const result = u / divisor;
    return u % divisor !== 0n ? wrap64(result + 1n) : result;
  }
  // big.Int.DivMod is Euclidean.
  let q = unscaled / divisor;
  let r = unscaled % divisor;
  if (r < 0n) { q -= 1n; r += divisor; }
  return r !== 0n ? wrap64(wrap64(q) + 1n) : wrap64(q);
}

// int64Amount.Add
function int64AmountAdd(a, b) {
  if (b.value === 0n) return { ...a };
  if (a.value === 0n) return { ...b };
  if (a.scale === b.scale) {
    const c = a.value + b.value;
    return fits64(c) ? { value: c, scale: a.scale } : null;
  }
  if (a.scale > b.scale) {
    const [c, ok] = positiveScaleInt64(a.value, a.scale - b.scale);
    if (!ok || !fits64(c + b.value)) return null;
    return { value: c + b.value, scale: b.scale };
  }
  const [c, ok] = positiveScaleInt64(b.value, b.scale - a.scale);
  if (!ok || !fits64(a.value + c)) return null;
  return { value: a.value + c, scale: a.scale };
}

// inf.Dec.Add
function decAdd(x, y) {
  const s = Math.max(x.scale, y.scale);
  return { unscaled: x.unscaled * pow10(s - x.scale) + y.unscaled * pow10(s - y.scale), scale: s };
}

// The exact value as (mantissa, exponent): mantissa × 10^exponent.
function exact(q) {
  return q.d ? [q.d.unscaled, -q.d.scale] : [q.i.value, q.i.scale];
}

function cmpExact([am, ae], [bm, be]) {
  const e = Math.min(ae, be);
  const a = am * pow10(ae - e);
  const b = bm * pow10(be - e);
  return a < b ? -1 : a > b ? 1 : 0;
}

export class Quantity {
  constructor({ i = null, d = null, format = "DecimalSI", s = "" }) {
    this.i = i;
    this.d = d;
    this.format = format;
    this.s = s;
  }
  copy() { return new Quantity({ i: this.i && { ...this.i }, d: this.d && { ...this.d }, format: this.format, s: this.s }); }
  // IsZero, Sign, Cmp, CmpInt64
  isZero() { return exact(this)[0] === 0n; }
  sign() { const m = exact(this)[0]; return m > 0n ? 1 : m < 0n ? -1 : 0; }
  cmp(y) { return cmpExact(exact(this), exact(y)); }
  cmpInt64(n) { return cmpExact(exact(this), [BigInt(n), 0]); }
  // AsDec
  asDec() { return this.d ? { ...this.d } : { unscaled: this.i.value, scale: -this.i.scale }; }
  // Add: Go mutates; this returns the sum of a copy.
  add(y) {
    const q = this.copy();
    q.s = "";
    if (q.i && y.i) {
      if (q.i.value === 0n) q.format = y.format;
      const sum = int64AmountAdd(q.i, y.i);
      if (sum) { q.i = sum; return q; }
    } else if (q.isZero()) {
      q.format = y.format;
    }
    q.d = decAdd(q.asDec(), y.asDec());
    q.i = null;
    return q;
  }
  // Sub: as Add, on a copy.
  sub(y) {
    const q = this.copy();
    q.s = "";
    const neg = y.i ? new Quantity({ i: { value: -y.i.value, scale: y.i.scale }, format: y.format })
      : new Quantity({ d: { unscaled: -y.d.unscaled, scale: y.d.scale }, format: y.format });
    if (q.isZero()) {
      q.format = y.format;
      q.d = neg.asDec();
      q.i = null;
      return q;
    }
    if (q.i && y.i) {
      const sum = int64AmountAdd(q.i, neg.i);
      if (sum) { q.i = sum; return q; }
    }
    q.d = decAdd(q.asDec(), neg.asDec());
    q.i = null;
    return q;
  }
  // ScaledValue, Value, MilliValue (BigInt, int64 semantics).
  scaledValue(scale) {
    if (this.d) return decScaledValue(this.d.unscaled, this.d.scale, -scale);
    return asScaledInt64(this.i, scale)[0];
  }
  value() { return this.scaledValue(0); }
  milliValue() { return this.scaledValue(-3); }
  // The exact decimal, without trailing zeros ("5.0" and "5" alike).
  decimalString() {
    let [m, e] = exact(this);
    if (m === 0n) return "0";
    while (e < 0 && m % 10n === 0n) { m /= 10n; e++; }
    if (e >= 0) return (m * pow10(e)).toString();
    const neg = m < 0n;
    const digits = (neg ? -m : m).toString().padStart(-e + 1, "0");
    return `${neg ? "-" : ""}${digits.slice(0, digits.length + e)}.${digits.slice(digits.length + e)}`;
  }
  // isFractionalQuantity (validation.go): has sub-integer precision.
  isFractional() {
    const [m, e] = exact(this);
    return e < 0 && m % pow10(-e) !== 0n;
  }
  // String / CanonicalizeBytes
  toString() {
    if (this.s) return this.s;
    if (this.isZero()) return "0";
    let format = this.format;
    let rounded = null;
    if (format === "BinarySI") {
      if (this.cmpInt64(-1024) > 0 && this.cmpInt64(1024) < 0) {
        format = "DecimalSI";
      } else {
        const [r, exactScale] = this.asScale0();
        if (!exactScale) format = "DecimalSI";
        else rounded = r;
      }
    } else if (format !== "DecimalSI" && format !== "DecimalExponent") {
      format = "DecimalExponent";
    }
    if (format !== "BinarySI") {
      // AsCanonicalBytes: factors of ten into the exponent, exponent a multiple of 3.
      let [m, e] = exact(this);
      while (m !== 0n && m % 10n === 0n) { m /= 10n; e++; }
      while (e % 3 !== 0) { m *= 10n; e--; }
      const suffix = format === "DecimalSI" ? DEC_BY_EXP[e] ?? "" : e === 0 ? "" : `e${e}`;
      return m.toString() + suffix;
    }
    // AsCanonicalBase1024Bytes
    let n = rounded;
    let times = 0;
    while (n !== 0n && n % 1024n === 0n) { n /= 1024n; times++; }
    return n.toString() + (BIN_BY_EXP[times * 10] ?? "");
  }
  // AsScale(0): the integer value rounded away from zero, and whether that was exact.
  asScale0() {
    const [m, e] = exact(this);
    if (e >= 0) return [m * pow10(e), true];
    const [v, ok] = negativeScaleInt64Big(m, -e);
    return [v, ok];
  }
  toJSON() { return this.toString(); }
}

// Rounding away from zero for arbitrary sizes (inf.Dec.Round with RoundUp to scale 0).
function negativeScaleInt64Big(m, scale) {
  const d = pow10(scale);
  const q = m / d;
  const r = m % d;
  if (r === 0n) return [q, true];
  return [q + (m > 0n ? 1n : -1n), false];
}

// resource.NewQuantity / NewMilliQuantity
export const newQuantity = (value, format = "DecimalSI") => new Quantity({ i: { value: BigInt(value), scale: 0 }, format });
export const newMilliQuantity = (value, format = "DecimalSI") => new Quantity({ i: { value: BigInt(value), scale: -3 }, format });

// parseQuantityString
function parseQuantityString(str) {
  let positive = true;
  let pos = 0;
  const end = str.length;
  let num = "";
  let denom = "";
  let value = "";
  if (pos < end) {
    if (str[0] === "-") { positive = false; pos++; } else if (str[0] === "+") { pos++; }
  }
  const isDigit = (c) => c >= "0" && c <= "9";
  // strip leading zeros
  for (let i = pos; ; i++) {
    if (i >= end) return { positive, value: "0", num: "0", denom: "", suffix: "" };
    if (str[i] === "0") pos++;
    else break;
  }
  // the numerator
  for (let i = pos; ; i++) {
    if (i >= end) return { positive, value: str.slice(0, end), num: str.slice(pos, end), denom: "", suffix: "" };
    if (!isDigit(str[i])) { num = str.slice(pos, i); pos = i; break; }
  }
  if (num.length === 0) num = "0";
  // the denominator
  if (pos < end && str[pos] === ".") {
    pos++;
    for (let i = pos; ; i++) {
      if (i >= end) return { positive, value: str.slice(0, end), num, denom: str.slice(pos, end), suffix: "" };
      if (!isDigit(str[i])) { denom = str.slice(pos, i); pos = i; break; }
    }
  }
  value = str.slice(0, pos);
  // the suffix
  const suffixStart = pos;
  for (let i = pos; ; i++) {
    if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart, end) };
    if (!"eEinumkKMGTP".includes(str[i])) { pos = i; break; }
  }
  if (pos < end && (str[pos] === "-" || str[pos] === "+")) pos++;
  for (let i = pos; ; i++) {
    if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart, end) };
    if (!isDigit(str[i])) break;
  }
  throw new QuantityParseError(ErrFormatWrong);
}

// suffixer.interpret
function interpretSuffix(suffix) {
  if (Object.hasOwn(DEC_SUFFIXES, suffix)) return { base: 10, exponent: DEC_SUFFIXES[suffix], format: "DecimalSI" };
  if (Object.hasOwn(BIN_SUFFIXES, suffix)) return { base: 2, exponent: BIN_SUFFIXES[suffix], format: "BinarySI" };
  if (suffix.length > 1 && (suffix[0] === "E" || suffix[0] === "e")) {
    const rest = suffix.slice(1);
    if (/^[+-]?\d+$/.test(rest)) {
      const n = Number(rest);
      if (n >= -(2 ** 31) && n < 2 ** 31) return { base: 10, exponent: n, format: "DecimalExponent" };
    }
  }
  return null;
}

// ParseQuantity
export function parseQuantity(str) {
  if (str.length === 0) throw new QuantityParseError(ErrFormatWrong);
  if (str === "0") return new Quantity({ i: { value: 0n, scale: 0 }, format: "DecimalSI", s: str });
  const { positive, value, num, denom, suffix } = parseQuantityString(str);
  const suf = interpretSuffix(suffix);
  if (!suf) throw new QuantityParseError(ErrSuffix);
  const { base, exponent } = suf;
  let format = suf.format;
  let precision = 0;
  let scale = 0;
  let mantissa = 1n;
  if (format === "DecimalExponent" || format === "DecimalSI") {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  } else if (exponent >= 0 && denom.length === 0) {
    mantissa = 1n << BigInt(exponent);
    precision = 15 - num.length - Math.trunc(Math.fround(exponent * 3 / 10)) - 1;
  } else {
    precision = -1;
  }
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= -9) {
      const shifted = num + denom;
      const v = BigInt(shifted);
      const product = v * mantissa;
      if (fits64(product)) {
        const result = positive ? product : -product;
        let canonical = false;
        if (format === "BinarySI") canonical = exponent % 10 === 0 && (v & 7n) !== 0n;
        else canonical = scale % 3 === 0 && !shifted.endsWith("000") && shifted[0] !== "0";
        return new Quantity({ i: { value: result, scale }, format, s: canonical ? str : "" });
      }
    }
  }
  // The inf.Dec path.
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(value);
  if (!m || (m[2] + (m[3] ?? "")).length === 0) throw new QuantityParseError(ErrNumeric);
  let unscaled = BigInt((m[2] + (m[3] ?? "")) || "0") * (m[1] === "-" ? -1n : 1n);
  let decScale = (m[3] ?? "").length;
  if (base === 10) decScale -= exponent;
  else unscaled *= 1n << BigInt(exponent);
  const negative = unscaled < 0n;
  if (negative) unscaled = -unscaled;
  if (unscaled !== 0n) {
    // Round up to nano precision.
    if (decScale <= 9) {
      unscaled *= pow10(9 - decScale);
    } else {
      const d = pow10(decScale - 9);
      unscaled = unscaled / d + (unscaled % d !== 0n ? 1n : 0n);
    }
    decScale = 9;
  }
  if (format === "BinarySI" && cmpExact([unscaled, -decScale], [MAX_INT64, 0]) > 0) {
    unscaled = MAX_INT64;
    decScale = 0;
  }
  if (format === "BinarySI" && cmpExact([unscaled, -decScale], [1n, 0]) < 0 && unscaled > 0n) format = "DecimalSI";
  if (negative) unscaled = -unscaled;
  return new Quantity({ d: { unscaled, scale: decScale }, format });
}

// Quantity.UnmarshalJSON: a JSON string or number; surrounding spaces are trimmed.
export function quantityFromJSON(v) {
  if (v === null || v === undefined) return new Quantity({ i: { value: 0n, scale: 0 } });
  if (v instanceof Quantity) return v;
  if (typeof v === "number") return parseQuantity(String(v));
  if (typeof v !== "string") throw new QuantityParseError(ErrFormatWrong);
  return parseQuantity(v.trim());
}
const q = quantityFromJSON;

// Decoding: every quantity in a slice must parse, or the server answers 400 before any
// validation runs. Throws QuantityParseError naming the field.
export function checkQuantities(slice) {
  const at = (v, where) => {
    if (!isSet(v)) return;
    try {
      quantityFromJSON(v);
    } catch (e) {
      if (e instanceof QuantityParseError) throw new QuantityParseError(`${where}: ${e.message}`);
      throw e;
    }
  };
  const spec = slice?.spec ?? {};
  list(spec.devices).forEach((d, i) => {
    const p = `spec.devices[${i}]`;
    for (const [k, c] of entries(d?.capacity)) {
      at(c?.value, `${p}.capacity[${k}].value`);
      const rp = c?.requestPolicy;
      at(rp?.default, `${p}.capacity[${k}].requestPolicy.default`);
      list(rp?.validValues).forEach((v, j) => at(v, `${p}.capacity[${k}].requestPolicy.validValues[${j}]`));
      for (const f of ["min", "max", "step"]) at(rp?.validRange?.[f], `${p}.capacity[${k}].requestPolicy.validRange.${f}`);
    }
    list(d?.consumesCounters).forEach((cc, j) => {
      for (const [k, c] of entries(cc?.counters)) at(c?.value, `${p}.consumesCounters[${j}].counters[${k}].value`);
    });
    for (const [k, r] of entries(d?.nodeAllocatableResources)) {
      for (const f of ["capacityMultiplier", "deviceMultiplier"]) at(r?.mapping?.[f], `${p}.nodeAllocatableResources[${k}].mapping.${f}`);
      for (const f of ["perPod", "perContainer"]) at(r?.overhead?.[f], `${p}.nodeAllocatableResources[${k}].overhead.${f}`);
    }
    for (const [k, r] of entries(d?.nodeAllocatableResourceMappings)) {
      at(r?.allocationMultiplier, `${p}.nodeAllocatableResourceMappings[${k}].allocationMultiplier`);
    }
  });
  list(spec.sharedCounters).forEach((cs, i) => {
    for (const [k, c] of entries(cs?.counters)) at(c?.value, `spec.sharedCounters[${i}].counters[${k}].value`);
  });
}

// --- Semantic equality (apiequality.Semantic.DeepEqual) -----------------------------------
// Quantities compare by value, times by instant, nil and empty slices/maps alike.

function normalize(v, kind) {
  if (v === undefined || v === null) return undefined;
  if (kind === "quantity") return { $q: quantityFromJSON(v).decimalString() };
  if (kind === "time") return { $t: Date.parse(v) };
  if (Array.isArray(v)) {
    const out = v.map((x) => normalize(x, kind?.item));
    return out.length ? out : undefined;
  }
  if (typeof v === "object") {
    const out = {};
    for (const k of Object.keys(v).sort()) {
      const sub = kind?.map ? kind.map : kind?.fields?.[k];
      const n = normalize(v[k], sub);
      if (n !== undefined) out[k] = n;
    }
    if (kind?.map && Object.keys(out).length === 0) return undefined;
    return out;
  }
  return v;
}

const QUANTITY = "quantity";
const CAPACITY = { map: { fields: { value: QUANTITY, requestPolicy: { fields: {
  default: QUANTITY, validValues: { item: QUANTITY },
  validRange: { fields: { min: QUANTITY, max: QUANTITY, step: QUANTITY } } } } } } };
const COUNTERS = { map: { fields: { value: QUANTITY } } };
const TAINTS = { item: { fields: { timeAdded: "time" } } };
const DEVICE = { fields: {
  attributes: { map: {} }, capacity: CAPACITY, taints: TAINTS,
  consumesCounters: { item: { fields: { counters: COUNTERS } } },
  nodeAllocatableResources: { map: { fields: {
    mapping: { fields: { capacityMultiplier: QUANTITY, deviceMultiplier: QUANTITY } },
    overhead: { fields: { perPod: QUANTITY, perContainer: QUANTITY } } } } },
  nodeAllocatableResourceMappings: { map: { fields: { allocationMultiplier: QUANTITY } } },
} };
const SPEC = { fields: { devices: { item: DEVICE }, sharedCounters: { item: { fields: { counters: COUNTERS } } } } };

export function semanticEqual(a, b, kind) {
  return JSON.stringify(normalize(a, kind)) === JSON.stringify(normalize(b, kind));
}
export const semanticEqualSpec = (a, b) => semanticEqual(a, b, SPEC);

// apimachinery ValidateImmutableField
function validateImmutableField(newVal, oldVal, path, kind) {
  return semanticEqual(newVal, oldVal, kind) ? [] : [invalid(path, newVal ?? null, "field is immutable")];
}

// --- Object meta: apimachinery api/validation/objectmeta.go + core validation -------------

// NameIsDNSSubdomain (with maskTrailingDash for a generateName prefix)
function nameIsDNSSubdomain(name, prefix) {
  if (prefix && name.length > 1 && name.endsWith("-")) name = name.slice(0, name.length - 2) + "a";
  return isDNS1123Subdomain(name);
}

// path.ValidatePathSegmentName (the generic registry's name check)
function validatePathSegmentName(name, prefix) {
  if (!prefix) {
    for (const bad of [".", ".."]) if (name === bad) return [`may not be '${bad}'`];
  }
  return ["/", "%"].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

// metav1 validation ValidateLabelName
export function validateLabelName(name, path) {
  return isQualifiedName(name ?? "").map((m) => invalid(path, name ?? "", m));
}

// metav1 validation ValidateLabels
function validateLabels(labels, path) {
  const errs = [];
  for (const [k, v] of entries(labels)) {
    errs.push(...validateLabelName(k, path));
    for (const m of isValidLabelValue(String(v ?? ""))) errs.push(invalid(path, String(v ?? ""), m));
  }
  return errs;
}

// apimachinery ValidateAnnotations (TotalAnnotationSizeLimitB = 256 KiB)
function validateAnnotations(annotations, path) {
  const errs = [];
  let size = 0;
  for (const [k, v] of entries(annotations)) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(path, k, m));
    size += blen(k) + blen(String(v ?? ""));
  }
  if (size > 256 * 1024) errs.push(tooLong(path, 256 * 1024));
  return errs;
}

// apimachinery ValidateOwnerReferences / validateOwnerReference
function validateOwnerReferences(refs, path) {
  const errs = [];
  let firstController = "";
  for (const ref of list(refs)) {
    const apiVersion = ref?.apiVersion ?? "";
    const parts = apiVersion.split("/");
    const version = apiVersion === "" || parts.length > 2 ? "" : parts[parts.length - 1];
    const group = parts.length === 2 ? parts[0] : "";
    if (!version) errs.push(invalid(child(path, "apiVersion"), apiVersion, "version must not be empty"));
    if (!ref?.kind) errs.push(invalid(child(path, "kind"), ref?.kind ?? "", "kind must not be empty"));
    if (!ref?.name) errs.push(invalid(child(path, "name"), ref?.name ?? "", "name must not be empty"));
    if (!ref?.uid) errs.push(invalid(child(path, "uid"), ref?.uid ?? "", "uid must not be empty"));
    if (group === "" && version === "v1" && ref?.kind === "Event") {
      errs.push(invalid(path, ref, "/v1, Kind=Event is disallowed from being an owner"));
    }
    if (ref?.controller === true) {
      const current = `${ref.kind}/${ref.name}`;
      if (firstController) {
        errs.push(invalid(path, refs, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`));
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

// apimachinery ValidateFinalizers (+ ValidateFinalizerName)
function validateFinalizers(finalizers, path) {
  const errs = [];
  for (const f of list(finalizers)) for (const m of isQualifiedName(f)) errs.push(invalid(path, f, m));
  const all = list(finalizers);
  if (all.includes("orphan") && all.includes("foregroundDeletion")) {
    errs.push(invalid(path, all, "finalizer orphan and foregroundDeletion cannot be both set"));
  }
  return errs;
}

// core validation validateKubeFinalizerName: a name without a domain must be a standard one.
function validateKubeFinalizerNames(finalizers, path) {
  const standard = ["kubernetes", "orphan", "foregroundDeletion"];
  return list(finalizers).flatMap((f, i) => (f.split("/").length === 1 && !standard.includes(f)
    ? [invalid(index(path, i), f, "name is neither a standard finalizer name nor is it fully qualified")] : []));
}

// metav1 validation ValidateFieldManager: at most 128 bytes, printable characters only.
// `manager` is a string.
export function validateFieldManager(manager, path) {
  const errs = [];
  if (blen(manager) > 128) errs.push(tooLong(path, 128));
  let at = 0;
  for (const ch of manager) {
    const c = ch.codePointAt(0);
    if (!isPrint(c)) {
      errs.push(invalid(path, manager, `invalid character U+${c.toString(16).toUpperCase().padStart(4, "0")} (at position ${at})`));
    }
    at += blen(ch);
  }
  return errs;
}

// metav1 validation ValidateManagedFields
function validateManagedFields(fields, path) {
  const errs = [];
  list(fields).forEach((f, i) => {
    const p = index(path, i);
    if (f?.operation !== "Apply" && f?.operation !== "Update") {
      errs.push(invalid(child(p, "operation"), f?.operation ?? "", "must be `Apply` or `Update`"));
    }
    if (f?.fieldsType && f.fieldsType !== "FieldsV1") errs.push(invalid(child(p, "fieldsType"), f.fieldsType, "must be `FieldsV1`"));
    errs.push(...validateFieldManager(f?.manager ?? "", child(p, "manager")));
    if (blen(f?.subresource ?? "") > 256) errs.push(tooLong(child(p, "subresource"), 256));
  });
  return errs;
}

// apimachinery ValidateObjectMetaAccessor with requiresNamespace=false (a cluster-scoped type)
function validateObjectMetaAccessor(meta, nameFn, path, requiresNamespace = false) {
  const errs = [];
  const m = meta ?? {};
  if (m.generateName) {
    for (const msg of nameFn(m.generateName, true)) errs.push(invalid(child(path, "generateName"), m.generateName, msg));
  }
  if (!m.name) {
    errs.push(required(child(path, "name"), "name or generateName is required"));
  } else {
    for (const msg of nameFn(m.name, false)) errs.push(invalid(child(path, "name"), m.name, msg));
  }
  if (requiresNamespace) {
    // ValidateNamespaceName: a DNS label.
    if (!m.namespace) errs.push(required(child(path, "namespace"), ""));
    else for (const msg of isDNS1123Label(m.namespace)) errs.push(invalid(child(path, "namespace"), m.namespace, msg));
  } else if (m.namespace) {
    errs.push(forbidden(child(path, "namespace"), "not allowed on this type"));
  }
  if ((m.generation ?? 0) < 0) errs.push(invalid(child(path, "generation"), m.generation, "must be greater than or equal to 0"));
  errs.push(...validateLabels(m.labels, child(path, "labels")));
  errs.push(...validateAnnotations(m.annotations, child(path, "annotations")));
  errs.push(...validateOwnerReferences(m.ownerReferences, child(path, "ownerReferences")));
  errs.push(...validateFinalizers(m.finalizers, child(path, "finalizers")));
  errs.push(...validateManagedFields(m.managedFields, child(path, "managedFields")));
  return errs;
}

// core validation ValidateObjectMeta (for ValidateResourceSlice: NameIsDNSSubdomain)
function validateObjectMeta(meta, path) {
  return [...validateObjectMetaAccessor(meta, nameIsDNSSubdomain, path),
    ...validateKubeFinalizerNames(meta?.finalizers, child(path, "finalizers"))];
}

// apimachinery ValidateObjectMetaAccessorUpdate
export function validateObjectMetaAccessorUpdate(meta, old, path) {
  const errs = [];
  const n = meta ?? {};
  const o = old ?? {};
  if (isSet(o.deletionTimestamp)) {
    const extra = [...new Set(list(n.finalizers))].filter((f) => !list(o.finalizers).includes(f)).sort();
    if (extra.length) {
      errs.push(forbidden(child(path, "finalizers"),
        `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra.map(goQuote).join(", ")}}`));
    }
  }
  if (!n.resourceVersion) errs.push(invalid(child(path, "resourceVersion"), n.resourceVersion ?? "", "must be specified for an update"));
  if ((n.generation ?? 0) < (o.generation ?? 0)) errs.push(invalid(child(path, "generation"), n.generation ?? 0, "must not be decremented"));
  errs.push(...validateImmutableField(n.name ?? "", o.name ?? "", child(path, "name")));
  errs.push(...validateImmutableField(n.namespace ?? "", o.namespace ?? "", child(path, "namespace")));
  errs.push(...validateImmutableField(n.uid ?? "", o.uid ?? "", child(path, "uid")));
  errs.push(...validateImmutableField(n.creationTimestamp, o.creationTimestamp, child(path, "creationTimestamp"), "time"));
  errs.push(...validateImmutableField(n.deletionTimestamp, o.deletionTimestamp, child(path, "deletionTimestamp"), "time"));
  errs.push(...validateImmutableField(n.deletionGracePeriodSeconds, o.deletionGracePeriodSeconds, child(path, "deletionGracePeriodSeconds")));
  errs.push(...validateLabels(n.labels, child(path, "labels")));
  errs.push(...validateAnnotations(n.annotations, child(path, "annotations")));
  errs.push(...validateOwnerReferences(n.ownerReferences, child(path, "ownerReferences")));
  errs.push(...validateManagedFields(n.managedFields, child(path, "managedFields")));
  return errs;
}

// core validation ValidateObjectMetaUpdate
function validateObjectMetaUpdate(meta, old, path) {
  return [...validateObjectMetaAccessorUpdate(meta, old, path),
    ...validateKubeFinalizerNames(meta?.finalizers, child(path, "finalizers"))];
}

// --- Core validation helpers used by the resource validation ------------------------------

// core validation ValidateDNS1123Label / ValidateDNS1123Subdomain
export const validateDNS1123Label = (value, path) => isDNS1123Label(value).map((m) => invalid(path, value, m));
const validateDNS1123Subdomain = (value, path) => isDNS1123Subdomain(value).map((m) => invalid(path, value, m));

// core validation ValidateCSIDriverName (validation.go's validateDriverName). With
// `emptyOnlyRequired` (its newer form, see claim_status_validation.mjs's CLAIM_RULES) an
// empty name is only Required.
export function validateDriverName(name, path, emptyOnlyRequired = false) {
  const errs = [];
  if (name.length === 0) {
    errs.push(required(path, ""));
    if (emptyOnlyRequired) return errs;
  }
  if (blen(name) > L.DriverNameMaxLength) errs.push(tooLong(path, L.DriverNameMaxLength));
  for (const m of isDNS1123Subdomain(name.toLowerCase())) errs.push(invalid(path, name, m));
  return errs;
}
const validateDeviceName = validateDNS1123Label;
const validateCounterName = validateDNS1123Label;

// core validation ValidateNodeSelectorRequirement
function validateNodeSelectorRequirement(rq, path) {
  const errs = [];
  const values = list(rq?.values);
  switch (rq?.operator) {
    case "In": case "NotIn":
      if (values.length === 0) errs.push(required(child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case "Exists": case "DoesNotExist":
      if (values.length > 0) errs.push(forbidden(child(path, "values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    case "Gt": case "Lt":
      if (values.length !== 1) errs.push(required(child(path, "values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      break;
    default:
      errs.push(invalid(child(path, "operator"), rq?.operator ?? "", "not a valid selector operator"));
  }
  errs.push(...validateLabelName(rq?.key ?? "", child(path, "key")));
  values.forEach((v, i) => {
    for (const m of isValidLabelValue(v)) errs.push(invalid(index(child(path, "values"), i), v, m));
  });
  return errs;
}

// core validation ValidateNodeFieldSelectorRequirement (only metadata.name is a valid key)
function validateNodeFieldSelectorRequirement(rq, path) {
  const errs = [];
  const values = list(rq?.values);
  if (rq?.operator === "In" || rq?.operator === "NotIn") {
    if (values.length !== 1) errs.push(required(child(path, "values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else {
    errs.push(invalid(child(path, "operator"), rq?.operator ?? "", "not a valid selector operator"));
  }
  if (rq?.key !== "metadata.name") {
    errs.push(invalid(child(path, "key"), rq?.key ?? "", "not a valid field selector key"));
  } else {
    values.forEach((v, i) => {
      for (const m of isDNS1123Subdomain(v)) errs.push(invalid(index(child(path, "values"), i), v, m));
    });
  }
  return errs;
}

// core validation ValidateNodeSelector (allowInvalidLabelValueInRequiredNodeAffinity=false)
export function validateNodeSelector(selector, path) {
  const termPath = child(path, "nodeSelectorTerms");
  const terms = list(selector?.nodeSelectorTerms);
  if (terms.length === 0) return [required(termPath, "must have at least one node selector term")];
  const errs = [];
  terms.forEach((term, i) => {
    const p = index(termPath, i);
    list(term?.matchExpressions).forEach((rq, j) => errs.push(...validateNodeSelectorRequirement(rq, index(child(p, "matchExpressions"), j))));
    list(term?.matchFields).forEach((rq, j) => errs.push(...validateNodeFieldSelectorRequirement(rq, index(child(p, "matchFields"), j))));
  });
  return errs;
}

// validation.go validateNodeName (core ValidateNodeName = NameIsDNSSubdomain)
const validateNodeName = (name, path) => isDNS1123Subdomain(name).map((m) => invalid(path, name, m));

// validation.go validateLabelValue
export const validateLabelValue = (value, path) => isValidLabelValue(value).map((m) => invalid(path, value, m));

// core helper IsNodeAllocatableResourceName: cpu, memory and hugepages-<size>.
const isNodeAllocatableResourceName = (name) => name === "cpu" || name === "memory" || name.startsWith("hugepages-");

// --- validateSet, validateSlice, validateMap (validation.go) ------------------------------

// validateItems
function validateItems(items, validateItem, path) {
  return list(items).flatMap((item, i) => validateItem(item, index(path, i)));
}

// validateSlice: a negative maxSize disables the length check; beyond it only the count
// is reported (DOS protection).
export function validateSlice(items, maxSize, validateItem, path) {
  const n = len(items);
  if (maxSize >= 0 && n > maxSize) return [tooMany(path, n, maxSize).withOrigin("maxItems")];
  return validateItems(items, validateItem, path);
}

// validateSet: validateSlice plus duplicates, reported on the later index with the key.
// `itemKey` returns a string (printed quoted) or a GoStringer (compared by its String form,
// printed as is); one call's keys are all of one kind.
export function validateSet(items, maxSize, validateItem, itemKey, path) {
  const n = len(items);
  if (maxSize >= 0 && n > maxSize) return [tooMany(path, n, maxSize).withOrigin("maxItems")];
  const errs = validateItems(items, validateItem, path);
  const seen = new Set();
  list(items).forEach((item, i) => {
    const k = itemKey(item);
    const id = k instanceof GoStringer ? k.s : k;
    if (seen.has(id)) errs.push(duplicate(index(path, i), k));
    else seen.add(id);
  });
  return errs;
}

// truncateIfTooLong: a long key is shortened in the middle for the error path.
export function truncateIfTooLong(str, maxLen) {
  if (maxLen < 16) maxLen = 16;
  const bytes = Buffer.from(str, "utf8");
  if (bytes.length <= maxLen) return str;
  const remaining = maxLen - 3;
  const head = bytes.subarray(0, Math.floor((remaining + 1) / 2));
  const tail = bytes.subarray(bytes.length - Math.floor(remaining / 2));
  return head.toString("utf8") + "..." + tail.toString("utf8");
}

// validateMap: key errors on the map's path (1.36+) or on map[key] (before), items on
// map[key]; too many entries reports only the count.
function validateMap(m, maxSize, truncateKeyLen, validateKey, validateItem, path, ctx) {
  const errs = [];
  const all = entries(m);
  if (maxSize >= 0 && all.length > maxSize) return [tooMany(path, all.length, maxSize)];
  for (const [k, item] of all) {
    const keyPath = key(path, truncateIfTooLong(k, truncateKeyLen));
    errs.push(...validateKey(k, ctx.has("mapKeyErrorsOnMapPath") ? path : keyPath));
    errs.push(...validateItem(item, keyPath));
  }
  return errs;
}

// --- ResourceSlice ----------------------------------------------------------------------

// ValidateResourceSlice
export function ValidateResourceSlice(slice, opts = {}) {
  const ctx = context(opts);
  checkQuantities(slice);
  return [
    ...validateObjectMeta(slice?.metadata, "metadata"),
    ...validateResourceSliceSpec(slice?.spec ?? {}, null, "spec", ctx),
    ...declarativeOnly(slice?.spec ?? {}, "spec", ctx),
  ];
}

// ValidateResourceSliceUpdate
export function ValidateResourceSliceUpdate(slice, oldSlice, opts = {}) {
  const ctx = context(opts);
  checkQuantities(slice);
  return [
    ...validateObjectMetaUpdate(slice?.metadata, oldSlice?.metadata, "metadata"),
    ...validateResourceSliceSpec(slice?.spec ?? {}, oldSlice?.spec ?? {}, "spec", ctx),
    ...declarativeOnly(slice?.spec ?? {}, "spec", ctx),
  ];
}

// validateResourceSliceSpec
function validateResourceSliceSpec(spec, oldSpec, path, ctx) {
  const errs = [];
  errs.push(...validateDriverName(spec.driver ?? "", child(path, "driver")));
  errs.push(...validateResourcePool(spec.pool ?? {}, child(path, "pool")));
  if (oldSpec) {
    errs.push(...validateImmutableField(spec.pool?.name ?? "", oldSpec.pool?.name ?? "", child(path, "pool", "name")));
    errs.push(...validateImmutableField(spec.driver ?? "", oldSpec.driver ?? "", child(path, "driver")));
    errs.push(...validateImmutableField(spec.nodeName, oldSpec.nodeName, child(path, "nodeName")));
  }

  const setFields = [];
  if (isSet(spec.nodeName)) {
    if (spec.nodeName !== "") {
      setFields.push("`nodeName`");
      errs.push(...validateNodeName(spec.nodeName, child(path, "nodeName")));
    } else {
      errs.push(invalid(child(path, "nodeName"), spec.nodeName, "must be either unset or set to a non-empty string"));
    }
  }
  if (isSet(spec.nodeSelector)) {
    setFields.push("`nodeSelector`");
    errs.push(...validateNodeSelector(spec.nodeSelector, child(path, "nodeSelector")));
    if (len(spec.nodeSelector.nodeSelectorTerms) !== 1) {
      // Simplifies merging node selectors of devices from different slices.
      errs.push(invalid(child(path, "nodeSelector", "nodeSelectorTerms"), spec.nodeSelector.nodeSelectorTerms ?? null,
        "must have exactly one node selector term"));
    }
  }
  if (isSet(spec.allNodes)) {
    if (spec.allNodes) setFields.push("`allNodes`");
    else errs.push(invalid(child(path, "allNodes"), spec.allNodes, "must be either unset or set to true"));
  }
  if (isSet(spec.perDeviceNodeSelection)) {
    if (spec.perDeviceNodeSelection) setFields.push("`perDeviceNodeSelection`");
    else errs.push(invalid(child(path, "perDeviceNodeSelection"), spec.perDeviceNodeSelection, "must be either unset or set to true"));
  }
  if (setFields.length === 0) {
    errs.push(required(path, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"));
  } else if (setFields.length > 1) {
    errs.push(invalid(path, `{${setFields.join(", ")}}`,
      "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"));
  }

  if (isSet(spec.sharedCounters) && isSet(spec.devices)) {
    errs.push(invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"));
  }

  const maxDevices = maxDevicesFor(spec, ctx);
  errs.push(...validateSet(spec.devices, maxDevices,
    (device, p) => validateDevice(device ?? {}, lookupDevice(oldSpec, device?.name), p, spec.perDeviceNodeSelection, ctx),
    (device) => device?.name ?? "", child(path, "devices")));

  errs.push(...validateSet(spec.sharedCounters, L.ResourceSliceMaxCounterSets,
    (cs, p) => validateCounterSet(cs ?? {}, p, ctx), (cs) => cs?.name ?? "", child(path, "sharedCounters")));

  if (ctx.has("v137Fields")) {
    if (isSet(spec.partitionTypeAttribute)) errs.push(...validatePartitionTypeAttribute(spec, path, ctx));
    errs.push(...validateSkipNodeOperations(spec.skipNodeOperations, child(path, "skipNodeOperations")));
  }
  return errs;
}

// The device limit of validateResourceSliceSpec: 128, or 64 with taints, counters or (1.36+)
// list-typed attributes.
export function maxDevicesFor(spec, opts) {
  const ctx = opts?.has ? opts : context(opts);
  return haveDeviceTaints(spec) || haveConsumesCounters(spec) || (ctx.has("listTypeAttributes") && haveListAttributes(spec))
    ? L.ResourceSliceMaxDevicesWithAdvancedFeatures : L.ResourceSliceMaxDevices;
}

// validatePartitionTypeAttribute: a slice naming one must have devices consuming counters,
// and each of those must carry the attribute as a string.
function validatePartitionTypeAttribute(spec, path, ctx) {
  const name = spec.partitionTypeAttribute;
  if (!haveConsumesCounters(spec)) {
    return [invalid(child(path, "partitionTypeAttribute"), name, "may only be set on a slice which declares devices that consume counters")];
  }
  // A malformed name is reported declaratively (declarativeOnly below).
  if (validateFullyQualifiedName(name, "", ctx).length > 0) return [];
  const prefix = `${spec.driver ?? ""}/`;
  const bareName = name.startsWith(prefix) ? name.slice(prefix.length) : name;
  const errs = [];
  list(spec.devices).forEach((device, i) => {
    if (len(device?.consumesCounters) === 0) return;
    const attrPath = key(child(index(child(path, "devices"), i), "attributes"), name);
    const attribute = lookupQualifiedAttribute(device.attributes, name, bareName);
    if (!attribute) {
      errs.push(required(attrPath, "device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set"));
    } else if (!isSet(attribute.string)) {
      errs.push(invalid(attrPath, deviceAttributeValue(attribute, ctx), "must be a string value because `partitionTypeAttribute` names this attribute"));
    }
  });
  return errs;
}

// validateSkipNodeOperations (SkipNodeOperationAll is "*")
export function validateSkipNodeOperations(ops, path) {
  const set = new Set(list(ops));
  if (set.has("NodePrepareResources") && !set.has("NodeUnprepareResources") && !set.has("*")) {
    return [invalid(path, list(ops), "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped")];
  }
  return [];
}

// What validation.go leaves to declarative validation (validation-gen tags) and which has
// no handwritten twin: the partitionTypeAttribute name format and the skipNodeOperations
// enum and uniqueness. Approximations of the generated code's errors.
function declarativeOnly(spec, path, ctx) {
  const errs = [];
  if (!ctx.has("v137Fields")) return errs;
  if (isSet(spec.partitionTypeAttribute)) {
    errs.push(...validateFullyQualifiedName(spec.partitionTypeAttribute, child(path, "partitionTypeAttribute"), ctx));
  }
  const seen = new Set();
  list(spec.skipNodeOperations).forEach((op, i) => {
    const p = index(child(path, "skipNodeOperations"), i);
    if (!["*", "NodePrepareResources", "NodeUnprepareResources"].includes(op)) {
      errs.push(notSupported(p, op, ["*", "NodePrepareResources", "NodeUnprepareResources"]));
    }
    if (seen.has(op)) errs.push(duplicate(p, op));
    seen.add(op);
  });
  return errs;
}

// lookupQualifiedAttribute: the explicit domain/name form wins over the bare name.
function lookupQualifiedAttribute(attributes, name, bareName) {
  if (attributes && Object.hasOwn(attributes, name)) return attributes[name];
  if (bareName && attributes && Object.hasOwn(attributes, bareName)) return attributes[bareName];
  return null;
}

// haveListAttributes, haveDeviceTaints, haveConsumesCounters, lookupDevice
function haveListAttributes(spec) {
  return list(spec?.devices).some((d) => Object.values(d?.attributes ?? {}).some((a) =>
    isSet(a?.bools) || isSet(a?.ints) || isSet(a?.strings) || isSet(a?.versions)));
}
const haveDeviceTaints = (spec) => list(spec?.devices).some((d) => len(d?.taints) > 0);
const haveConsumesCounters = (spec) => list(spec?.devices).some((d) => len(d?.consumesCounters) > 0);
function lookupDevice(spec, name) {
  if (!spec) return null;
  return list(spec.devices).find((d) => d?.name === name) ?? null;
}

// validateCounterSet
function validateCounterSet(cs, path, ctx) {
  const errs = [];
  if (!cs.name) errs.push(required(child(path, "name"), "").markCoveredByDeclarative());
  else errs.push(...validateCounterName(cs.name, child(path, "name")));
  if (len(cs.counters) === 0) {
    errs.push(required(child(path, "counters"), "").markCoveredByDeclarative());
  } else {
    errs.push(...validateMap(cs.counters, L.ResourceSliceMaxCountersPerCounterSet, L.DNS1123LabelMaxLength,
      validateCounterName, validateDeviceCounter, child(path, "counters"), ctx));
  }
  return errs;
}

// validateResourcePool
function validateResourcePool(pool, path) {
  const errs = [...validatePoolName(pool.name ?? "", child(path, "name"))];
  const count = pool.resourceSliceCount ?? 0;
  if (count <= 0) errs.push(invalid(child(path, "resourceSliceCount"), count, "must be greater than zero"));
  const generation = pool.generation ?? 0;
  if (generation < 0) errs.push(invalid(child(path, "generation"), generation, "must be greater than or equal to zero"));
  return errs;
}

// validatePoolName
export function validatePoolName(name, path) {
  if (name === "") return [required(path, "")];
  const errs = [];
  if (blen(name) > L.PoolNameMaxLength) errs.push(tooLong(path, L.PoolNameMaxLength).withOrigin("format=k8s-resource-pool-name"));
  for (const part of name.split("/")) {
    errs.push(...validateDNS1123Subdomain(part, path).map((e) => e.withOrigin("format=k8s-resource-pool-name")));
  }
  return errs;
}

// validateDevice
function validateDevice(device, oldDevice, path, perDeviceNodeSelection, ctx) {
  const errs = [];
  const allowMultipleAllocations = device.allowMultipleAllocations === true;
  errs.push(...validateDeviceName(device.name ?? "", child(path, "name")));

  // Reported once; if one part is too large, so is the sum.
  const attributeAndCapacityLength = len(device.attributes) + len(device.capacity);
  if (attributeAndCapacityLength > L.ResourceSliceMaxAttributesAndCapacitiesPerDevice) {
    errs.push(invalid(path, attributeAndCapacityLength,
      `the total number of attributes and capacities must not exceed ${L.ResourceSliceMaxAttributesAndCapacitiesPerDevice}`));
  }
  if (ctx.has("listTypeAttributes")) {
    const values = numEntriesDeviceAttribute(device);
    if (values > L.ResourceSliceMaxAttributeValuesPerDevice) {
      errs.push(invalid(path, values, `the total number of attribute values must not exceed ${L.ResourceSliceMaxAttributeValuesPerDevice}`));
    }
  }

  errs.push(...validateMap(device.attributes, -1, attributeAndCapacityMaxKeyLength,
    (k, p) => validateQualifiedName(k, p, ctx), (a, p) => validateDeviceAttribute(a ?? {}, p, ctx), child(path, "attributes"), ctx));
  // From 1.37 capacity an update leaves alone is not validated again.
  if (!ctx.has("requestPolicyRework") || !oldDevice || !semanticEqual(oldDevice.capacity, device.capacity, CAPACITY)) {
    errs.push(...validateMap(device.capacity, -1, attributeAndCapacityMaxKeyLength, (k, p) => validateQualifiedName(k, p, ctx),
      (c, p) => (allowMultipleAllocations ? validateMultiAllocatableDeviceCapacity : validateSingleAllocatableDeviceCapacity)(c ?? {}, p, ctx),
      child(path, "capacity"), ctx));
  }
  // Taints an update leaves alone are not validated again.
  if (!oldDevice || !semanticEqual(oldDevice.taints, device.taints, TAINTS)) {
    errs.push(...validateSlice(device.taints, L.DeviceTaintsMaxLength,
      (taint, p) => validateDeviceTaint(taint ?? {}, null, p, ctx), child(path, "taints")));
  }

  errs.push(...validateSet(device.consumesCounters, L.ResourceSliceMaxDeviceCounterConsumptionsPerDevice,
    (c, p) => validateDeviceCounterConsumption(c ?? {}, p, ctx), (c) => c?.counterSet ?? "", child(path, "consumesCounters")));

  if (perDeviceNodeSelection === true) {
    const setFields = [];
    if (isSet(device.nodeName)) {
      if (device.nodeName.length !== 0) {
        setFields.push("`nodeName`");
        errs.push(...validateNodeName(device.nodeName, child(path, "nodeName")));
      } else {
        errs.push(invalid(child(path, "nodeName"), device.nodeName, "must not be empty"));
      }
    }
    if (isSet(device.nodeSelector)) {
      setFields.push("`nodeSelector`");
      errs.push(...validateNodeSelector(device.nodeSelector, child(path, "nodeSelector")));
    }
    if (isSet(device.allNodes)) {
      if (device.allNodes) setFields.push("`allNodes`");
      else errs.push(invalid(child(path, "allNodes"), device.allNodes, "must be either unset or set to true"));
    }
    const what = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec";
    if (setFields.length === 0) errs.push(required(path, what));
    else if (setFields.length > 1) errs.push(invalid(path, `{${setFields.join(", ")}}`, what));
  } else if (isSet(device.nodeName) || isSet(device.nodeSelector) || isSet(device.allNodes)) {
    errs.push(invalid(path, null, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"));
  }

  errs.push(...validateDeviceBindingParameters(device.bindingConditions, device.bindingFailureConditions, path));
  if (ctx.has("v137Fields")) {
    errs.push(...validateNodeAllocatableResources(device.nodeAllocatableResources, device.capacity, child(path, "nodeAllocatableResources")));
  }
  return errs;
}

// validateNodeAllocatableResources
function validateNodeAllocatableResources(mappings, capacities, path) {
  const errs = [];
  for (const [name, m] of entries(mappings)) {
    const keyPath = key(path, name);
    if (!isNodeAllocatableResourceName(name)) errs.push(invalid(keyPath, name, "must be a node allocatable resource name"));
    if (!isSet(m?.mapping) && !isSet(m?.overhead)) errs.push(required(keyPath, "at least one of mapping or overhead must be set"));
    if (isSet(m?.mapping)) errs.push(...validateNodeAllocatableMapping(m.mapping, capacities, child(keyPath, "mapping")));
    if (isSet(m?.overhead)) errs.push(...validateNodeAllocatableOverheadMapping(m.overhead, child(keyPath, "overhead")));
  }
  return errs;
}

// validateNodeAllocatableMapping
function validateNodeAllocatableMapping(mapping, capacities, path) {
  const errs = [];
  if (isSet(mapping.capacityKey)) {
    if (mapping.capacityKey === "") {
      errs.push(invalid(child(path, "capacityKey"), "", "capacityKey must not be an empty string"));
    } else if (!(capacities && Object.hasOwn(capacities, mapping.capacityKey))) {
      errs.push(notFound(child(path, "capacityKey"), mapping.capacityKey));
    }
    if (!isSet(mapping.capacityMultiplier)) {
      errs.push(required(child(path, "capacityMultiplier"), "capacityMultiplier is required when capacityKey is set")
        .withOrigin("dependentRequired").markCoveredByDeclarative());
    } else if (q(mapping.capacityMultiplier).sign() <= 0) {
      errs.push(invalid(child(path, "capacityMultiplier"), String(q(mapping.capacityMultiplier)), "must be positive"));
    }
  }
  if (isSet(mapping.deviceMultiplier) && q(mapping.deviceMultiplier).sign() <= 0) {
    errs.push(invalid(child(path, "deviceMultiplier"), String(q(mapping.deviceMultiplier)), "must be positive"));
  }
  if (isSet(mapping.capacityMultiplier) && !isSet(mapping.capacityKey)) {
    errs.push(required(child(path, "capacityKey"), "capacityKey is required when capacityMultiplier is set")
      .withOrigin("dependentRequired").markCoveredByDeclarative());
  }
  return errs;
}

// validateNodeAllocatableOverheadMapping
function validateNodeAllocatableOverheadMapping(overhead, path) {
  if (!isSet(overhead.perPod) && !isSet(overhead.perContainer)) {
    return [invalid(path, "", "at least one of perPod or perContainer must be set")];
  }
  const errs = [];
  for (const f of ["perPod", "perContainer"]) {
    if (isSet(overhead[f]) && q(overhead[f]).sign() < 0) errs.push(invalid(child(path, f), String(q(overhead[f])), "must be non-negative"));
  }
  return errs;
}

// numEntriesDeviceAttribute: scalars count one, lists count their items.
function numEntriesDeviceAttribute(device) {
  let n = 0;
  for (const a of Object.values(device.attributes ?? {})) {
    const items = len(a?.bools) + len(a?.ints) + len(a?.strings) + len(a?.versions);
    n += items === 0 ? 1 : items;
  }
  return n;
}

// validateDeviceCounterConsumption
function validateDeviceCounterConsumption(c, path, ctx) {
  const errs = [];
  if (!c.counterSet) errs.push(required(child(path, "counterSet"), "").markCoveredByDeclarative());
  else errs.push(...validateCounterName(c.counterSet, child(path, "counterSet")));
  if (len(c.counters) === 0) {
    errs.push(required(child(path, "counters"), "").markCoveredByDeclarative());
  } else {
    errs.push(...validateMap(c.counters, L.ResourceSliceMaxCountersPerDeviceCounterConsumption, L.DNS1123LabelMaxLength,
      validateCounterName, validateDeviceCounter, child(path, "counters"), ctx));
  }
  return errs;
}

// semverRe (semver.org 2.0.0)
const numericIdentifier = "(0|[1-9]\\d*)";
const preReleaseIdentifier = "(0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)";
const buildIdentifier = "[0-9a-zA-Z-]+";
const semverRe = new RegExp(`^${numericIdentifier}\\.${numericIdentifier}\\.${numericIdentifier}` +
  `(-${preReleaseIdentifier}(\\.${preReleaseIdentifier})*)?(\\+${buildIdentifier}(\\.${buildIdentifier})*)?$`);

// validateDeviceAttribute: exactly one value; list types from 1.36.
function validateDeviceAttribute(attr, path, ctx) {
  const errs = [];
  let numFields = 0;
  if (isSet(attr.bool)) numFields++;
  if (isSet(attr.int)) numFields++;
  if (isSet(attr.string)) {
    numFields++;
    errs.push(...validateDeviceAttributeStringValue(attr.string, child(path, "string")));
  }
  if (isSet(attr.version)) {
    numFields++;
    errs.push(...validateDeviceAttributeVersionValue(attr.version, child(path, "version")));
  }
  if (ctx.has("listTypeAttributes")) {
    for (const f of ["bools", "ints"]) {
      if (!isSet(attr[f])) continue;
      numFields++;
      if (len(attr[f]) === 0) errs.push(invalid(child(path, f), attr[f], "must not be empty if specified"));
    }
    if (isSet(attr.strings)) {
      numFields++;
      if (len(attr.strings) === 0) errs.push(invalid(child(path, "strings"), attr.strings, "must not be empty if specified"));
      list(attr.strings).forEach((s, i) => errs.push(...validateDeviceAttributeStringValue(s, index(child(path, "strings"), i))
        .map((e) => e.withOrigin("maxBytes").markCoveredByDeclarative())));
    }
    if (isSet(attr.versions)) {
      numFields++;
      if (len(attr.versions) === 0) errs.push(invalid(child(path, "versions"), attr.versions, "must not be empty if specified"));
      list(attr.versions).forEach((s, i) => errs.push(...validateDeviceAttributeVersionValue(s, index(child(path, "versions"), i))));
    }
  }
  if (numFields === 0) {
    errs.push(invalid(path, "", "exactly one value must be specified").withOrigin("union").markCoveredByDeclarative());
  } else if (numFields > 1) {
    errs.push(invalid(path, deviceAttributeValue(attr, ctx), "exactly one value must be specified").withOrigin("union").markCoveredByDeclarative());
  }
  return errs;
}

// validateDeviceAttributeStringValue
function validateDeviceAttributeStringValue(value, path) {
  return blen(String(value)) > L.DeviceAttributeMaxValueLength ? [tooLong(path, L.DeviceAttributeMaxValueLength)] : [];
}

// validateDeviceAttributeVersionValue
function validateDeviceAttributeVersionValue(value, path) {
  const errs = [];
  const v = String(value);
  if (!semverRe.test(v)) errs.push(invalid(path, v, "must be a string compatible with semver.org spec 2.0.0"));
  if (blen(v) > L.DeviceAttributeMaxValueLength) errs.push(tooLong(path, L.DeviceAttributeMaxValueLength));
  return errs;
}

// validateMultiAllocatableDeviceCapacity: a request policy is checked against the value.
function validateMultiAllocatableDeviceCapacity(capacity, path, ctx) {
  if (!isSet(capacity.requestPolicy)) return [];
  return validateRequestPolicy(q(capacity.value), capacity.requestPolicy, child(path, "requestPolicy"), ctx);
}

// validateSingleAllocatableDeviceCapacity: no request policy without allowMultipleAllocations.
function validateSingleAllocatableDeviceCapacity(capacity, path) {
  return isSet(capacity.requestPolicy) ? [forbidden(child(path, "requestPolicy"), "allowMultipleAllocations must be true")] : [];
}

// validateRequestPolicy
function validateRequestPolicy(maxCapacity, policy, path, ctx) {
  if (len(policy.validValues) > 0 && isSet(policy.validRange)) {
    return [forbidden(path, 'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time')];
  }
  return validateValidRequestValues(maxCapacity, policy, path, ctx);
}

// validateValidRequestValues
function validateValidRequestValues(maxCapacity, policy, path, ctx) {
  if (len(policy.validValues) > 0) {
    if (!isSet(policy.default)) return [required(child(path, "default"), "required when validValues is defined")];
    return validateRequestPolicyValidValues(q(policy.default), maxCapacity, policy.validValues.map(q), child(path, "validValues"), ctx);
  }
  if (isSet(policy.validRange)) {
    if (!isSet(policy.default)) return [required(child(path, "default"), "required when validRange is defined")];
    return validateRequestPolicyRange(q(policy.default), maxCapacity, policy.validRange, child(path, "validRange"), ctx);
  }
  return [];
}

// quantityKey (before 1.37) / quantityKeyInt: the integer Value(); quantityKeyAsDec (1.37+,
// DRAFractionalCapacityRange): the exact decimal, so 5 and 5.0 are the same key.
const quantityKeyInt = (item) => item.value().toString();
const quantityKeyAsDec = (item) => item.decimalString();

// validateRequestPolicyValidValues
function validateRequestPolicyValidValues(defaultValue, maxCapacity, validValues, path, ctx) {
  const errs = [];
  let foundDefault = false;
  for (let i = 0; i < validValues.length - 1; i++) {
    if (validValues[i].cmp(validValues[i + 1]) > 0) {
      errs.push(invalid(index(path, i + 1), String(validValues[i + 1]), "values must be sorted in ascending order"));
    }
  }
  const keyFn = ctx.has("requestPolicyRework") && ctx.gates.DRAFractionalCapacityRange ? quantityKeyAsDec : quantityKeyInt;
  errs.push(...validateSet(validValues, L.CapacityRequestPolicyDiscreteMaxOptions, (option, p) => {
    const e = [];
    if (option.cmp(maxCapacity) > 0) e.push(invalid(p, String(option), `option is larger than capacity value: ${maxCapacity}`));
    if (option.cmp(defaultValue) === 0) foundDefault = true;
    return e;
  }, keyFn, path));
  if (!foundDefault) errs.push(invalid(path, String(defaultValue), "default value is not valid according to the requestPolicy"));
  return errs;
}

// validateRequestPolicyRange
function validateRequestPolicyRange(defaultValue, maxCapacity, range, path, ctx) {
  const errs = [];
  if (!isSet(range.min)) return [required(child(path, "min"), "required when validRange is defined")];
  const rework = ctx.has("requestPolicyRework");
  const min = q(range.min);
  const max = isSet(range.max) ? q(range.max) : null;
  const step = isSet(range.step) ? q(range.step) : null;
  if (min.cmp(maxCapacity) > 0) errs.push(invalid(child(path, "min"), String(min), `min is larger than capacity value: ${maxCapacity}`));
  if (defaultValue.cmp(min) < 0) {
    errs.push(invalid(child(path, rework ? "default" : "min"), String(defaultValue), `default is less than min: ${min}`));
  }
  if (max) {
    if (min.cmp(max) > 0) errs.push(invalid(child(path, "max"), String(min), `min is larger than max: ${max}`));
    if (max.cmp(maxCapacity) > 0) errs.push(invalid(child(path, "max"), String(max), `max is larger than capacity value: ${maxCapacity}`));
    if (defaultValue.cmp(max) > 0) {
      errs.push(invalid(child(path, rework ? "default" : "max"), String(defaultValue), `default is more than max: ${max}`));
    }
  }
  let useMilli = false;
  if (rework && ctx.gates.DRAFractionalCapacityRange) {
    useMilli = rangeHasFractional(min, max, step) || defaultValue.isFractional();
    if (useMilli) {
      let unsafe = false;
      for (const [value, name] of [[defaultValue, "default"], [min, "min"], [max, "max"], [step, "step"]]) {
        if (!value) continue;
        if (value.cmp(newMilliQuantity(value.milliValue(), value.format)) !== 0) {
          errs.push(invalid(child(path, name), String(value), "value cannot be represented as a milli value"));
          unsafe = true;
        }
      }
      if (unsafe) return errs;
    }
  }
  if (step) {
    if (ctx.has("stepMustBePositive") && step.sign() <= 0) {
      errs.push(invalid(child(path, "step"), String(step), "must be greater than zero"));
    } else {
      const added = min.add(step);
      if (added.cmp(maxCapacity) > 0) {
        errs.push(invalid(child(path, "step"), String(step), `one step ${added} is larger than capacity value: ${maxCapacity}`));
      }
      let unsafe = false;
      if (ctx.has("int64BoundGuard") && !useMilli) {
        for (const [value, name] of [[defaultValue, "default"], [min, "min"], [max, "max"], [step, "step"]]) {
          if (!value) continue;
          const e = validateInt64Range(value, child(path, name));
          if (e.length) { errs.push(...e); unsafe = true; }
        }
      }
      if (!unsafe) {
        errs.push(...validateRequestPolicyRangeStep(defaultValue, min, step, useMilli, child(path, "step")));
        if (max) errs.push(...validateRequestPolicyRangeStep(max, min, step, useMilli, child(path, "step")));
      }
    }
  }
  return errs;
}

// validateRequestPolicyRangeStep: (value - min) must be a multiple of step, in int64
// arithmetic on Value() or MilliValue(). A zero step divides by zero: Go panics.
function validateRequestPolicyRangeStep(value, min, step, useMilli, path) {
  const stepVal = useMilli ? step.milliValue() : step.value();
  const minVal = useMilli ? min.milliValue() : min.value();
  const val = useMilli ? value.milliValue() : value.value();
  if (stepVal === 0n) throw new GoPanic("runtime error: integer divide by zero");
  if (wrap64(val - minVal) % stepVal !== 0n) {
    return [invalid(path, String(value), `value is not a multiple of a given step (${step}) from (${min})`)];
  }
  return [];
}

// validateInt64Range: a bound must be in [0, MaxInt64].
function validateInt64Range(value, path) {
  if (value.sign() < 0) return [invalid(path, String(value), "must be greater than or equal to 0")];
  if (value.cmpInt64(MAX_INT64) > 0) return [invalid(path, String(value), "must not be larger than 9223372036854775807")];
  return [];
}

// rangeHasFractional
const rangeHasFractional = (...values) => values.some((v) => v && v.isFractional());

// validateDeviceCounter: any parsed quantity is valid.
const validateDeviceCounter = () => [];

// validateQualifiedName: [domain/]C-identifier; from 1.38 more than one slash is an error
// (before, such names are accepted unchecked).
function validateQualifiedName(name, path, ctx) {
  const errs = [];
  const parts = String(name).split("/");
  if (parts.length === 1) {
    errs.push(...validateCIdentifier(parts[0], path));
  } else if (parts.length === 2) {
    if (parts[0].length === 0) errs.push(invalid(path, "", "the domain must not be empty"));
    else errs.push(...validateDriverName(parts[0], path));
    if (parts[1].length === 0) errs.push(invalid(path, "", "the name must not be empty"));
    else errs.push(...validateCIdentifier(parts[1], path));
  } else if (ctx.has("qualifiedNameOneSlash")) {
    errs.push(invalid(path, String(name), "must not contain more than one slash"));
  }
  return errs;
}

// validateFullyQualifiedName: a qualified name that has a domain.
function validateFullyQualifiedName(name, path, ctx) {
  const errs = validateQualifiedName(name, path, ctx);
  if (!String(name).includes("/")) errs.push(invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash"));
  return errs.map((e) => e.withOrigin("format=k8s-resource-fully-qualified-name"));
}

// validateCIdentifier
function validateCIdentifier(id, path) {
  const errs = [];
  if (blen(id) > L.DeviceMaxIDLength) errs.push(tooLong(path, L.DeviceMaxIDLength));
  for (const m of isCIdentifier(id)) errs.push(invalid(path, id, m));
  return errs;
}

// validateDeviceTaint: the effect is checked when new or changed; None from 1.35.
function validateDeviceTaint(taint, oldTaint, path, ctx) {
  const errs = [...validateLabelName(taint.key ?? "", child(path, "key"))];
  if (taint.value) errs.push(...validateLabelValue(taint.value, child(path, "value")));
  if (!oldTaint || oldTaint.effect !== taint.effect) {
    const effects = ctx.has("taintEffectNone") ? ["NoExecute", "NoSchedule", "None"] : ["NoExecute", "NoSchedule"];
    if (!taint.effect) errs.push(required(child(path, "effect"), "").markCoveredByDeclarative());
    else if (!effects.includes(taint.effect)) errs.push(notSupported(child(path, "effect"), taint.effect, effects).markCoveredByDeclarative());
  }
  return errs;
}

// validateDeviceBindingParameters
export function validateDeviceBindingParameters(conditions, failureConditions, path) {
  const errs = [];
  const cPath = child(path, "bindingConditions");
  const fPath = child(path, "bindingFailureConditions");
  errs.push(...validateSlice(conditions, L.BindingConditionsMaxSize, validateLabelName, cPath));
  errs.push(...validateSlice(failureConditions, L.BindingFailureConditionsMaxSize, validateLabelName, fPath));
  const seen = new Set();
  list(conditions).forEach((c, i) => {
    if (seen.has(c)) errs.push(duplicate(index(cPath, i), c));
    else seen.add(c);
  });
  const seenFailure = new Set();
  const all = new Set(list(conditions));
  list(failureConditions).forEach((c, i) => {
    if (seenFailure.has(c)) errs.push(duplicate(index(fPath, i), c));
    else seenFailure.add(c);
    if (all.has(c)) errs.push(invalid(index(fPath, i), c, "bindingFailureConditions must not overlap with bindingConditions"));
  });
  if (len(conditions) === 0 && len(failureConditions) > 0) {
    errs.push(invalid(cPath, conditions ?? null, "bindingConditions are required to use bindingFailureConditions"));
  }
  if (len(failureConditions) === 0 && len(conditions) > 0) {
    errs.push(invalid(fPath, failureConditions ?? null, "bindingFailureConditions are required to use bindingConditions"));
  }
  return errs;
}

// --- The generic registry (staging/src/k8s.io/apiserver/pkg/registry/rest) ---------------

// validateCommonFields of BeforeUpdate; on create (BeforeCreate) the meta part runs only
// after the strategy's validation passed. `namespaced`: the strategy's NamespaceScoped (a
// ResourceSlice is not, a ResourceClaim is).
export function validateCommonFields(slice, oldSlice, { namespaced = false } = {}) {
  const errs = validateObjectMetaAccessor(slice?.metadata, validatePathSegmentName, "metadata", namespaced);
  if (oldSlice) errs.push(...validateObjectMetaAccessorUpdate(slice?.metadata, oldSlice?.metadata, "metadata"));
  return errs;
}

// names.SimpleNameGenerator.GenerateName: at most 58 characters of the base, then five
// random characters of utilrand's alphabet.
export function generateName(base, random = Math.random) {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  let suffix = "";
  for (let i = 0; i < 5; i++) suffix += alphabet[Math.floor(random() * alphabet.length)];
  return base.slice(0, 58) + suffix;
}

// resourceSliceStrategy.WarningsOnCreate / WarningsOnUpdate
export function resourceSliceWarnings(slice) {
  const driver = slice?.spec?.driver ?? "";
  return driver !== driver.toLowerCase()
    ? [`spec.driver: driver names should be lowercase; ${goQuote(driver)} contains uppercase characters`] : [];
}

// errors.NewInvalid: the Status of a 422 answer (message deduplicated as ToAggregate does).
export function invalidStatus(kind, group, name, errs) {
  const msgs = [...new Set(errs.map(String))];
  const agg = msgs.length === 1 ? msgs[0] : `[${msgs.join(", ")}]`;
  return {
    kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure",
    message: `${kind}.${group} ${goQuote(name ?? "")} is invalid${msgs.length ? `: ${agg}` : ""}`,
    reason: "Invalid",
    details: { name, group, kind, causes: errs.map((e) => ({ reason: e.type, message: e.errorBody(), field: e.field })) },
    code: 422,
  };
}
