// Tests of rbac_authorizer.mjs (kube-apiserver's request attributes, RBAC rule matching and
// 403 answer, as the fake kube-apiserver authorizes the DRA driver's service account) and of
// the fake's /rbac admin call end to end: upstream's own cases transcribed by case name, then
// cases of our own over the project's ClusterRole.
// Usage: node rbac_authorizer_test.mjs (exit status 0 when all pass).
//
// Upstream sources (kubernetes/kubernetes):
//  - plugin/pkg/auth/authorizer/rbac/rbac_test.go: TestRuleMatches, all 8 cases (each a table
//    of requests and whether the rule allows them); TestAuthorizer, 3 of its 4 cases (the
//    non-resource-URL case, its users each given the rules of the ClusterRole bound to them,
//    and the two subresource-resolution cases). Skipped: its first case, which tests that a
//    RoleBinding in ns1 grants nothing in ns2 or cluster-wide: the fake models no bindings
//    (every ClusterRole of the loaded manifest is the user's, cluster-wide).
//  - staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo_test.go:
//    TestGetAPIRequestInfo (31 resource paths and 6 non-resource ones; adapted: one namespace,
//    see the case), TestGetNonAPIRequestInfo (13), TestFieldSelectorParsing (7).
//  - staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors_test.go
//    TestForbidden (5): compared as the Status object (message and details), not as the JSON
//    bytes (Go's encoder escapes & as \u0026).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { check, finish } from "./check.mjs";
import {
  DRA_SERVICE_ACCOUNT, clusterRoleRules, draServiceAccountUser, forbiddenStatus, newRequestInfo, rbacAuthorizer, ruleAllows, rulesAllow,
} from "./rbac_authorizer.mjs";
import { admin, adminDelete, apiRequest, startServer, stopServer } from "./test_harness.mjs";

let upstream = 0;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const RBAC_YAML = path.join(root, "images/components/dra/rbac.yaml");

// --- rbac_test.go TestRuleMatches -------------------------------------------------------------

// rbacv1helpers.NewRule(verbs...).Groups(...).Resources(...).URLs(...)
const rule = (verbs, { groups, resources, urls, names } = {}) => ({ verbs, ...(groups ? { apiGroups: groups } : {}),
  ...(resources ? { resources } : {}), ...(urls ? { nonResourceURLs: urls } : {}), ...(names ? { resourceNames: names } : {}) });
// resourceRequest(verb).Group(g).Resource(r).Subresource(s).Name(n) / nonresourceRequest(verb).URL(u)
const res = (verb, group, resource, subresource = "", name = "") => ({ resourceRequest: true, verb, apiGroup: group, resource, subresource, name });
const nonres = (verb, url) => ({ resourceRequest: false, verb, path: url });

const g1r1 = (verb) => res(verb, "group1", "resource1");
const g2r1 = (verb) => res(verb, "group2", "resource1");
const g1r2 = (verb) => res(verb, "group1", "resource2");
const g2r2 = (verb) => res(verb, "group2", "resource2");
const fourByTwo = (expected) => [
  [g1r1("verb1"), expected[0]], [g2r1("verb1"), expected[1]], [g1r2("verb1"), expected[2]], [g2r2("verb1"), expected[3]],
  [g1r1("verb2"), expected[4]], [g2r1("verb2"), expected[5]], [g1r2("verb2"), expected[6]], [g2r2("verb2"), expected[7]],
];
const urls = ["/foo", "/foo/bar", "/foo/baz", "/foo/bar/one", "/foo/baz/one"];
const ruleMatchesCases = {
  "star verb, exact match other": [rule(["*"], { groups: ["group1"], resources: ["resource1"] }),
    fourByTwo([true, false, false, false, true, false, false, false])],
  "star group, exact match other": [rule(["verb1"], { groups: ["*"], resources: ["resource1"] }),
    fourByTwo([true, true, false, false, false, false, false, false])],
  "star resource, exact match other": [rule(["verb1"], { groups: ["group1"], resources: ["*"] }),
    fourByTwo([true, false, true, false, false, false, false, false])],
  "tuple expansion": [rule(["verb1", "verb2"], { groups: ["group1", "group2"], resources: ["resource1", "resource2"] }),
    fourByTwo([true, true, true, true, true, true, true, true])],
  "subresource expansion": [rule(["*"], { groups: ["*"], resources: ["resource1/subresource1"] }), [
    [res("verb1", "group1", "resource1", "subresource1"), true], [res("verb1", "group2", "resource1", "subresource2"), false],
    [res("verb1", "group1", "resource2", "subresource1"), false], [res("verb1", "group2", "resource2", "subresource1"), false],
    [res("verb2", "group1", "resource1", "subresource1"), true], [res("verb2", "group2", "resource1", "subresource2"), false],
    [res("verb2", "group1", "resource2", "subresource1"), false], [res("verb2", "group2", "resource2", "subresource1"), false]]],
  "star nonresource, exact match other": [rule(["verb1"], { urls: ["*"] }),
    [...urls.map((u) => [nonres("verb1", u), true]), ...urls.map((u) => [nonres("verb2", u), false])]],
  "star nonresource subpath": [rule(["verb1"], { urls: ["/foo/*"] }), [
    [nonres("verb1", "/foo"), false], [nonres("verb1", "/foo/bar"), true], [nonres("verb1", "/foo/baz"), true],
    [nonres("verb1", "/foo/bar/one"), true], [nonres("verb1", "/foo/baz/one"), true], [nonres("verb1", "/notfoo"), false],
    [nonres("verb1", "/notfoo/bar"), false], [nonres("verb1", "/notfoo/baz"), false], [nonres("verb1", "/notfoo/bar/one"), false],
    [nonres("verb1", "/notfoo/baz/one"), false]]],
  "star verb, exact nonresource": [rule(["*"], { urls: ["/foo", "/foo/bar/one"] }), [
    [nonres("verb1", "/foo"), true], [nonres("verb1", "/foo/bar"), false], [nonres("verb1", "/foo/baz"), false],
    [nonres("verb1", "/foo/bar/one"), true], [nonres("verb1", "/foo/baz/one"), false], [nonres("verb2", "/foo"), true],
    [nonres("verb2", "/foo/bar"), false], [nonres("verb2", "/foo/baz"), false], [nonres("verb2", "/foo/bar/one"), true],
    [nonres("verb2", "/foo/baz/one"), false]]],
};
for (const [name, [r, requests]] of Object.entries(ruleMatchesCases)) {
  upstream++;
  check(`upstream TestRuleMatches/${name}`, () => {
    for (const [request, expected] of requests) assert.equal(ruleAllows(request, r), expected, JSON.stringify(request));
  });
}

// --- rbac_test.go TestAuthorizer (the cases without namespaced bindings) -----------------------

// newRule(verbs, apiGroups, resources, nonResourceURLs): comma-separated lists.
const newRule = (verbs, groups, resources, nonResourceURLs) => ({ verbs: verbs.split(","), apiGroups: groups.split(","),
  resources: resources.split(","), nonResourceURLs: nonResourceURLs.split(",") });
// defaultAttributes{user, groups, verb, resource, subresource, namespace, apiGroup}: a resource
// request without a name.
const defaultAttributes = (verb, resource, subresource, namespace, apiGroup) => ({ resourceRequest: true, verb, resource, subresource,
  namespace, apiGroup, name: "" });
{
  upstream++;
  // Each user (or group) has the rules of the ClusterRole its ClusterRoleBinding names.
  const getter = [newRule("get", "", "", "/apis")];
  const any = [newRule("*", "", "", "/apis")];
  const prefix = [newRule("get", "", "", "/apis/*")];
  const pass = [[getter, "get", "/apis"], [any, "get", "/apis"], [any, "watch", "/apis"], [prefix, "get", "/apis/v1"],
    [prefix, "get", "/apis/v1/foobar"], [prefix, "get", "/apis/v1/foorbar"]];
  const fail = [[getter, "watch", "/apis"], [getter, "get", "/api/v1"], [any, "get", "/api/v1"], [prefix, "get", "/api/v1"]];
  check("upstream TestAuthorizer/case 1 (non-resource URLs)", () => {
    for (const [rules, verb, url] of pass) assert.ok(rulesAllow(nonres(verb, url), rules), `${verb} ${url}`);
    for (const [rules, verb, url] of fail) assert.ok(!rulesAllow(nonres(verb, url), rules), `${verb} ${url}`);
  });
}
for (const [i, rules, passes, fails] of [
  [2, [newRule("*", "*", "pods", "*")], [defaultAttributes("get", "pods", "", "ns1", "")], [defaultAttributes("get", "pods", "status", "ns1", "")]],
  [3, [newRule("*", "*", "pods/status", "*")], [defaultAttributes("get", "pods", "status", "ns1", "")], [defaultAttributes("get", "pods", "", "ns1", "")]],
]) {
  upstream++;
  check(`upstream TestAuthorizer/case ${i} (subresource resolution)`, () => {
    const authorize = rbacAuthorizer(rules.map((rule) => ({ source: "test", rule })));
    for (const a of passes) assert.equal(authorize(a).decision, "Allow", JSON.stringify(a));
    for (const a of fails) assert.equal(authorize(a).decision, "NoOpinion", JSON.stringify(a));
  });
}

// --- requestinfo_test.go ---------------------------------------------------------------------

const info = (method, url) => newRequestInfo(method, new URL(url, "https://x"));
const apiRequestInfoCases = [
  ["GET", "/api/v1/namespaces", "list", "", "v1", "", "namespaces", "", "", ["namespaces"]],
  ["GET", "/api/v1/namespaces/other", "get", "", "v1", "other", "namespaces", "", "other", ["namespaces", "other"]],
  ["GET", "/api/v1/namespaces/other/pods", "list", "", "v1", "other", "pods", "", "", ["pods"]],
  ["GET", "/api/v1/namespaces/other/pods/foo", "get", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]],
  ["HEAD", "/api/v1/namespaces/other/pods/foo", "get", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]],
  ["GET", "/api/v1/pods", "list", "", "v1", "", "pods", "", "", ["pods"]],
  ["HEAD", "/api/v1/pods", "list", "", "v1", "", "pods", "", "", ["pods"]],
  ["GET", "/api/v1/namespaces/other/pods/foo", "get", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]],
  ["GET", "/api/v1/namespaces/other/pods", "list", "", "v1", "other", "pods", "", "", ["pods"]],
  // Adapted: the copy read expects namespace "" here, yet "other" for GET /api/v1/namespaces/other;
  // the requestinfo.go read sets both (a namespace's own name is its namespace for RBAC).
  ["PATCH", "/api/v1/namespaces/new-namespace", "patch", "", "v1", "new-namespace", "namespaces", "", "new-namespace", ["namespaces", "new-namespace"]],
  ["GET", "/api/v1/proxy/namespaces/other/pods/foo", "proxy", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]],
  ["GET", "/api/v1/proxy/namespaces/other/pods/foo/subpath/not/a/subresource", "proxy", "", "v1", "other", "pods", "", "foo",
    ["pods", "foo", "subpath", "not", "a", "subresource"]],
  ["GET", "/api/v1/watch/pods", "watch", "", "v1", "", "pods", "", "", ["pods"]],
  ["GET", "/api/v1/pods?watch=true", "watch", "", "v1", "", "pods", "", "", ["pods"]],
  ["GET", "/api/v1/pods?watch=false", "list", "", "v1", "", "pods", "", "", ["pods"]],
  ["GET", "/api/v1/watch/namespaces/other/pods", "watch", "", "v1", "other", "pods", "", "", ["pods"]],
  ["GET", "/api/v1/namespaces/other/pods?watch=1", "watch", "", "v1", "other", "pods", "", "", ["pods"]],
  ["GET", "/api/v1/namespaces/other/pods?watch=0", "list", "", "v1", "other", "pods", "", "", ["pods"]],
  ["GET", "/api/v1/namespaces/other/pods/foo/status", "get", "", "v1", "other", "pods", "status", "foo", ["pods", "foo", "status"]],
  ["GET", "/api/v1/namespaces/other/pods/foo/proxy/subpath", "get", "", "v1", "other", "pods", "proxy", "foo", ["pods", "foo", "proxy", "subpath"]],
  ["PUT", "/api/v1/namespaces/other/finalize", "update", "", "v1", "other", "namespaces", "finalize", "other", ["namespaces", "other", "finalize"]],
  ["PUT", "/api/v1/namespaces/other/status", "update", "", "v1", "other", "namespaces", "status", "other", ["namespaces", "other", "status"]],
  ["PATCH", "/api/v1/namespaces/other/pods/foo", "patch", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]],
  ["DELETE", "/api/v1/namespaces/other/pods/foo", "delete", "", "v1", "other", "pods", "", "foo", ["pods", "foo"]],
  ["POST", "/api/v1/namespaces/other/pods", "create", "", "v1", "other", "pods", "", "", ["pods"]],
  ["DELETE", "/api/v1/nodes", "deletecollection", "", "v1", "", "nodes", "", "", ["nodes"]],
  ["DELETE", "/api/v1/namespaces", "deletecollection", "", "v1", "", "namespaces", "", "", ["namespaces"]],
  ["DELETE", "/api/v1/namespaces/other/pods", "deletecollection", "", "v1", "other", "pods", "", "", ["pods"]],
  ["DELETE", "/apis/extensions/v1/namespaces/other/pods", "deletecollection", "extensions", "v1", "other", "pods", "", "", ["pods"]],
  ["POST", "/apis/extensions/v1/namespaces/other/pods", "create", "extensions", "v1", "other", "pods", "", "", ["pods"]],
  ["POST", "/apis/extensions/v1beta3/namespaces/other/pods", "create", "extensions", "v1beta3", "other", "pods", "", "", ["pods"]],
];
upstream++;
check(`upstream TestGetAPIRequestInfo: ${apiRequestInfoCases.length} resource paths, 6 non-resource ones`, () => {
  for (const [method, url, verb, apiGroup, apiVersion, namespace, resource, subresource, name, parts] of apiRequestInfoCases) {
    const got = info(method, url);
    assert.deepEqual({ resourceRequest: got.resourceRequest, verb: got.verb, apiGroup: got.apiGroup, apiVersion: got.apiVersion,
      namespace: got.namespace, resource: got.resource, subresource: got.subresource, name: got.name, parts: got.parts },
    { resourceRequest: true, verb, apiGroup, apiVersion, namespace, resource, subresource, name, parts }, `${method} ${url}`);
  }
  for (const url of ["/", "/api/version/", "/apis/group/version/", "/api/version/", "/badprefix/version/resource", "/apis/version/resource"]) {
    assert.equal(info("GET", url).resourceRequest, false, url);
  }
});
const nonAPICases = {
  "simple groupless": ["/api/version/resource", true], "simple group": ["/apis/group/version/resource/name/subresource", true],
  "more steps": ["/api/version/resource/name/subresource", true], "group list": ["/apis/batch/v1/job", true],
  "group get": ["/apis/batch/v1/job/foo", true], "group subresource": ["/apis/batch/v1/job/foo/scale", true],
  "bad root": ["/not-api/version/resource", false], "group without enough steps": ["/apis/extensions/v1beta1", false],
  "group without enough steps 2": ["/apis/extensions/v1beta1/", false], "not enough steps": ["/api/version", false],
  "one step": ["/api", false], "zero step": ["/", false], "empty": ["", false],
};
for (const [name, [url, expected]] of Object.entries(nonAPICases)) {
  upstream++;
  check(`upstream TestGetNonAPIRequestInfo/${name}`, () => assert.equal(info("GET", url || "/").resourceRequest, expected));
}
const fieldSelectorCases = {
  "no selector": ["/apis/group/version/resource", "", "list"],
  "metadata.name selector": ["/apis/group/version/resource?fieldSelector=metadata.name=name1", "name1", "list"],
  "metadata.name selector with watch": ["/apis/group/version/resource?watch=true&fieldSelector=metadata.name=name1", "name1", "watch"],
  "random selector": ["/apis/group/version/resource?fieldSelector=foo=bar", "", "list"],
  "invalid selector with metadata.name": ["/apis/group/version/resource?fieldSelector=metadata.name=name1,foo", "", "list"],
  "invalid selector with metadata.name with watch": ["/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=true", "", "watch"],
  "invalid selector with metadata.name with watch false": ["/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=false", "", "list"],
};
for (const [name, [url, expectedName, expectedVerb]] of Object.entries(fieldSelectorCases)) {
  upstream++;
  check(`upstream TestFieldSelectorParsing/${name}`, () => {
    const got = info("GET", url);
    assert.deepEqual([got.name, got.verb], [expectedName, expectedVerb]);
  });
}

// --- errors_test.go TestForbidden ------------------------------------------------------------

const NAME = { name: "NAME" };
const forbiddenCases = [
  [{ user: NAME, verb: "GET", path: "/whatever" }, 'forbidden: User "NAME" cannot GET path "/whatever"', {}],
  [{ user: NAME, verb: "GET", path: "/<script>" }, 'forbidden: User "NAME" cannot GET path "/&lt;script&gt;"', {}],
  [{ user: NAME, verb: "get", resource: "pod", resourceRequest: true }, 'pod is forbidden: User "NAME" cannot get resource "pod" in API group "" at the cluster scope',
    { kind: "pod" }],
  [{ user: NAME, verb: "get", resource: "pod", resourceRequest: true, name: "mypod" },
    'pod "mypod" is forbidden: User "NAME" cannot get resource "pod" in API group "" at the cluster scope', { name: "mypod", kind: "pod" }],
  [{ user: NAME, verb: "get", namespace: "test", apiGroup: "v2", resource: "pod", subresource: "quota", resourceRequest: true },
    'pod.v2 is forbidden: User "NAME" cannot get resource "pod/quota" in API group "v2" in the namespace "test"', { group: "v2", kind: "pod" }],
];
upstream += forbiddenCases.length;
check(`upstream TestForbidden: all ${forbiddenCases.length} cases (message, reason, details, code)`, () => {
  for (const [attrs, message, details] of forbiddenCases) {
    assert.deepEqual(forbiddenStatus(attrs), { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason: "Forbidden",
      details, code: 403 });
  }
});

// --- Cases of our own --------------------------------------------------------------------------

check("*/subresource matches that subresource of any resource, and nothing else", () => {
  const r = rule(["get"], { groups: ["*"], resources: ["*/status"] });
  assert.ok(ruleAllows(res("get", "apps", "deployments", "status", "d"), r));
  assert.ok(!ruleAllows(res("get", "apps", "deployments", "scale", "d"), r));
  assert.ok(!ruleAllows(res("get", "apps", "deployments", "", "d"), r));
  assert.ok(!ruleAllows(res("get", "apps", "deployments", "xstatus", "d"), r));
});
check("resourceNames constrain only requests that name an object: a create or a list has no name, so it is refused", () => {
  const r = rule(["create", "list", "get"], { groups: [""], resources: ["configmaps"], names: ["cm"] });
  assert.ok(ruleAllows(res("get", "", "configmaps", "", "cm"), r));
  assert.ok(!ruleAllows(res("get", "", "configmaps", "", "other"), r));
  assert.ok(!ruleAllows(res("create", "", "configmaps"), r));
  assert.ok(!ruleAllows(res("list", "", "configmaps"), r));
  assert.ok(ruleAllows(info("GET", "/api/v1/configmaps?fieldSelector=metadata.name%3Dcm"), r), "a list naming it by fieldSelector");
});
check("verbs are case-sensitive; \"\" is the core group", () => {
  assert.ok(!ruleAllows(res("GET", "", "pods", "", "p"), rule(["get"], { groups: [""], resources: ["pods"] })));
  assert.ok(!ruleAllows(res("get", "apps", "pods", "", "p"), rule(["get"], { groups: [""], resources: ["pods"] })));
});

// The project's ClusterRole, as /rbac loads it (with the operator's driver name).
const docs = parseAllDocuments(fs.readFileSync(RBAC_YAML, "utf8")).map((d) => d.toJS());
const rules = clusterRoleRules(docs, { from: "rdma.k8s-rdma-shared-dp.io", to: "rdma.example.com" });
const authorize = rbacAuthorizer(rules);
const sa = draServiceAccountUser("n1");
const req = (method, url) => ({ ...info(method, url), user: sa });
check("images/components/dra/rbac.yaml: what the DRA front end calls is allowed", () => {
  for (const [method, url] of [
    ["GET", "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3Dn1"],
    ["GET", "/apis/resource.k8s.io/v1/resourceslices?watch=true&fieldSelector=spec.nodeName%3Dn1&resourceVersion=5"],
    ["POST", "/apis/resource.k8s.io/v1/resourceslices"],
    ["POST", "/apis/resource.k8s.io/v1/resourceslices?dryRun=All"],
    ["PUT", "/apis/resource.k8s.io/v1/resourceslices/n1-hca-ib"],
    ["DELETE", "/apis/resource.k8s.io/v1/resourceslices/n1-hca-ib"],
    ["GET", "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/c1"],
    ["GET", "/api/v1/nodes/n1"],
    ["POST", "/apis/events.k8s.io/v1/namespaces/team-a/events"],
  ]) assert.equal(authorize(req(method, url)).decision, "Allow", `${method} ${url}`);
});
check("images/components/dra/rbac.yaml: and nothing else the fake serves (deletecollection, claims' lists, other writes)", () => {
  for (const [method, url] of [
    ["DELETE", "/apis/resource.k8s.io/v1/resourceslices"],
    ["GET", "/apis/resource.k8s.io/v1/resourceslices/n1-hca-ib"],
    ["GET", "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims"],
    ["PUT", "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/c1"],
    ["GET", "/apis/events.k8s.io/v1/namespaces/team-a/events"],
    ["GET", "/api/v1/nodes"],
  ]) assert.equal(authorize(req(method, url)).decision, "NoOpinion", `${method} ${url}`);
});
check("a resourceNames entry naming the manifest's driver is renamed for the operator's; other names stay", () => {
  const r = clusterRoleRules([{ kind: "ClusterRole", metadata: { name: "x" }, rules: [{ apiGroups: ["resource.k8s.io"],
    resources: ["resourceclaims/driver"], verbs: ["associated-node:patch"], resourceNames: ["rdma.k8s-rdma-shared-dp.io", "keep.io"] }] },
  { kind: "Role", metadata: { name: "ignored" }, rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] }],
  { from: "rdma.k8s-rdma-shared-dp.io", to: "rdma.example.com" });
  assert.deepEqual(r.map((x) => x.rule.resourceNames), [["rdma.example.com", "keep.io"]]);
});
check("the 403 of a refused request: the core group, cluster scope, a name; a namespaced subresource; a list", () => {
  const st = (method, url) => forbiddenStatus(req(method, url), authorize(req(method, url)).reason);
  assert.deepEqual(st("GET", "/api/v1/nodes"), { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure",
    message: `nodes is forbidden: User "${DRA_SERVICE_ACCOUNT}" cannot list resource "nodes" in API group "" at the cluster scope`,
    reason: "Forbidden", details: { kind: "nodes" }, code: 403 });
  assert.equal(st("PUT", "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/c1/status").message,
    `resourceclaims.resource.k8s.io "c1" is forbidden: User "${DRA_SERVICE_ACCOUNT}" cannot update resource "resourceclaims/status" ` +
    'in API group "resource.k8s.io" in the namespace "team-a"');
  assert.deepEqual(st("PUT", "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/c1/status").details,
    { name: "c1", group: "resource.k8s.io", kind: "resourceclaims" });
  assert.equal(st("GET", "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims").message,
    `resourceclaims.resource.k8s.io is forbidden: User "${DRA_SERVICE_ACCOUNT}" cannot list resource "resourceclaims" in API group "resource.k8s.io" in the namespace "team-a"`);
});

// --- The fake kube-apiserver's /rbac ----------------------------------------------------------

{
  const s = await startServer("1.37", undefined, "fake-rbac-");
  try {
    const sliceList = "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3Dn1";
    const before = await apiRequest(s, "GET", "/api/v1/nodes");
    const loaded = await admin(s, "/rbac", { file: RBAC_YAML, driver: "rdma.example.com", node: "n1" });
    const listed = await apiRequest(s, "GET", sliceList);
    const node = await apiRequest(s, "GET", "/api/v1/nodes/n1");
    const nodes = await apiRequest(s, "GET", "/api/v1/nodes");
    const stats = (await admin(s, "/stats")).body;
    const shown = (await admin(s, "/rbac")).body;
    const off = await adminDelete(s, "/rbac");
    const after = await apiRequest(s, "GET", "/api/v1/nodes");
    const badFile = await admin(s, "/rbac", { file: path.join(os.tmpdir(), "no-such-rbac.yaml") });
    check("fake /rbac: loads the ClusterRole's rules for the driver's service account with its node", () => {
      assert.equal(loaded.code, 200);
      assert.deepEqual(loaded.body.user, { name: DRA_SERVICE_ACCOUNT, groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system",
        "system:authenticated"], extra: { "authentication.kubernetes.io/node-name": ["n1"] } });
      assert.equal(loaded.body.rules.length, rules.length);
      assert.deepEqual(shown, loaded.body);
    });
    check("fake /rbac: allowed requests are served, a refused one is 403 Forbidden with kube-apiserver's Status and counted", () => {
      assert.equal(before.code, 404, "without RBAC a route the fake lacks is its 404, as before");
      assert.equal(listed.code, 200);
      assert.equal(node.code, 200);
      assert.equal(nodes.code, 403);
      assert.deepEqual(nodes.body, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure",
        message: `nodes is forbidden: User "${DRA_SERVICE_ACCOUNT}" cannot list resource "nodes" in API group "" at the cluster scope`,
        reason: "Forbidden", details: { kind: "nodes" }, code: 403 });
      assert.deepEqual(stats.forbidden, [`list nodes /: ${nodes.body.message}`]);
      assert.deepEqual(stats.invalid, []);
    });
    check("fake DELETE /rbac: back to the token alone; a file that cannot be read is 400", () => {
      assert.deepEqual(off.body, { on: false });
      assert.equal(after.code, 404);
      assert.equal(badFile.code, 400);
      assert.match(badFile.body.message, /^rbac: ENOENT/);
    });
  } finally {
    stopServer(s);
  }
}

finish(`RBAC authorizer (${upstream} upstream cases)`);
