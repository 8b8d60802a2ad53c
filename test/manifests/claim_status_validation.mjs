// kube-apiserver's validation of a ResourceClaim status update (the resourceclaims/status
// subresource, where a DRA driver writes status.devices: KEP-4817, feature gate
// DRAResourceClaimDeviceStatus) and the status strategy around it, ported to JavaScript rule
// for rule so that the fake API server (fake_apiserver.mjs) refuses and drops what the real
// one does, with the same field paths and messages. Each function names the upstream Go
// function it mirrors; none of the Go code is copied, it is re-expressed here.
//
// What it ports (kubernetes/kubernetes):
//  - pkg/apis/resource/validation/validation.go: ValidateResourceClaimStatusUpdate and
//    everything it calls: validateResourceClaimStatusUpdate, validateResourceClaimUserReference,
//    gatherRequestNames / requestNames.Has, gatherAllocatedDevices, validateDeviceStatus,
//    validateNetworkDeviceData, validateRawExtension, validateUID, validatePoolName,
//    validateAllocationResult, validateDeviceAllocationResult,
//    validateDeviceRequestAllocationResult, validateDeviceAllocationConfiguration,
//    validateAllocationConfigSource, validateDeviceConfiguration, validateOpaqueConfiguration,
//    validateRequestNameRef, validateDeviceBindingParameters, validateDeviceToleration,
//    validateLabelValue, validateSkipNodeOperations, validateSet/validateSlice/validateItems.
//  - pkg/apis/resource/types.go: the limits (AllocatedDeviceStatusMaxConditions 8,
//    AllocatedDeviceStatusDataMaxLength 10 KiB, NetworkDeviceDataMaxIPs 16, interface name 256
//    and hardware address 128 bytes, ResourceClaimReservedForMaxSize 256,
//    AllocationResultsMaxSize 32, DeviceConfigMaxSize 32, OpaqueParametersMaxLength 10 KiB).
//  - staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go:
//    ValidateConditions, ValidateCondition, isValidConditionReason, ValidateLabelName,
//    ValidateManagedFields/ValidateFieldManager (the last also for PATCH's fieldManager).
//  - staging/src/k8s.io/apimachinery/pkg/util/validation/ip.go: IsValidInterfaceAddress,
//    with k8s.io/utils/net ParseCIDRSloppy (Go's pre-1.17 parseIPv4/parseIPv6, leading zeros
//    allowed) and Go's net.IP.String (RFC 5952 form) for the canonical form.
//  - Go's encoding/json scanner (its syntax-error messages: validateRawExtension quotes them)
//    and github.com/google/uuid Validate (validateUID quotes it).
//  - k8s.io/dynamic-resource-allocation structured (schedulerapi) MakeSharedDeviceID and
//    SharedDeviceID.String: driver/pool/device, plus /shareID when there is one.
//  - pkg/apis/core/validation: ValidateObjectMetaUpdate (with the apimachinery
//    ValidateObjectMetaAccessorUpdate it calls), ValidateCSIDriverName (the newest form, which
//    returns only Required for an empty name), ValidateNodeSelector and its requirements.
//  - pkg/registry/resource/resourceclaim/strategy.go: resourceclaimStatusStrategy
//    PrepareForUpdate (the spec stays the stored one, metav1.ResetObjectMetaForStatus,
//    dropDisabledStatusFields: dropDisabledDRAResourceClaimDeviceStatusFields,
//    dropDisabledDRAAdminAccessStatusFields (kube_release.mjs),
//    dropDisabledDRAResourceClaimConsumableCapacityStatusFields, dropDeviceBindingConditionsFields;
//    then dropDeallocatedStatusDevices) and ValidateUpdate (AuthorizedForAdminStatus from
//    kube_release.mjs; from 1.36 with DRAResourceClaimGranularStatusAuthorization on, the
//    granular status authorization AuthorizedForBinding and AuthorizedForDeviceStatus of
//    pkg/registry/resource/utils.go, ported in claim_status_authz.mjs; then
//    ValidateResourceClaimStatusUpdate), with the feature-in-use checks
//    they call (isDRAResourceClaimDeviceStatusInUse, draConsumableCapacityFeatureInUse with
//    pkg/api/resourceclaimspec DRAConsumableCapacityFeatureInUse, draDeviceBindingConditionsInUse).
//
// Shared with kube_validation.mjs (defined there, each under its upstream name): field.Error
// (FieldError, GoStringer for a BadValue Go prints with its String method) and its
// constructors, the field.Path helpers, goQuote, goJSON, RegexError, isQualifiedName,
// isDNS1123Label, semanticEqual (apiequality.Semantic.DeepEqual), RULES (release dating),
// validateSet/validateSlice, ValidateCSIDriverName (validateDriverName, here in its newest,
// short-circuiting form), validatePoolName, ValidateDNS1123Label, ValidateLabelName,
// validateLabelValue, ValidateFieldManager, ValidateObjectMetaAccessorUpdate (labels,
// annotations, ownerReferences, finalizers, managedFields), ValidateNodeSelector and its
// requirement checks, validateDeviceBindingParameters, validateSkipNodeOperations. Driver,
// pool and label names, label values and the field manager are converted to strings here
// before they are checked; what the shared checks read themselves (node selectors, binding
// conditions, managed fields) is taken as the typed decoding leaves it, strings. A node
// selector requirement's key is checked before its values, as upstream does.
//
// Which release it follows. validation.go at the kubernetes/kubernetes commit of the 1.38
// development cycle that kube_validation.mjs follows; validation_resourceclaim_test.go and
// core validation.go of a fork at the 1.35/1.36 cycle (the newest copies of those files that
// could be read); strategy.go of the 1.35/1.36 cycle. Rules that changed between the releases
// the fake serves (1.34..1.37) are switched on by `release` (CLAIM_RULES below, and RULES of
// kube_validation.mjs). Known gaps:
//  - The granular status authorization of 1.36+ (claim_status_authz.mjs) runs only when the
//    caller passes an authorizer (opts.authz): the fake kube-apiserver does so only while RBAC
//    is on (its admin call POST /rbac, rbac_authorizer.mjs). Without it, as before, any holder
//    of the token may write any driver's status.devices entries and status.allocation /
//    reservedFor: a real 1.36+ server would also want resourceclaims/driver
//    (associated-node:<verb> or arbitrary-node:<verb>, named by the driver) and
//    resourceclaims/binding. The v1.36 form of the check and its messages is served on 1.37
//    too; a newer upstream line words the errors differently and reports one error where a
//    deallocation drops status entries (claim_status_authz.mjs's header).
//  - BadValues that are Go structs (the allocation in "field is immutable", a ownerReference
//    list) print as JSON of the JSON field names; Go prints them with %#v. Path, type and
//    detail match.
//  - Duplicates are reported on the entry's index (validateSet of the newest source); the
//    1.32/1.33 sources named a child (status.devices[i].deviceID, reservedFor[i].uid). That
//    the 1.34 sources already have the newest form was not verified.
//  - Declarative-only rules (validation-gen tags without a handwritten twin) are not ported;
//    every status.devices rule has a handwritten twin.
//  - A RawExtension (status.devices[].data, opaque parameters) is measured as the request
//    would store it: a RawJSON value (see below) by its bytes, anything else as Go's
//    json.Marshal prints it (what server-side apply produces from the applied object).
//
// Usage: ValidateResourceClaimStatusUpdate(claim, oldClaim, {release, gates}) returns an array
// of FieldError; claimStatusPrepareForUpdate(gates, claim, old) and
// claimStatusValidateUpdate(claim, old, {release, gates, getNamespace, authz}) are the strategy
// (authz: {authorize, request}, see claim_status_authz.mjs).
import {
  GoStringer, RULES, child, duplicate, forbidden, goJSON, goQuote, index, invalid, isQualifiedName, notSupported, regexError,
  releaseContext, required, semanticEqual, tooLong, tooMany, validateDNS1123Label, validateDeviceBindingParameters,
  validateDriverName as validateCSIDriverName, validateFieldManager as validateFieldManagerString, validateLabelName,
  validateLabelValue, validateNodeSelector, validateObjectMetaAccessorUpdate, validatePoolName as validatePoolNameString,
  validateSet, validateSkipNodeOperations as validateSkipNodeOps, validateSlice,
} from "./kube_validation.mjs";
import { authorizedForAdminStatus, dropDisabledDRAAdminAccessStatusFields } from "./kube_release.mjs";
// ALLOCATION: apiequality.Semantic.DeepEqual of an AllocationResult (shared with the granular
// status authorization's AuthorizedForBinding).
import { ALLOCATION, authorizedForBinding, authorizedForDeviceStatus } from "./claim_status_authz.mjs";

export { GoStringer }; // a SharedDeviceID as a BadValue (the tests build expected ones)

// --- Releases ------------------------------------------------------------------------------

// Rules of this file that changed between releases (kube_validation.mjs's RULES are used
// too: taintEffectNone for tolerations in results, v137Fields for skipNodeOperations).
export const CLAIM_RULES = {
  // ValidateCSIDriverName returns only Required for an empty name (it used to add the
  // DNS-subdomain error too): the declarative-validation migration of resource.k8s.io
  // (KEP-5073, options RequiredCovered/SizeCovered/FormatCovered), dated to the 1.35 cycle
  // by the upstream test that expects it; the release branches were not read.
  driverNameEmptyShortCircuit: 35,
  // The status strategy's granular authorization (AuthorizedForBinding, AuthorizedForDevice-
  // Status: claim_status_authz.mjs) and its feature gate DRAResourceClaimGranularStatus-
  // Authorization (beta, on by default) first exist in 1.36 (kubernetes pull 134947); before,
  // the code is not there whatever the gates say.
  granularStatusAuthorization: 36,
};

// The release context of kube_validation.mjs, with these rules over its RULES.
const context = (opts) => releaseContext(opts, { ...RULES, ...CLAIM_RULES });

// --- Limits: pkg/apis/resource/types.go ----------------------------------------------------

export const CLAIM_LIMITS = {
  AllocatedDeviceStatusMaxConditions: 8,
  AllocatedDeviceStatusDataMaxLength: 10 * 1024,
  NetworkDeviceDataMaxIPs: 16,
  NetworkDeviceDataInterfaceNameMaxLength: 256,
  NetworkDeviceDataHardwareAddressMaxLength: 128,
  ResourceClaimReservedForMaxSize: 256,
  AllocationResultsMaxSize: 32,
  DeviceRequestsMaxSize: 32,
  DeviceConfigMaxSize: 32,
  OpaqueParametersMaxLength: 10 * 1024,
  BindingConditionsMaxSize: 4,
  BindingFailureConditionsMaxSize: 4,
  PoolNameMaxLength: 253,
  DriverNameMaxLength: 63,
};
const L = CLAIM_LIMITS;

// --- Small helpers over the JSON form -----------------------------------------------------

const OMIT_VALUE = "<value omitted>";

const blen = (s) => Buffer.byteLength(String(s), "utf8");
const isSet = (v) => v !== undefined && v !== null;
const list = (v) => (Array.isArray(v) ? v : []);
const len = (v) => (Array.isArray(v) ? v.length : v && typeof v === "object" ? Object.keys(v).length : 0);

// --- Names (core validation, validation.go) ------------------------------------------------

const validateDeviceName = validateDNS1123Label;
const validateRequestName = validateDNS1123Label;

// core validation ValidateCSIDriverName (validation.go's validateDriverName): from 1.35 an
// empty name is only Required.
const validateDriverName = (name, path, ctx) =>
  validateCSIDriverName(String(name ?? ""), path, ctx.has("driverNameEmptyShortCircuit"));
// validatePoolName: required; at most 253 bytes; each slash-separated part a DNS subdomain.
const validatePoolName = (name, path) => validatePoolNameString(String(name ?? ""), path);

// --- validateUID (validation.go) with google/uuid Validate ---------------------------------

const isHexPair = (s, i) => /^[0-9a-fA-F]{2}$/.test(s.slice(i, i + 2));
// github.com/google/uuid Validate: null, or its error text.
function uuidValidate(s) {
  const n = blen(s);
  let u = s;
  switch (n) {
    case 36: break;
    case 36 + 9:
      if (u.slice(0, 9).toLowerCase() !== "urn:uuid:") return `invalid urn prefix: ${goQuote(u.slice(0, 9))}`;
      u = u.slice(9);
      break;
    case 36 + 2:
      if (u[0] !== "{" || u[u.length - 1] !== "}") return "invalid bracketed UUID format";
      u = u.slice(1, -1);
      break;
    case 32:
      for (let i = 0; i < 32; i += 2) if (!isHexPair(u, i)) return "invalid UUID format";
      return null;
    default:
      return `invalid UUID length: ${n}`;
  }
  if (u.length !== 36) return "invalid UUID format"; // non-ASCII bytes
  if (u[8] !== "-" || u[13] !== "-" || u[18] !== "-" || u[23] !== "-") return "invalid UUID format";
  for (const x of [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]) if (!isHexPair(u, x)) return "invalid UUID format";
  return null;
}
// validateUID: origin format=k8s-uuid.
function validateUID(uid, path) {
  const s = String(uid);
  const e = uuidValidate(s);
  if (e) return [invalid(path, s, `error validating uid: ${e}`).withOrigin("format=k8s-uuid")];
  if (blen(s) !== 36 || s !== s.toLowerCase()) {
    return [invalid(path, s, "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters")
      .withOrigin("format=k8s-uuid")];
  }
  return [];
}

// --- Shared device IDs (structured.MakeSharedDeviceID, SharedDeviceID.String) --------------

// The key (driver, pool, device, shareID): a nil share ID and an empty one are the same.
export function sharedDeviceID(driver, pool, device, shareID) {
  const d = String(driver ?? "");
  const p = String(pool ?? "");
  const dev = String(device ?? "");
  const share = isSet(shareID) ? String(shareID) : "";
  return new GoStringer(`${d}/${p}/${dev}${share ? `/${share}` : ""}`);
}
// A map key for the same tuple (the String form is ambiguous when names contain slashes).
const sharedKey = (driver, pool, device, shareID) =>
  JSON.stringify([String(driver ?? ""), String(pool ?? ""), String(device ?? ""), isSet(shareID) ? String(shareID) : ""]);

// gatherAllocatedDevices
function gatherAllocatedDevices(devices) {
  return new Set(list(devices?.results).map((r) => sharedKey(r?.driver, r?.pool, r?.device, r?.shareID)));
}

// --- requestNames (validation.go) ----------------------------------------------------------

// gatherRequestNames: name -> null (an `exactly` request) or the set of its subrequests.
function gatherRequestNames(deviceClaim) {
  const names = new Map();
  for (const r of list(deviceClaim?.requests)) {
    const first = list(r?.firstAvailable);
    names.set(String(r?.name ?? ""), first.length === 0 ? null : new Set(first.map((s) => String(s?.name ?? ""))));
  }
  return names;
}
// requestNames.Has
function requestNamesHas(names, s) {
  const segments = s.split("/");
  if (segments.length > 2) return false;
  if (!names.has(segments[0])) return false;
  if (segments.length === 1) return true;
  return names.get(segments[0])?.has(segments[1]) ?? false;
}
// validateRequestNameRef
function validateRequestNameRef(name, path, names) {
  const s = String(name ?? "");
  const msg = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";
  const segments = s.split("/");
  if (segments.length > 2) return [invalid(path, s, msg)];
  const errs = segments.flatMap((seg) => validateRequestName(seg, path));
  if (!requestNamesHas(names, s)) errs.push(invalid(path, s, msg));
  return errs;
}

// --- Object meta (core ValidateObjectMetaUpdate, apimachinery objectmeta.go) ----------------

// metav1 validation ValidateFieldManager: at most 128 bytes, printable characters only (also
// PATCH's fieldManager, fake_apiserver.mjs).
export const validateFieldManager = (manager, path) => validateFieldManagerString(String(manager ?? ""), path);
// core validation ValidateObjectMetaUpdate: plus validateKubeFinalizerName (ValidateFinalizerName
// and the standard-name check) for each finalizer.
function validateObjectMetaUpdate(meta, old, path) {
  const errs = validateObjectMetaAccessorUpdate(meta, old, path);
  const standard = ["kubernetes", "orphan", "foregroundDeletion"];
  list(meta?.finalizers).forEach((f, i) => {
    for (const m of isQualifiedName(String(f))) errs.push(invalid(index(child(path, "finalizers"), i), f, m));
    if (String(f).split("/").length === 1 && !standard.includes(f)) {
      errs.push(invalid(index(child(path, "finalizers"), i), f, "name is neither a standard finalizer name nor is it fully qualified"));
    }
  });
  return errs;
}

// --- Conditions (metav1 validation) --------------------------------------------------------

const conditionReasonFmt = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?";
const conditionReasonErrMsg = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";
const conditionReasonRe = new RegExp(`^(?:${conditionReasonFmt})$`);
const maxReasonLen = 1024;
const maxMessageLen = 32 * 1024;

// A metav1.Time is zero when absent, null or 0001-01-01T00:00:00Z.
const isZeroTime = (t) => !isSet(t) || t === "" || Date.parse(t) === Date.parse("0001-01-01T00:00:00Z");

// ValidateConditions: a repeated type is a Duplicate on the later one's type.
export function validateConditions(conditions, path) {
  const errs = [];
  const seen = new Set();
  list(conditions).forEach((c, i) => {
    const type = String(c?.type ?? "");
    if (seen.has(type)) errs.push(duplicate(child(index(path, i), "type"), type));
    else seen.add(type);
    errs.push(...validateCondition(c ?? {}, index(path, i)));
  });
  return errs;
}
// ValidateCondition
function validateCondition(c, path) {
  const errs = [...validateLabelName(String(c.type ?? ""), child(path, "type"))];
  const statuses = ["False", "True", "Unknown"];
  if (!statuses.includes(c.status)) errs.push(notSupported(child(path, "status"), c.status ?? "", statuses));
  if ((c.observedGeneration ?? 0) < 0) errs.push(invalid(child(path, "observedGeneration"), c.observedGeneration, "must be greater than or equal to zero"));
  if (isZeroTime(c.lastTransitionTime)) errs.push(required(child(path, "lastTransitionTime"), "must be set"));
  const reason = String(c.reason ?? "");
  if (reason.length === 0) {
    errs.push(required(child(path, "reason"), "must be set"));
  } else {
    if (!conditionReasonRe.test(reason)) {
      errs.push(invalid(child(path, "reason"), reason,
        regexError(conditionReasonErrMsg, conditionReasonFmt, "my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB")));
    }
    if (blen(reason) > maxReasonLen) errs.push(tooLong(child(path, "reason"), maxReasonLen));
  }
  if (blen(c.message ?? "") > maxMessageLen) errs.push(tooLong(child(path, "message"), maxMessageLen));
  return errs;
}

// --- IP addresses (apimachinery ip.go IsValidInterfaceAddress) -----------------------------

const BIG = 0xffffff;
// Go's dtoi / xtoi (net package): digits from the start of s; [n, consumed, ok].
function dtoi(s) {
  let n = 0;
  let i = 0;
  for (; i < s.length && s[i] >= "0" && s[i] <= "9"; i++) {
    n = n * 10 + (s.charCodeAt(i) - 48);
    if (n >= BIG) return [BIG, i, false];
  }
  return i === 0 ? [0, 0, false] : [n, i, true];
}
function xtoi(s) {
  let n = 0;
  let i = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let d;
    if (c >= 0x30 && c <= 0x39) d = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
    else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
    else break;
    n = n * 16 + d;
    if (n >= BIG) return [0, i, false];
  }
  return i === 0 ? [0, i, false] : [n, i, true];
}
// k8s.io/utils/net parseIPv4 (Go 1.16's, leading zeros allowed): a 16-byte IPv4-mapped IP.
function parseIPv4(s) {
  const p = [];
  for (let i = 0; i < 4; i++) {
    if (s.length === 0) return null;
    if (i > 0) {
      if (s[0] !== ".") return null;
      s = s.slice(1);
    }
    const [n, c, ok] = dtoi(s);
    if (!ok || n > 0xff) return null;
    s = s.slice(c);
    p.push(n);
  }
  if (s.length !== 0) return null;
  return [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...p];
}
// k8s.io/utils/net parseIPv6 (Go 1.16's)
function parseIPv6(s) {
  const ip = new Array(16).fill(0);
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ":" && s[1] === ":") {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return ip;
  }
  let i = 0;
  while (i < 16) {
    const [n, c, ok] = xtoi(s);
    if (!ok || n > 0xffff) return null;
    if (c < s.length && s[c] === ".") {
      if (ellipsis < 0 && i !== 12) return null;
      if (i + 4 > 16) return null;
      const ip4 = parseIPv4(s);
      if (!ip4) return null;
      for (let k = 0; k < 4; k++) ip[i + k] = ip4[12 + k];
      s = "";
      i += 4;
      break;
    }
    ip[i] = n >> 8;
    ip[i + 1] = n & 0xff;
    i += 2;
    s = s.slice(c);
    if (s.length === 0) break;
    if (s[0] !== ":" || s.length === 1) return null;
    s = s.slice(1);
    if (s[0] === ":") {
      if (ellipsis >= 0) return null;
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) return null;
  if (i < 16) {
    if (ellipsis < 0) return null;
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j];
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) ip[j] = 0;
  } else if (ellipsis >= 0) {
    return null;
  }
  return ip;
}
const isV4Mapped = (ip) => ip.slice(0, 10).every((b) => b === 0) && ip[10] === 0xff && ip[11] === 0xff;
// net.IP.String: dotted for IPv4 (and IPv4-mapped), else RFC 5952 (the first longest run of
// two or more zero groups as "::", lower-case hex without leading zeros).
function ipString(ip) {
  if (isV4Mapped(ip)) return ip.slice(12).join(".");
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push((ip[i] << 8) | ip[i + 1]);
  let zs = -1;
  let ze = -1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i >= 2 && j - i > ze - zs) {
      zs = i;
      ze = j;
    }
  }
  let out = "";
  for (let i = 0; i < 8; i++) {
    if (i === zs) {
      out += "::";
      i = ze - 1;
      continue;
    }
    if (i > 0 && !out.endsWith(":")) out += ":";
    out += groups[i].toString(16);
  }
  return out;
}
// k8s.io/utils/net ParseCIDRSloppy: [ip (16 bytes), mask bits, address length in bits] or null.
function parseCIDRSloppy(s) {
  const slash = s.indexOf("/");
  if (slash < 0) return null;
  const addr = s.slice(0, slash);
  const mask = s.slice(slash + 1);
  let bits = 32;
  let ip = parseIPv4(addr);
  if (!ip) {
    bits = 128;
    ip = parseIPv6(addr);
  }
  const [n, i, ok] = dtoi(mask);
  if (!ip || !ok || i !== mask.length || n < 0 || n > bits) return null;
  return { ip, ones: n, bits };
}
// IsValidInterfaceAddress: a complete address with its prefix length, in canonical form.
export function isValidInterfaceAddress(path, value) {
  const parsed = parseCIDRSloppy(String(value));
  if (!parsed) return [invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")];
  let maskSize = parsed.ones;
  if (isV4Mapped(parsed.ip) && maskSize > 32) maskSize -= 96; // "::ffff:192.168.0.1/120" -> "192.168.0.1/24"
  const canonical = `${ipString(parsed.ip)}/${maskSize}`;
  if (value !== canonical) return [invalid(path, value, `must be in canonical form (${goQuote(canonical)})`)];
  return [];
}

// --- RawExtension (validateRawExtension) and Go's JSON syntax errors -----------------------

// Raw bytes of a RawExtension as a request carried them (tests use this to write Go's
// runtime.RawExtension{Raw: ...} exactly, invalid JSON included).
export class RawJSON {
  constructor(text) { this.text = String(text); }
}
// RawExtension.Raw of a JSON value: as is for RawJSON; null/undefined: none; anything else
// as json.Marshal prints the decoded value (what server-side apply stores).
export function rawBytes(v) {
  if (v instanceof RawJSON) return v.text;
  if (!isSet(v)) return "";
  return goJSON(v);
}

// encoding/json quoteChar
function quoteChar(c) {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return "'\"'";
  const q = goQuote(String.fromCharCode(c));
  return `'${q.slice(1, -1)}'`;
}
class JSONSyntax extends Error {}
// encoding/json checkValid: null when `text` is one valid JSON value, else the error text of
// Go's scanner (the first error a left-to-right scan meets).
export function goJSONSyntaxError(text) {
  const b = Buffer.from(text, "utf8");
  let i = 0;
  const eof = () => { throw new JSONSyntax("unexpected end of JSON input"); };
  const bad = (ctx) => { throw new JSONSyntax(`invalid character ${quoteChar(b[i])} ${ctx}`); };
  const ws = () => { while (i < b.length && (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0a || b[i] === 0x0d)) i++; };
  const isDigit = (c) => c >= 0x30 && c <= 0x39;
  const isHex = (c) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
  // A number's end: returns whether it may end here (for the top level's EOF check).
  const number = () => {
    if (b[i] === 0x2d) {
      i++;
      if (i >= b.length) eof();
      if (!isDigit(b[i])) bad("in numeric literal");
    }
    if (b[i] === 0x30) i++;
    else while (i < b.length && isDigit(b[i])) i++;
    if (i < b.length && b[i] === 0x2e) {
      i++;
      if (i >= b.length) eof();
      if (!isDigit(b[i])) bad("after decimal point in numeric literal");
      while (i < b.length && isDigit(b[i])) i++;
    }
    if (i < b.length && (b[i] === 0x65 || b[i] === 0x45)) {
      i++;
      if (i < b.length && (b[i] === 0x2b || b[i] === 0x2d)) i++;
      if (i >= b.length) eof();
      if (!isDigit(b[i])) bad("in exponent of numeric literal");
      while (i < b.length && isDigit(b[i])) i++;
    }
  };
  const literal = (word) => {
    i++;
    for (const ch of word.slice(1)) {
      if (i >= b.length) eof();
      if (b[i] !== ch.charCodeAt(0)) bad(`in literal ${word} (expecting '${ch}')`);
      i++;
    }
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= b.length) eof();
      const c = b[i];
      if (c === 0x22) { i++; return; }
      if (c === 0x5c) {
        i++;
        if (i >= b.length) eof();
        if (b[i] === 0x75) {
          i++;
          for (let k = 0; k < 4; k++) {
            if (i >= b.length) eof();
            if (!isHex(b[i])) bad("in \\u hexadecimal character escape");
            i++;
          }
          continue;
        }
        if (!'"\\/bfnrt'.includes(String.fromCharCode(b[i]))) bad("in string escape code");
        i++;
        continue;
      }
      if (c < 0x20) bad("in string literal");
      i++;
    }
  };
  const value = () => {
    ws();
    if (i >= b.length) eof();
    const c = b[i];
    if (c === 0x7b) return object();
    if (c === 0x5b) return array();
    if (c === 0x22) return string();
    if (c === 0x2d || isDigit(c)) return number();
    if (c === 0x74) return literal("true");
    if (c === 0x66) return literal("false");
    if (c === 0x6e) return literal("null");
    return bad("looking for beginning of value");
  };
  // An object or an array from its opening byte: members (each read by `member`, which
  // skips the white space before it) separated by commas up to the `close` byte.
  const members = (close, member, afterMember) => {
    i++;
    ws();
    if (i >= b.length) eof();
    if (b[i] === close) { i++; return; }
    for (;;) {
      member();
      ws();
      if (i >= b.length) eof();
      if (b[i] === close) { i++; return; }
      if (b[i] !== 0x2c) bad(afterMember);
      i++;
    }
  };
  const keyValue = () => {
    ws();
    if (i >= b.length) eof();
    if (b[i] !== 0x22) bad("looking for beginning of object key string");
    string();
    ws();
    if (i >= b.length) eof();
    if (b[i] !== 0x3a) bad("after object key");
    i++;
    value();
  };
  const object = () => members(0x7d, keyValue, "after object key:value pair");
  const array = () => members(0x5d, value, "after array element");
  try {
    value();
    ws();
    if (i < b.length) bad("after top-level value");
    return null;
  } catch (e) {
    if (e instanceof JSONSyntax) return e.message;
    throw e;
  }
}

// validateRawExtension: required, at most `max` bytes when new, a JSON object.
function validateRawExtension(raw, path, stored, max) {
  if (raw.length === 0) return [required(path, "")];
  if (!stored && blen(raw) > max) return [tooLong(path, max)];
  const syntax = goJSONSyntaxError(raw);
  if (syntax) return [invalid(path, OMIT_VALUE, `error parsing data as JSON: ${syntax}`)];
  const v = JSON.parse(raw);
  if (v === null) return [required(path, "")];
  if (typeof v !== "object" || Array.isArray(v)) return [invalid(path, OMIT_VALUE, "must be a valid JSON object")];
  return [];
}

// --- Allocation results (validation.go) ----------------------------------------------------

// validateDeviceToleration (the None effect from 1.35, as for slices' taints)
function validateDeviceToleration(t, path, ctx) {
  const errs = [];
  const effects = ctx.has("taintEffectNone") ? ["NoExecute", "NoSchedule", "None"] : ["NoExecute", "NoSchedule"];
  if (t?.key) errs.push(...validateLabelName(String(t.key), child(path, "key")));
  switch (t?.operator ?? "") {
    case "Exists":
      if (t?.value) errs.push(invalid(child(path, "value"), t.value, "must be empty for operator `Exists`"));
      break;
    case "Equal":
      errs.push(...validateLabelValue(String(t?.value ?? ""), child(path, "value")));
      break;
    case "":
      errs.push(required(child(path, "operator"), ""));
      break;
    default:
      errs.push(notSupported(child(path, "operator"), t.operator, ["Equal", "Exists"]));
  }
  if (t?.effect && !effects.includes(t.effect)) errs.push(notSupported(child(path, "effect"), t.effect, effects));
  return errs;
}

// validateSkipNodeOperations (1.37): NodePrepareResources may only be skipped with
// NodeUnprepareResources (or "*"). The enum and uniqueness are declarative-only (not ported).
const validateSkipNodeOperations = (ops, path, ctx) => (ctx.has("v137Fields") ? validateSkipNodeOps(ops, path) : []);

// validateDeviceRequestAllocationResult
function validateDeviceRequestAllocationResult(r, path, names, ctx) {
  const errs = [];
  errs.push(...validateRequestNameRef(r?.request, child(path, "request"), names));
  errs.push(...validateDriverName(r?.driver, child(path, "driver"), ctx));
  errs.push(...validatePoolName(r?.pool, child(path, "pool")));
  errs.push(...validateDeviceName(String(r?.device ?? ""), child(path, "device")));
  errs.push(...validateDeviceBindingParameters(r?.bindingConditions, r?.bindingFailureConditions, path));
  list(r?.tolerations).forEach((t, i) => errs.push(...validateDeviceToleration(t, index(child(path, "tolerations"), i), ctx)));
  if (isSet(r?.shareID)) errs.push(...validateUID(r.shareID, child(path, "shareID")));
  errs.push(...validateSkipNodeOperations(r?.skipNodeOperations, child(path, "skipNodeOperations"), ctx));
  return errs;
}

// validateAllocationConfigSource
function validateAllocationConfigSource(source, path) {
  if (!source) return [required(path, "")];
  if (source === "FromClaim" || source === "FromClass") return [];
  return [notSupported(path, source, ["FromClaim", "FromClass"])];
}
// validateOpaqueConfiguration
function validateOpaqueConfiguration(opaque, path, stored, ctx) {
  return [
    ...validateDriverName(opaque?.driver, child(path, "driver"), ctx),
    ...validateRawExtension(rawBytes(opaque?.parameters), child(path, "parameters"), stored, L.OpaqueParametersMaxLength),
  ];
}
// validateDeviceConfiguration
function validateDeviceConfiguration(config, path, stored, ctx) {
  if (!isSet(config?.opaque)) return [required(child(path, "opaque"), "")];
  return validateOpaqueConfiguration(config.opaque, child(path, "opaque"), stored, ctx);
}
// validateDeviceAllocationConfiguration
function validateDeviceAllocationConfiguration(config, path, names, stored, ctx) {
  return [
    ...validateAllocationConfigSource(config?.source, child(path, "source")),
    ...validateSet(config?.requests, L.DeviceRequestsMaxSize, (n, p) => validateRequestNameRef(n, p, names), (n) => String(n),
      child(path, "requests")),
    ...validateDeviceConfiguration(config, path, stored, ctx),
  ];
}
// validateDeviceAllocationResult
function validateDeviceAllocationResult(devices, path, names, stored, ctx) {
  return [
    ...validateSlice(devices?.results, L.AllocationResultsMaxSize, (r, p) => validateDeviceRequestAllocationResult(r, p, names, ctx),
      child(path, "results")),
    ...validateSlice(devices?.config, 2 * L.DeviceConfigMaxSize, (c, p) => validateDeviceAllocationConfiguration(c, p, names, stored, ctx),
      child(path, "config")),
  ];
}
// validateAllocationResult: only for a new allocation (the rules for new results are tighter
// than for stored ones).
function validateAllocationResult(allocation, path, names, stored, ctx) {
  const errs = validateDeviceAllocationResult(allocation?.devices ?? {}, child(path, "devices"), names, stored, ctx);
  if (isSet(allocation?.nodeSelector)) errs.push(...validateNodeSelector(allocation.nodeSelector, child(path, "nodeSelector")));
  return errs;
}

// --- status.devices (validation.go) --------------------------------------------------------

// validateNetworkDeviceData
function validateNetworkDeviceData(data, path) {
  if (!isSet(data)) return [];
  const errs = [];
  if (blen(data.interfaceName ?? "") > L.NetworkDeviceDataInterfaceNameMaxLength) {
    errs.push(tooLong(child(path, "interfaceName"), L.NetworkDeviceDataInterfaceNameMaxLength).withOrigin("maxBytes"));
  }
  if (blen(data.hardwareAddress ?? "") > L.NetworkDeviceDataHardwareAddressMaxLength) {
    errs.push(tooLong(child(path, "hardwareAddress"), L.NetworkDeviceDataHardwareAddressMaxLength).withOrigin("maxBytes"));
  }
  errs.push(...validateSet(data.ips, L.NetworkDeviceDataMaxIPs, (a, p) => isValidInterfaceAddress(p, String(a)), (a) => String(a),
    child(path, "ips")));
  return errs;
}

// validateDeviceStatus
function validateDeviceStatus(d, path, allocated, ctx) {
  const errs = [];
  errs.push(...validateDriverName(d.driver, child(path, "driver"), ctx));
  errs.push(...validatePoolName(d.pool, child(path, "pool")));
  errs.push(...validateDeviceName(String(d.device ?? ""), child(path, "device")));
  if (isSet(d.shareID)) errs.push(...validateUID(d.shareID, child(path, "shareID")));
  if (!allocated.has(sharedKey(d.driver, d.pool, d.device, d.shareID))) {
    errs.push(invalid(path, sharedDeviceID(d.driver, d.pool, d.device, d.shareID), "must be an allocated device in the claim"));
  }
  if (len(d.conditions) > L.AllocatedDeviceStatusMaxConditions) {
    errs.push(tooMany(child(path, "conditions"), len(d.conditions), L.AllocatedDeviceStatusMaxConditions));
  }
  errs.push(...validateConditions(d.conditions, child(path, "conditions")));
  const raw = rawBytes(d.data);
  if (raw.length > 0) errs.push(...validateRawExtension(raw, child(path, "data"), false, L.AllocatedDeviceStatusDataMaxLength));
  errs.push(...validateNetworkDeviceData(d.networkData, child(path, "networkData")));
  return errs;
}

// validateResourceClaimUserReference
function validateResourceClaimUserReference(ref, path) {
  const errs = [];
  if (!ref?.resource) errs.push(required(child(path, "resource"), ""));
  if (!ref?.name) errs.push(required(child(path, "name"), ""));
  if (!ref?.uid) errs.push(required(child(path, "uid"), ""));
  return errs;
}

// validateResourceClaimStatusUpdate
function validateResourceClaimStatusUpdate(status, oldStatus, claimDeleted, names, path, ctx) {
  const errs = [];
  const reservedFor = child(path, "reservedFor");
  errs.push(...validateSet(status.reservedFor, L.ResourceClaimReservedForMaxSize, validateResourceClaimUserReference,
    (ref) => String(ref?.uid ?? ""), reservedFor));
  const allocated = isSet(status.allocation) ? gatherAllocatedDevices(status.allocation.devices) : new Set();
  errs.push(...validateSet(status.devices, -1, (d, p) => validateDeviceStatus(d ?? {}, p, allocated, ctx),
    (d) => sharedDeviceID(d?.driver, d?.pool, d?.device, d?.shareID), child(path, "devices")));

  if (len(status.reservedFor) > 0) {
    if (!isSet(status.allocation)) {
      errs.push(forbidden(reservedFor, "may not be specified when `allocated` is not set"));
    } else if (claimDeleted) {
      // Entries may go while the claim is being deleted, not come.
      const refKey = (r) => JSON.stringify([r?.apiGroup ?? "", r?.resource ?? "", r?.name ?? "", r?.uid ?? ""]);
      const old = new Set(list(oldStatus.reservedFor).map(refKey));
      if (list(status.reservedFor).some((r) => !old.has(refKey(r)))) {
        errs.push(forbidden(reservedFor, "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"));
      }
    }
  }

  const allocationPath = child(path, "allocation");
  if (isSet(oldStatus.allocation) && isSet(status.allocation)) {
    if (!semanticEqual(status.allocation, oldStatus.allocation, ALLOCATION)) {
      errs.push(invalid(allocationPath, status.allocation, "field is immutable").withOrigin("update"));
    }
  } else if (isSet(status.allocation)) {
    errs.push(...validateAllocationResult(status.allocation, allocationPath, names, false, ctx));
  }
  return errs;
}

// ValidateResourceClaimStatusUpdate
export function ValidateResourceClaimStatusUpdate(claim, oldClaim, opts = {}) {
  const ctx = context(opts);
  const errs = validateObjectMetaUpdate(claim?.metadata, oldClaim?.metadata, "metadata");
  const names = gatherRequestNames(claim?.spec?.devices);
  errs.push(...validateResourceClaimStatusUpdate(claim?.status ?? {}, oldClaim?.status ?? {},
    isSet(claim?.metadata?.deletionTimestamp), names, "status", ctx));
  return errs;
}

// --- The status strategy (pkg/registry/resource/resourceclaim/strategy.go) -----------------

// metav1.ResetObjectMetaForStatus: a status write cannot change these.
export function resetObjectMetaForStatus(meta, old) {
  for (const f of ["deletionTimestamp", "generation", "selfLink", "labels", "annotations", "finalizers", "ownerReferences"]) {
    if (isSet(old?.[f])) meta[f] = structuredClone(old[f]);
    else delete meta[f];
  }
}

// isDRAResourceClaimDeviceStatusInUse
const deviceStatusInUse = (claim) => len(claim?.status?.devices) > 0;

// pkg/api/resourceclaimspec DRAConsumableCapacityFeatureInUse
function specConsumableCapacityInUse(spec) {
  if (!spec) return false;
  if (list(spec.devices?.constraints).some((c) => isSet(c?.distinctAttribute))) return true;
  return list(spec.devices?.requests).some((r) => isSet(r?.exactly?.capacity) || list(r?.firstAvailable).some((s) => isSet(s?.capacity)));
}
// draConsumableCapacityFeatureInUse
function consumableCapacityInUse(claim) {
  if (!claim) return false;
  if (specConsumableCapacityInUse(claim.spec)) return true;
  if (list(claim.status?.allocation?.devices?.results).some((r) => isSet(r?.shareID) || isSet(r?.consumedCapacity))) return true;
  return list(claim.status?.devices).some((d) => isSet(d?.shareID));
}
// draDeviceBindingConditionsInUse
const bindingConditionsInUse = (claim) => list(claim?.status?.allocation?.devices?.results)
  .some((r) => isSet(r?.bindingConditions) || isSet(r?.bindingFailureConditions));

function dropField(obj, field, what, dropped) {
  if (obj && isSet(obj[field])) dropped.add(what);
  if (obj && field in obj) delete obj[field];
}

// dropDisabledDRAResourceClaimDeviceStatusFields: status.devices goes with the gate off,
// unless the stored claim already has some.
export function dropDisabledDRAResourceClaimDeviceStatusFields(gates, claim, old, dropped = new Set()) {
  if (!gates.DRAResourceClaimDeviceStatus && !deviceStatusInUse(old)) dropField(claim.status, "devices", "status.devices", dropped);
  return dropped;
}
// dropDisabledDRAResourceClaimConsumableCapacityStatusFields
function dropDisabledConsumableCapacityStatusFields(gates, claim, old, dropped) {
  if (gates.DRAConsumableCapacity || consumableCapacityInUse(old)) return;
  for (const r of list(claim.status?.allocation?.devices?.results)) {
    dropField(r, "shareID", "status.allocation.devices.results[].shareID", dropped);
    dropField(r, "consumedCapacity", "status.allocation.devices.results[].consumedCapacity", dropped);
  }
  for (const d of list(claim.status?.devices)) dropField(d, "shareID", "status.devices[].shareID", dropped);
}
// dropDeviceBindingConditionsFields
function dropBindingConditionsFields(gates, claim, old, dropped) {
  if (gates.DRADeviceBindingConditions || bindingConditionsInUse(old)) return;
  for (const r of list(claim.status?.allocation?.devices?.results)) {
    dropField(r, "bindingConditions", "status.allocation.devices.results[].bindingConditions", dropped);
    dropField(r, "bindingFailureConditions", "status.allocation.devices.results[].bindingFailureConditions", dropped);
  }
}
// dropDisabledStatusFields
export function dropDisabledStatusFields(gates, claim, old) {
  const dropped = new Set();
  claim.status ??= {};
  dropDisabledDRAResourceClaimDeviceStatusFields(gates, claim, old, dropped);
  for (const p of dropDisabledDRAAdminAccessStatusFields(gates, claim, old)) dropped.add(p);
  dropDisabledConsumableCapacityStatusFields(gates, claim, old, dropped);
  dropBindingConditionsFields(gates, claim, old, dropped);
  return [...dropped];
}

// dropDeallocatedStatusDevices: entries for devices the old allocation had and the new one
// has not go (stale status after deallocation). Nothing to do with the gate off and no
// entries stored.
export function dropDeallocatedStatusDevices(gates, claim, old) {
  if (!gates.DRAResourceClaimDeviceStatus && !deviceStatusInUse(old)) return [];
  const gone = gatherAllocatedDevices(old?.status?.allocation?.devices);
  for (const k of gatherAllocatedDevices(claim.status?.allocation?.devices)) gone.delete(k);
  const devices = list(claim.status?.devices);
  const kept = devices.filter((d) => !gone.has(sharedKey(d?.driver, d?.pool, d?.device, d?.shareID)));
  const dropped = kept.length < devices.length ? ["status.devices[] (deallocated)"] : [];
  if (claim.status && "devices" in claim.status) {
    if (kept.length) claim.status.devices = kept;
    else delete claim.status.devices;
  }
  return dropped;
}

// resourceclaimStatusStrategy.PrepareForUpdate: the spec stays the stored one, the metadata a
// status write cannot change is reset, the disabled gates' fields go, then the stale entries.
// Changes `claim` in place; returns the dropped field paths.
export function claimStatusPrepareForUpdate(gates, claim, old) {
  if (isSet(old?.spec)) claim.spec = structuredClone(old.spec);
  else delete claim.spec;
  claim.metadata ??= {};
  resetObjectMetaForStatus(claim.metadata, old?.metadata ?? {});
  return [...dropDisabledStatusFields(gates, claim, old), ...dropDeallocatedStatusDevices(gates, claim, old)];
}

// resourceclaimStatusStrategy.ValidateUpdate: AuthorizedForAdminStatus; from 1.36, with
// DRAResourceClaimGranularStatusAuthorization on, AuthorizedForBinding (at status.allocation)
// and AuthorizedForDeviceStatus (at status.devices); then ValidateResourceClaimStatusUpdate.
// `getNamespace(name)` is the strategy's nsClient.Get (kube_release.mjs). `authz`: {authorize,
// request} (claim_status_authz.mjs), the strategy's authorizer and the request's attributes;
// without it (the fake without /rbac) the granular checks do not run: every writer may.
export function claimStatusValidateUpdate(claim, old, opts = {}) {
  const getNamespace = opts.getNamespace ?? ((name) => ({ metadata: { name, labels: {} } }));
  const errs = authorizedForAdminStatus(claim.status?.allocation?.devices?.results, old?.status?.allocation?.devices?.results,
    claim.metadata?.namespace ?? "", getNamespace);
  if (opts.authz && context(opts).has("granularStatusAuthorization") && opts.gates?.DRAResourceClaimGranularStatusAuthorization) {
    const { authorize, request } = opts.authz;
    errs.push(...authorizedForBinding("status.allocation", authorize, request, claim.status ?? {}, old?.status ?? {}));
    errs.push(...authorizedForDeviceStatus("status.devices", authorize, request, claim.status ?? {}, old?.status ?? {}));
  }
  errs.push(...ValidateResourceClaimStatusUpdate(claim, old, opts));
  return errs;
}
