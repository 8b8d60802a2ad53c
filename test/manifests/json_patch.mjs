// RFC 6902 JSON Patch as kube-apiserver applies it to an object (Content-Type
// application/json-patch+json): the fake kube-apiserver's nodes/status PATCH (fake_apiserver.mjs)
// uses it. Written from the upstream sources, in JavaScript, none of the Go copied:
//  - staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go, jsonPatcher.applyJSPatch:
//    with fieldValidation Warn (the server's default when the request names none) or Strict,
//    the body is first decoded strictly into []jsonPatchOp (a failure is 400 BadRequest
//    "error decoding patch: <error>"); then jsonpatch.DecodePatch (a failure is 400 with the
//    decoder's error alone); more than maxJSONPatchOperations (10000) operations is 413
//    RequestEntityTooLarge; an error of Patch.Apply is turned into
//    errors.NewGenericServerResponse(422, "", GroupResource{}, "", err.Error(), 0, false):
//    reason Invalid, message "the server rejected our request due to an error in our request",
//    details {} -- the library's own text is dropped (causes are only kept for an unexpected
//    response), so a failed `test` and a `remove` of a missing path answer the same. Upstream's
//    rest_test.go TestJSONPatch ("invalid-semantics": a test of /invalid/path) asserts that text.
//  - gopkg.in/evanphx/json-patch.v4 (what kube-apiserver vendors; patch.go): Patch.ApplyIndent
//    and its operations add, remove, replace, move, test, copy, findObject, decodePatchKey
//    (~1 then ~0, one pass), the containers partialDoc and partialArray (negative indices
//    allowed: SupportNegativeIndices is true), lazyNode.equal, AccumulatedCopySizeLimit (which
//    kube-apiserver arms from its JSONPatchMaxCopyBytes, 3 MiB by default: server/config.go),
//    and their error texts (kept for the fake's own record, stats.invalid, since the server
//    does not send them).
//    The library's quirks are kept: `replace` of a key an object lacks adds it (partialDoc.get
//    never fails); `test` with value null (or none) passes on a missing or null member; a
//    `move` whose source key is missing fails in the remove ("error in move for path: '<key>':
//    Unable to remove nonexistent key ..."); the errors name the path as written (~1 escaped),
//    except "Unable to remove nonexistent key: <key>", which names the decoded key.
//  - What Apply returns: json.Marshal of the document, where every object the patch walked
//    into (findObject's intoDoc, a successful `test`'s equal) and the document itself are Go
//    maps, written with their keys sorted; objects it did not walk into keep the order they
//    had. marshal() reproduces this; the fake quotes that text in a decoding error.
//
// Approximated, said rather than hidden:
//  - Values are JavaScript values, not raw bytes: a number is written back as JavaScript prints
//    it (1.50 as 1.5), and `test` compares scalars by their JSON text after that (Go compares
//    the compacted bytes: 0 and 0.0 differ there, not here). Keys that are array indices ("2")
//    come first in an object JavaScript parsed, whatever their place in the patch.
//  - A JSON null inside the document is a null member here; Go's partialDoc holds a nil node
//    for it and would panic (a 500) if a patch walked through it; here the walk just fails.
//  - `replace` of the whole document ("") without a value panics in Go; here it fails as a
//    value that is not an object or array does.
//  - Unknown fields in an operation (fieldValidation Warn: a warning "json patch unknown field
//    ..."; Strict: 422) are not reported.
import { goJSONSyntaxError } from "./claim_status_validation.mjs";

export const MAX_JSON_PATCH_OPERATIONS = 10000; // patch.go maxJSONPatchOperations
export const JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024; // apiserver's default JSONPatchMaxCopyBytes
// errors.NewGenericServerResponse's message for 422.
export const GENERIC_UNPROCESSABLE = "the server rejected our request due to an error in our request";

// The Status of a failed Patch.Apply (NewGenericServerResponse with no group, resource, name).
export function applyFailedStatus() {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: GENERIC_UNPROCESSABLE,
    reason: "Invalid", details: {}, code: 422 };
}

// An error of Patch.Apply: `message` as the library words it, `op` the kind of the operation
// that failed ("test", "remove", ...; "unknown" for a missing or non-string op).
export class JSONPatchError extends Error {
  constructor(message, op) {
    super(message);
    this.op = op;
  }
}
// A body that does not decode as a patch: `message` is the 400's message, `code` 400 or 413.
export class JSONPatchDecodeError extends Error {
  constructor(message, code = 400, reason = "BadRequest") {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

// encoding/json's name for the JSON type of `v` in an UnmarshalTypeError.
const jsonKind = (v) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "object" ? "object"
  : typeof v === "boolean" ? "bool" : typeof v);

// Decodes the body of a json-patch request as patch.go does. `validation` is the request's
// fieldValidation ("" is the server's default, Warn). Returns the operations (plain objects,
// or null for an operation written as null), or throws JSONPatchDecodeError.
export function decodePatch(text, validation = "") {
  const strict = validation === "" || validation === "Warn" || validation === "Strict";
  const syntax = goJSONSyntaxError(text);
  if (syntax) throw new JSONPatchDecodeError(strict ? `error decoding patch: ${syntax}` : syntax);
  const ops = JSON.parse(text);
  if (strict) {
    // kjson.UnmarshalStrict into []jsonPatchOp {Op, Path, From string; Value interface{}}.
    const fail = (m) => { throw new JSONPatchDecodeError(`error decoding patch: ${m}`); };
    if (ops !== null && !Array.isArray(ops)) fail(`json: cannot unmarshal ${jsonKind(ops)} into Go value of type []handlers.jsonPatchOp`);
    for (const op of ops ?? []) {
      if (op === null) continue;
      if (typeof op !== "object" || Array.isArray(op)) fail(`json: cannot unmarshal ${jsonKind(op)} into Go value of type handlers.jsonPatchOp`);
      for (const f of ["op", "path", "from"]) {
        if (op[f] !== undefined && op[f] !== null && typeof op[f] !== "string") {
          fail(`json: cannot unmarshal ${jsonKind(op[f])} into Go struct field jsonPatchOp.${f} of type string`);
        }
      }
    }
  }
  // jsonpatch.DecodePatch: a Patch is []Operation, an Operation map[string]*json.RawMessage.
  if (ops === null) return [];
  if (!Array.isArray(ops)) throw new JSONPatchDecodeError(`json: cannot unmarshal ${jsonKind(ops)} into Go value of type jsonpatch.Patch`);
  for (const op of ops) {
    if (op !== null && (typeof op !== "object" || Array.isArray(op))) {
      throw new JSONPatchDecodeError(`json: cannot unmarshal ${jsonKind(op)} into Go value of type jsonpatch.Operation`);
    }
  }
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new JSONPatchDecodeError(`Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`,
      413, "RequestEntityTooLarge");
  }
  return ops;
}

// decodePatchKey: "~1" -> "/", "~0" -> "~", in one left-to-right pass (strings.NewReplacer).
export const decodePatchKey = (k) => k.replace(/~[01]/g, (m) => (m === "~1" ? "/" : "~"));

// strconv.Atoi: [+-]digits in the int64 range; its errors as Go prints them.
function atoi(s) {
  const quoted = JSON.stringify(s);
  if (!/^[+-]?\d+$/.test(s)) return { err: `strconv.Atoi: parsing ${quoted}: invalid syntax` };
  const n = BigInt(s);
  if (n > 2n ** 63n - 1n || n < -(2n ** 63n)) return { err: `strconv.Atoi: parsing ${quoted}: value out of range` };
  return { n: Number(n) };
}
const invalidIndex = (idx) => `Unable to access invalid index: ${idx}: invalid index referenced`;
const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
// A member set without an own "__proto__" accessor getting in the way.
const put = (o, k, v) => Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });

// container.get: {value} (undefined for an object's missing key) or {err}.
function get(con, key) {
  if (!Array.isArray(con)) return { value: own(con, key) ? con[key] : undefined };
  const { n, err } = atoi(key);
  if (err) return { err };
  let idx = n;
  if (idx < 0) {
    if (idx < -con.length) return { err: invalidIndex(idx) };
    idx += con.length;
  }
  if (idx >= con.length) return { err: invalidIndex(idx) };
  return { value: con[idx] };
}
// container.add: an object's key set (or replaced); into an array at an index or "-" (the end).
function add(con, key, val) {
  if (!Array.isArray(con)) return void put(con, key, val);
  if (key === "-") return void con.push(val);
  const { n, err } = atoi(key);
  if (err) return `value was not a proper array index: '${key}': ${err}`;
  const size = con.length + 1;
  let idx = n;
  if (idx >= size) return invalidIndex(idx);
  if (idx < 0) {
    if (idx < -size) return invalidIndex(idx);
    idx += size;
  }
  con.splice(idx, 0, val);
  return undefined;
}
// container.set (the `replace` of an existing key or index).
function set(con, key, val) {
  if (!Array.isArray(con)) return void put(con, key, val);
  const { n, err } = atoi(key);
  if (err) return err;
  let idx = n;
  if (idx < 0) {
    if (idx < -con.length) return invalidIndex(idx);
    idx += con.length;
  }
  con[idx] = val;
  return undefined;
}
// container.remove
function remove(con, key) {
  if (!Array.isArray(con)) {
    if (!own(con, key)) return `Unable to remove nonexistent key: ${key}: missing value`;
    delete con[key];
    return undefined;
  }
  const { n, err } = atoi(key);
  if (err) return err;
  let idx = n;
  if (idx >= con.length) return invalidIndex(idx);
  if (idx < 0) {
    if (idx < -con.length) return invalidIndex(idx);
    idx += con.length;
  }
  con.splice(idx, 1);
  return undefined;
}

// A document being patched: its root (an object or an array) and the objects that are Go maps
// by now (written with sorted keys).
class Doc {
  constructor(root, copyLimit) {
    this.root = root;
    this.copyLimit = copyLimit;
    this.copied = 0;
    this.maps = new WeakSet();
    if (isObject(root)) this.maps.add(root);
  }
  // findObject: the container of `path`'s last token and that token decoded, or null.
  find(path) {
    const split = path.split("/");
    if (split.length < 2) return null;
    let con = this.root;
    for (const part of split.slice(1, -1)) {
      const next = get(con, decodePatchKey(part));
      if (next.err || next.value === undefined || next.value === null) return null;
      if (Array.isArray(next.value)) {
        con = next.value;
      } else if (isObject(next.value)) {
        con = next.value;
        this.maps.add(con);
      } else {
        return null; // a scalar does not decode as a document
      }
    }
    return { con, key: decodePatchKey(split.at(-1)) };
  }
  // lazyNode.equal, which turns the stored side's objects into maps as it walks them.
  equal(a, b) {
    if (Array.isArray(a)) {
      return Array.isArray(b) && a.length === b.length && a.every((x, i) => this.equal(x, b[i]));
    }
    if (isObject(a)) {
      this.maps.add(a);
      if (!isObject(b)) return false;
      const ka = Object.keys(a);
      if (ka.length !== Object.keys(b).length) return false;
      return ka.every((k) => own(b, k) && ((a[k] === null) === (b[k] === null)) && (a[k] === null || this.equal(a[k], b[k])));
    }
    if (b !== null && typeof b === "object") return false;
    return marshal(a) === marshal(b);
  }
}

// Operation.Path / From: {value} or {err} (the field missing or null, or not a string).
function field(op, name, missing) {
  const v = op?.[name];
  if (v === undefined || v === null) return { err: `${missing}: missing value` };
  if (typeof v !== "string") return { err: `json: cannot unmarshal ${jsonKind(v)} into Go value of type string` };
  return { value: v };
}
const pathOf = (op) => field(op, "path", "operation missing path field");
const fromOf = (op) => field(op, "from", "operation, missing from field");
// Operation.value(): {present, value}; a value written as null is present and null.
const valueOf = (op) => (op && own(op, "value") ? { present: true, value: op.value } : { present: false, value: null });
const copyOf = (v) => (v === undefined ? null : structuredClone(v));

// The operations, each returning an error text or undefined.
const OPS = {
  add(doc, op) {
    const { value: path, err } = pathOf(op);
    if (err) return "add operation failed to decode path: missing value";
    const f = doc.find(path);
    if (!f) return `add operation does not apply: doc is missing path: "${path}": missing value`;
    const e = add(f.con, f.key, copyOf(valueOf(op).value));
    return e && `error in add for path: '${path}': ${e}`;
  },
  remove(doc, op) {
    const { value: path, err } = pathOf(op);
    if (err) return "remove operation failed to decode path: missing value";
    const f = doc.find(path);
    if (!f) return `remove operation does not apply: doc is missing path: "${path}": missing value`;
    const e = remove(f.con, f.key);
    return e && `error in remove for path: '${path}': ${e}`;
  },
  replace(doc, op) {
    const { value: path, err } = pathOf(op);
    if (err) return `replace operation failed to decode path: ${err}`;
    if (path === "") {
      const v = valueOf(op).value;
      if (v === null || typeof v !== "object") return "replace operation value must be object or array: %!w(<nil>)";
      doc.root = copyOf(v);
      if (isObject(doc.root)) doc.maps.add(doc.root);
      return undefined;
    }
    const f = doc.find(path);
    if (!f) return `replace operation does not apply: doc is missing path: ${path}: missing value`;
    if (get(f.con, f.key).err) return `replace operation does not apply: doc is missing key: ${path}: missing value`;
    const e = set(f.con, f.key, copyOf(valueOf(op).value));
    return e && `error in remove for path: '${path}': ${e}`;
  },
  move(doc, op) {
    const { value: from, err } = fromOf(op);
    if (err) return `move operation failed to decode from: ${err}`;
    const src = doc.find(from);
    if (!src) return `move operation does not apply: doc is missing from path: ${from}: missing value`;
    const got = get(src.con, src.key);
    if (got.err) return `error in move for path: '${src.key}': ${got.err}`;
    const e1 = remove(src.con, src.key);
    if (e1) return `error in move for path: '${src.key}': ${e1}`;
    const { value: path, err: perr } = pathOf(op);
    if (perr) return `move operation failed to decode path: ${perr}`;
    const dst = doc.find(path);
    if (!dst) return `move operation does not apply: doc is missing destination path: ${path}: missing value`;
    const e2 = add(dst.con, dst.key, got.value === undefined ? null : got.value);
    return e2 && `error in move for path: '${path}': ${e2}`;
  },
  test(doc, op) {
    const { value: path, err } = pathOf(op);
    if (err) return `test operation failed to decode path: ${err}`;
    const want = valueOf(op);
    if (path === "") return doc.equal(doc.root, want.value) ? undefined : "testing value  failed: test failed";
    const f = doc.find(path);
    if (!f) return `test operation does not apply: is missing path: ${path}: missing value`;
    const got = get(f.con, f.key);
    if (got.err) return `error in test for path: '${path}': ${got.err}`;
    if (got.value === undefined || got.value === null) {
      return !want.present || want.value === null ? undefined : `testing value ${path} failed: test failed`;
    }
    if (!want.present) return `testing value ${path} failed: test failed`;
    return doc.equal(got.value, want.value) ? undefined : `testing value ${path} failed: test failed`;
  },
  copy(doc, op) {
    const { value: from, err } = fromOf(op);
    if (err) return `copy operation failed to decode from: ${err}`;
    const src = doc.find(from);
    if (!src) return `copy operation does not apply: doc is missing from path: ${from}: missing value`;
    const got = get(src.con, src.key);
    if (got.err) return `error in copy for from: '${from}': ${got.err}`;
    const { value: path, err: perr } = pathOf(op);
    if (perr) return "copy operation failed to decode path: missing value";
    const dst = doc.find(path);
    if (!dst) return `copy operation does not apply: doc is missing destination path: ${path}: missing value`;
    // deepCopy: the source as it marshals now, decoded again (its key order is that text's);
    // its size in bytes counts against AccumulatedCopySizeLimit.
    let value = null;
    if (got.value !== undefined && got.value !== null) {
      const text = marshal(got.value, doc.maps);
      doc.copied += Buffer.byteLength(text);
      if (doc.copyLimit > 0 && doc.copied > doc.copyLimit) {
        return `Unable to complete the copy, the accumulated size increase of copy is ${doc.copied}, exceeding the limit ${doc.copyLimit}`;
      }
      value = JSON.parse(text);
    }
    const e = add(dst.con, dst.key, value);
    return e && `error while adding value during copy: ${e}`;
  },
};

// Patch.Apply of `ops` (decodePatch's) to `document` (not changed). Returns {doc, text}: the
// patched document and the text json.Marshal gives it (see the header); throws JSONPatchError.
// `copyLimit`: AccumulatedCopySizeLimit (0: none).
export function applyPatch(document, ops, { copyLimit = JSON_PATCH_MAX_COPY_BYTES } = {}) {
  const doc = new Doc(structuredClone(document), copyLimit);
  for (const op of ops) {
    const kind = typeof op?.op === "string" ? op.op : "unknown";
    const fn = Object.hasOwn(OPS, kind) ? OPS[kind] : null;
    const err = fn ? fn(doc, op) : `Unexpected kind: ${kind}`;
    if (err) throw new JSONPatchError(err, kind);
  }
  const text = marshal(doc.root, doc.maps);
  return { doc: JSON.parse(text), text };
}

// encoding/json's string encoding: JSON with <, >, & and U+2028/U+2029 escaped.
const goString = (s) => JSON.stringify(s).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026")
  .replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
// json.Marshal of a document: the objects in `maps` with sorted keys, the others as they are.
export function marshal(v, maps = new WeakSet()) {
  if (v === null || v === undefined) return "null";
  if (Array.isArray(v)) return `[${v.map((x) => marshal(x, maps)).join(",")}]`;
  if (typeof v === "object") {
    const keys = Object.keys(v);
    if (maps.has(v)) keys.sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
    return `{${keys.map((k) => `${goString(k)}:${marshal(v[k], maps)}`).join(",")}}`;
  }
  if (typeof v === "string") return goString(v);
  return JSON.stringify(v);
}
