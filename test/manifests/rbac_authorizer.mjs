// kube-apiserver's authorization of a request, as much of it as the fake kube-apiserver
// (fake_apiserver.mjs) needs to refuse what the real server refuses the DRA driver's service
// account: the request's attributes, RBAC's rule matching, and the 403 the server answers.
// Each function names the upstream Go function it mirrors; none of the Go code is copied, it is
// re-expressed here.
//
// What it ports (kubernetes/kubernetes):
//  - staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go:
//    RequestInfoFactory.NewRequestInfo (APIPrefixes api/apis, GrouplessAPIPrefixes api, the
//    special verbs proxy and watch, namespace subresources status and finalize, list/watch for
//    a GET without a name (watch from ListOptions.Watch: any value but "0" or "false", as
//    runtime Convert_Slice_string_To_bool reads it), the name a fieldSelector metadata.name=X
//    gives a list or watch, deletecollection), splitPath.
//  - plugin/pkg/auth/authorizer/rbac/rbac.go: RBACAuthorizer.Authorize (NoOpinion with an
//    empty reason when no rule allows: the reason is only non-empty for rule-resolution
//    errors, which a fixed rule list has none of), RuleAllows, RulesAllow.
//  - pkg/apis/rbac/v1/evaluation_helpers.go: VerbMatches, APIGroupMatches, ResourceMatches
//    ("*", "resource/subresource" and "*/subresource"), ResourceNameMatches (a rule with
//    resourceNames constrains only a request that names an object), NonResourceURLMatches.
//  - staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go: Forbidden
//    and forbiddenMessage (with its sanitizer of &, <, >), and
//    staging/src/k8s.io/apimachinery/pkg/api/errors NewForbidden: the Status of a 403.
//    ForbiddenStatusError (what the 1.36 granular status authorization embeds in its field
//    error, claim_status_authz.mjs) is taken to build the same StatusError as Forbidden: its
//    source could not be read (doubt), the upstream tests' expected texts agree with it.
//  - staging/src/k8s.io/apiserver/pkg/authentication/serviceaccount: SplitUsername,
//    NodeNameKey (the node-name claim of a bound service-account token, as user extra).
//
// Known gaps:
//  - Only the rules are modelled, not who they are bound to: the fake has one user, the DRA
//    driver's service account, and every ClusterRole of the manifest loaded with /rbac is
//    taken as bound to it (cluster-wide). Roles, RoleBindings, aggregation and the bootstrap
//    roles every authenticated user has (system:discovery, system:basic-user,
//    system:public-info-viewer: non-resource URLs and self-reviews the driver never calls)
//    are not modelled, nor other authorizers (Node, webhooks) or impersonation.
//  - The fieldSelector a list or watch names an object with is split into terms as
//    fields.ParseSelector does (splitTerm), but its backslash escapes are not read.
import { goQuote, isDNS1123Label, isDNS1123Subdomain } from "./kube_validation.mjs";

// The user the fake's bearer token authenticates: the DaemonSet's service account
// (images/components/dra/rbac.yaml), with the groups the service-account authenticator adds.
export const DRA_SERVICE_ACCOUNT = "system:serviceaccount:kube-system:rdma-shared-dp";
// serviceaccount.NodeNameKey: the extra a bound token of a pod carries its node's name in.
export const NODE_NAME_KEY = "authentication.kubernetes.io/node-name";
export const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";

// The user of the fake's token: `node` is the node the token is bound to ("" or undefined: a
// token without the node claim).
export function draServiceAccountUser(node) {
  return {
    name: DRA_SERVICE_ACCOUNT,
    groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
    extra: node ? { [NODE_NAME_KEY]: [node] } : {},
  };
}

// --- requestinfo.go ----------------------------------------------------------------------------

const API_PREFIXES = new Set(["api", "apis"]);
const GROUPLESS_API_PREFIXES = new Set(["api"]);
const SPECIAL_VERBS = new Set(["proxy", "watch"]);
const SPECIAL_VERBS_NO_SUBRESOURCES = new Set(["proxy"]);
const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

// splitPath: the segments of a path, none for "/".
const splitPath = (p) => {
  const trimmed = p.replace(/^\/+|\/+$/g, "");
  return trimmed === "" ? [] : trimmed.split("/");
};

// path.IsValidPathSegmentName: not "." or "..", no "/" or "%".
const isValidPathSegmentName = (name) => name !== "." && name !== ".." && !name.includes("/") && !name.includes("%");

// fields.ParseSelector's splitTerm: the first position (left to right) where "!=", "==" or
// "=" starts splits a term; null for a term without an operator.
function splitTerm(term) {
  for (let i = 0; i < term.length; i++) {
    for (const op of ["!=", "==", "="]) {
      if (term.startsWith(op, i)) return { field: term.slice(0, i), op, value: term.slice(i + op.length) };
    }
  }
  return null;
}
// RequiresExactMatch("metadata.name") of a fieldSelector: the value of its first
// "metadata.name=" or "metadata.name==" term; undefined when there is none or the selector does
// not parse (ListOptions' decoding fails, and NewRequestInfo leaves the name empty).
function fieldSelectorName(selector) {
  if (!selector) return undefined;
  const terms = [];
  for (const part of selector.split(",")) {
    if (part === "") continue;
    const t = splitTerm(part);
    if (!t) return undefined;
    terms.push(t);
  }
  return terms.find((t) => t.field === "metadata.name" && t.op !== "!=")?.value;
}

// RequestInfoFactory.NewRequestInfo for `method` and `url` (a URL: pathname and
// searchParams). Returns the attributes RBAC reads: {resourceRequest, path, verb, apiPrefix,
// apiGroup, apiVersion, namespace, resource, subresource, name, parts}; {error} for a special verb
// without a resource (kube-apiserver answers 500: "failed to create RequestInfo: ...").
export function newRequestInfo(method, url) {
  const info = { resourceRequest: false, path: url.pathname, verb: method.toLowerCase(), apiPrefix: "", apiGroup: "",
    apiVersion: "", namespace: "", resource: "", subresource: "", name: "" };
  let parts = splitPath(url.pathname);
  if (parts.length < 3 || !API_PREFIXES.has(parts[0])) return info;
  info.apiPrefix = parts[0];
  parts = parts.slice(1);
  if (!GROUPLESS_API_PREFIXES.has(info.apiPrefix)) {
    if (parts.length < 3) return info;
    info.apiGroup = parts[0];
    parts = parts.slice(1);
  }
  info.resourceRequest = true;
  info.apiVersion = parts[0];
  parts = parts.slice(1);
  if (SPECIAL_VERBS.has(parts[0])) {
    if (parts.length < 2) return { ...info, error: `unable to determine kind and namespace from url, ${url.pathname}${url.search}` };
    info.verb = parts[0];
    parts = parts.slice(1);
  } else {
    const verbs = { POST: "create", GET: "get", HEAD: "get", PUT: "update", PATCH: "patch", DELETE: "delete" };
    info.verb = verbs[method] ?? "";
  }
  if (parts[0] === "namespaces") {
    if (parts.length > 1) {
      info.namespace = parts[1];
      // A step after the namespace's name that is not a namespace subresource is a resource.
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2])) parts = parts.slice(2);
    }
  }
  info.parts = parts;
  if (parts.length >= 3 && !SPECIAL_VERBS_NO_SUBRESOURCES.has(info.verb)) info.subresource = parts[2];
  if (parts.length >= 2) info.name = parts[1];
  if (parts.length >= 1) info.resource = parts[0];
  if (info.name === "" && info.verb === "get") {
    const watch = url.searchParams.getAll("watch");
    info.verb = watch.length && watch[0] !== "0" && watch[0].toLowerCase() !== "false" ? "watch" : "list";
    const name = fieldSelectorName(url.searchParams.get("fieldSelector"));
    if (name !== undefined && isValidPathSegmentName(name)) info.name = name;
  }
  if (info.name === "" && info.verb === "delete") info.verb = "deletecollection";
  return info;
}

// --- evaluation_helpers.go -----------------------------------------------------------------------

const list = (v) => (Array.isArray(v) ? v : []);

// VerbMatches: "*" or the verb itself (verbs are case-sensitive).
export const verbMatches = (rule, verb) => list(rule.verbs).some((v) => v === "*" || v === verb);
// APIGroupMatches: "*" or the group itself ("" is the core group).
export const apiGroupMatches = (rule, group) => list(rule.apiGroups).some((g) => g === "*" || g === group);
// ResourceMatches: "*", the combined "resource/subresource" itself, or, for a request with a
// subresource, "*/<subresource>".
export function resourceMatches(rule, combinedResource, subresource) {
  for (const r of list(rule.resources)) {
    if (r === "*" || r === combinedResource) return true;
    if (subresource === "") continue;
    if (r.length === subresource.length + 2 && r.startsWith("*/") && r.endsWith(subresource)) return true;
  }
  return false;
}
// ResourceNameMatches: a rule without resourceNames matches every request; with some, only a
// request naming one of them (a create or a list names none, so it never matches).
export const resourceNameMatches = (rule, name) => list(rule.resourceNames).length === 0 || list(rule.resourceNames).includes(name);
// NonResourceURLMatches: "*", the URL itself, or a prefix ending in "*".
export const nonResourceURLMatches = (rule, url) => list(rule.nonResourceURLs).some((u) =>
  u === "*" || u === url || (u.endsWith("*") && url.startsWith(u.replace(/\*+$/, ""))));

// --- rbac.go -----------------------------------------------------------------------------------

// RuleAllows: a resource request is matched on verb, group, "resource[/subresource]" and name,
// a non-resource request on verb and path.
export function ruleAllows(attrs, rule) {
  if (attrs.resourceRequest) {
    const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
    return verbMatches(rule, attrs.verb) && apiGroupMatches(rule, attrs.apiGroup ?? "") &&
      resourceMatches(rule, combined, attrs.subresource ?? "") && resourceNameMatches(rule, attrs.name ?? "");
  }
  return verbMatches(rule, attrs.verb) && nonResourceURLMatches(rule, attrs.path ?? "");
}
export const rulesAllow = (attrs, rules) => rules.some((r) => ruleAllows(attrs, r));

// RBACAuthorizer over a fixed list of {source, rule}: Authorize returns {decision: "Allow",
// reason} for the first rule that allows, else {decision: "NoOpinion", reason: ""} (rbac.go
// builds a reason only from rule-resolution errors).
export function rbacAuthorizer(sourcedRules) {
  return (attrs) => {
    const hit = sourcedRules.find(({ rule }) => ruleAllows(attrs, rule));
    return hit ? { decision: "Allow", reason: `RBAC: allowed by ${hit.source}` } : { decision: "NoOpinion", reason: "" };
  };
}

// The rules of every ClusterRole in the YAML documents `text` (a manifest such as
// images/components/dra/rbac.yaml), each with its source, and with every resourceNames entry
// `from` replaced by `to` (an operator who runs the driver under another --dra-driver-name
// edits its ClusterRole so). Other kinds are skipped.
export function clusterRoleRules(docs, { from, to } = {}) {
  const out = [];
  for (const doc of docs) {
    if (doc?.kind !== "ClusterRole") continue;
    for (const rule of list(doc.rules)) {
      const r = structuredClone(rule);
      if (to !== undefined && Array.isArray(r.resourceNames)) r.resourceNames = r.resourceNames.map((n) => (n === from ? to : n));
      out.push({ source: `ClusterRole ${goQuote(doc.metadata?.name ?? "")}`, rule: r });
    }
  }
  return out;
}

// --- responsewriters/errors.go and apimachinery errors.NewForbidden ----------------------------

// responsewriters' sanitizer: nothing in an error may look like HTML.
const sanitize = (s) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

// forbiddenMessage
export function forbiddenMessage(attrs) {
  const user = attrs.user?.name ?? "";
  if (!attrs.resourceRequest) return `User ${goQuote(user)} cannot ${attrs.verb} path ${goQuote(attrs.path ?? "")}`;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const where = attrs.namespace ? `in the namespace ${goQuote(attrs.namespace)}` : "at the cluster scope";
  return `User ${goQuote(user)} cannot ${attrs.verb} resource ${goQuote(resource)} in API group ${goQuote(attrs.apiGroup ?? "")} ${where}`;
}

// Forbidden (and ForbiddenStatusError, see the header): the Status of errors.NewForbidden
// over schema.GroupResource{group, resource} and the request's name, the message
// forbiddenMessage plus ": <reason>" when the authorizer gave one. Details omit empty fields
// (omitempty), as Go encodes them.
export function forbiddenStatus(attrs, reason = "") {
  const err = sanitize(forbiddenMessage(attrs)) + (reason ? `: ${reason}` : "");
  const group = attrs.resourceRequest ? attrs.apiGroup ?? "" : "";
  const resource = attrs.resourceRequest ? attrs.resource ?? "" : "";
  const name = attrs.name ?? "";
  const gr = group ? `${resource}.${group}` : resource;
  let message;
  if (group === "" && resource === "") message = `forbidden: ${err}`;
  else if (name === "") message = `${gr} is forbidden: ${err}`;
  else message = `${gr} ${goQuote(name)} is forbidden: ${err}`;
  const details = {};
  if (name) details.name = name;
  if (group) details.group = group;
  if (resource) details.kind = resource;
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason: "Forbidden", details, code: 403 };
}

// --- serviceaccount ------------------------------------------------------------------------------

// serviceaccount.SplitUsername: [namespace, name] of "system:serviceaccount:<ns>:<name>", or
// null (ValidateNamespaceName: a DNS label; ValidateServiceAccountName: a DNS subdomain).
export function splitServiceAccountUsername(username) {
  if (!String(username ?? "").startsWith(SERVICE_ACCOUNT_PREFIX)) return null;
  const parts = username.slice(SERVICE_ACCOUNT_PREFIX.length).split(":");
  if (parts.length !== 2) return null;
  if (isDNS1123Label(parts[0]).length || isDNS1123Subdomain(parts[1]).length) return null;
  return parts;
}
