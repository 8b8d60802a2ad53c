// What the tests of the fake kube-apiserver share (claim_status_validation_test.mjs,
// claim_status_authz_test.mjs, dra_admin_access_test.mjs, event_validation_test.mjs,
// kube_validation_test.mjs, rbac_authorizer_test.mjs): the expected field errors and
// upstream's assertFailures to compare them with, and starting,
// stopping and talking to fake_apiserver.mjs as a child process.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { GoStringer, goJSON } from "./kube_validation.mjs";

const fakeApiserver = path.join(path.dirname(fileURLToPath(import.meta.url)), "fake_apiserver.mjs");

// --- Expected errors, as upstream's field constructors ------------------------------------

export const E = {
  invalid: (field, value, detail, origin) => ({ type: "FieldValueInvalid", field, value, detail, origin }),
  required: (field, detail = "") => ({ type: "FieldValueRequired", field, detail }),
  forbidden: (field, detail) => ({ type: "FieldValueForbidden", field, detail }),
  duplicate: (field, value) => ({ type: "FieldValueDuplicate", field, value, detail: "" }),
  notFound: (field, value) => ({ type: "FieldValueNotFound", field, value, detail: "" }),
  notSupported: (field, value, valid) => ({ type: "FieldValueNotSupported", field, value,
    detail: "supported values: " + valid.map((v) => JSON.stringify(v)).join(", ") }),
  tooLong: (field, max) => ({ type: "FieldValueTooLong", field, detail: `may not be more than ${max} bytes` }),
  tooMany: (field, actual, max) => ({ type: "FieldValueTooMany", field, value: actual, detail: `must have at most ${max} items` }),
};
// An expected bad value that is a Go struct: not compared.
export const STRUCT = Symbol("a Go struct, not compared");

// A bad value as it is compared: a string as is, a number or boolean as printed, a GoStringer
// (a SharedDeviceID) by its String form, anything else as JSON.
export const renderBadValue = (v) => (v instanceof GoStringer ? `S:${v.s}` : typeof v === "string" ? v
  : typeof v === "number" || typeof v === "bigint" || typeof v === "boolean" ? String(v) : goJSON(v));
function matches(want, got, render) {
  return want.type === got.type && want.field === got.field && got.detail.includes(want.detail) &&
    (want.origin === undefined || want.origin === got.origin) &&
    (want.value === undefined || want.value === STRUCT || render(want.value) === render(got.badValue));
}
// upstream assertFailures: ByType().ByField().ByOrigin().ByValue().ByDetailSubstring().WithUniqueMatches()
// (the origin only where the expected error names one): every expected error matches one
// error of `got`, and nothing is left over. `render` prints bad values for the comparison.
export function assertFailures(want, got, render = renderBadValue) {
  const left = [...got];
  const missing = [];
  for (const w of want) {
    const i = left.findIndex((g) => matches(w, g, render));
    if (i < 0) missing.push(w);
    else left.splice(i, 1);
  }
  if (missing.length || left.length) {
    const shown = (m) =>
      JSON.stringify({ ...m, value: m.value === STRUCT ? "STRUCT" : m.value instanceof GoStringer ? m.value.s : m.value });
    assert.fail(`errors differ\n  missing: ${missing.map(shown).join("\n           ")}` +
      `\n  unexpected: ${left.map(String).join("\n              ")}`);
  }
}

// --- The fake kube-apiserver as a child process -------------------------------------------

const serverArgs = (dir, release, gates) => [fakeApiserver, dir, "--release", release, ...(gates ? ["--gates", gates] : [])];

// Starts fake_apiserver.mjs for `release` (with `gates`, "Gate=value,..." as --gates takes
// them) in a new state directory named after `prefix`; resolves to its ports ({apiPort,
// adminPort, ...}) with dir, child, token and ca, or rejects when it exits first.
export function startServer(release, gates, prefix = "fake-apiserver-") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const child = spawn(process.execPath, serverArgs(dir, release, gates), { stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) {
        const ports = JSON.parse(out.split("\n")[0]);
        resolve({ ...ports, dir, child, token: fs.readFileSync(path.join(dir, "token"), "utf8"), ca: fs.readFileSync(path.join(dir, "ca.crt")) });
      }
    });
    child.on("exit", (code) => reject(new Error(`fake apiserver exited ${code}`)));
  });
}
export function stopServer(s) {
  s.child.removeAllListeners("exit");
  s.child.kill("SIGTERM");
  fs.rmSync(s.dir, { recursive: true, force: true });
}
// fake_apiserver.mjs run to its end, for a start it refuses: spawnSync's result (status,
// stdout, stderr).
export function runServerToExit(release, gates, prefix = "fake-apiserver-") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const r = spawnSync(process.execPath, serverArgs(dir, release, gates), { encoding: "utf8", timeout: 20000 });
  fs.rmSync(dir, { recursive: true, force: true });
  return r;
}

// One request to the server on 127.0.0.1; resolves to {code, body (the answer's JSON)}.
function request(lib, options, data) {
  return new Promise((resolve, reject) => {
    const req = lib.request({ host: "127.0.0.1", ...options }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ code: res.statusCode, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end(data);
  });
}
// The admin API (plain HTTP): GET `p`, or POST `body` as JSON.
export const admin = (s, p, body) => request(http, { port: s.adminPort, path: p, method: body === undefined ? "GET" : "POST",
  headers: { "content-type": "application/json" } }, body === undefined ? "" : JSON.stringify(body));
// The admin API: DELETE `p` (DELETE /rbac).
export const adminDelete = (s, p) => request(http, { port: s.adminPort, path: p, method: "DELETE" }, "");
// The Kubernetes API (TLS, the server's token): `body` a string as is, else as JSON, sent as
// Content-Type `type`.
export const apiRequest = (s, method, p, body, type = "application/json") => request(https, {
  port: s.apiPort, method, path: p, ca: s.ca, headers: { "content-type": type, authorization: `Bearer ${s.token}` },
}, typeof body === "string" ? body : JSON.stringify(body));
