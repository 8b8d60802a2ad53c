// Validates every manifest in images/ against the Kubernetes API schema (kubernetes-models,
// offline) and against the API server's own pod and DaemonSet rules that the schema lacks
// (pod_validation.mjs, ported from kube-apiserver), for every shipped overlay and for every
// combination of the components (a matrix rendered into a temporary directory); checks what
// the deployment promises (nodes, mounts, ports, the kubelet root, CDI, DRA, migration and
// staging) and what README.md and docs/deploying.md say about it; runs the ConfigMaps'
// config through the plugin's own `validate` command; and, where kubectl is installed,
// checks the renderer (render.mjs) against `kubectl kustomize` for every build.
// Usage: node validate.mjs <plugin-binary>
import assert from "node:assert/strict";
import { execFile, execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { check, finish } from "./check.mjs";
import YAML from "yaml";
import * as core from "kubernetes-models/v1";
import * as apps from "kubernetes-models/apps/v1";
import * as rbac from "kubernetes-models/rbac.authorization.k8s.io/v1";
import * as admission from "kubernetes-models/admissionregistration.k8s.io/v1";
import * as resource from "kubernetes-models/resource.k8s.io/v1";
import { render } from "./render.mjs";
import { ownRules, podSpecWarnings, selectorMatches, validateDaemonSet, validatePod,
         validateRollingUpdateDaemonSet } from "./pod_validation.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const images = path.join(root, "images");
const plugin = process.argv[2];
const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
const deployingPath = path.join(root, "docs/deploying.md");
const deploying = fs.existsSync(deployingPath) ? fs.readFileSync(deployingPath, "utf8") : "";

const models = {
  "v1/ConfigMap": core.ConfigMap, "v1/Pod": core.Pod, "v1/ServiceAccount": core.ServiceAccount,
  "apps/v1/DaemonSet": apps.DaemonSet,
  "rbac.authorization.k8s.io/v1/ClusterRole": rbac.ClusterRole,
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": rbac.ClusterRoleBinding,
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy": admission.ValidatingAdmissionPolicy,
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding":
    admission.ValidatingAdmissionPolicyBinding,
  "resource.k8s.io/v1/ResourceClaimTemplate": resource.ResourceClaimTemplate,
};
function validateObject(obj) {
  const Model = models[`${obj.apiVersion}/${obj.kind}`];
  assert.ok(Model, `no schema for ${obj.apiVersion} ${obj.kind}`);
  new Model(obj).validate(); // throws with the JSON path of the first violation
}

const find = (objs, kind, name) => objs.find((o) => o.kind === kind && o.metadata.name === name);
const daemonSets = (objs) => objs.filter((o) => o.kind === "DaemonSet");
const FLEET = "rdma-shared-dp-ds";
const STAGING = "rdma-shared-dp-dra-staging-ds";
const DRA_OBJECTS = ["ServiceAccount/rdma-shared-dp", "ClusterRole/k8s-rdma-shared-dp-dra",
  "ClusterRoleBinding/k8s-rdma-shared-dp-dra", "ValidatingAdmissionPolicy/k8s-rdma-shared-dp-own-node-slices",
  "ValidatingAdmissionPolicyBinding/k8s-rdma-shared-dp-own-node-slices"];

// --- What ships: every overlay a user applies by path, and what each is made of -----------

// options: root (kubelet root), dra, cdi, migrate, nfd, controlPlane, staging.
const K0S = "/var/lib/k0s/kubelet";
const SHIPPED = {
  "base": {},
  "overlays/cdi": { cdi: true },
  "overlays/k0s": { root: K0S },
  "overlays/dra": { dra: true },
  "overlays/dra-k0s": { dra: true, root: K0S },
  "overlays/dra-cdi": { dra: true, cdi: true },
  "overlays/dra-k0s-cdi": { dra: true, cdi: true, root: K0S },
  "overlays/dra-staging": { staging: "both" },
  "overlays/dra-staging/fleet": { staging: "fleet" },
  "overlays/dra-staging/fleet-dra": { staging: "fleet", dra: true },
  "overlays/dra-staging/nodes": { staging: "nodes", dra: true },
};
// A migrate variant of every shipped overlay but the staging ones (a staging DaemonSet is
// a DRA rollout of its own, after the migration).
for (const [dir, o] of Object.entries({ ...SHIPPED })) {
  if (o.staging) continue;
  SHIPPED[dir === "base" ? "overlays/migrate" : `overlays/migrate/${dir.replace("overlays/", "")}`] = { ...o, migrate: true };
}
const EXAMPLES = ["examples/config", "examples/config-dra", "examples/config-dra-staging"];

const builds = {};   // label -> { dir, objs, opts } | { dir, error, opts }
function build(label, dir, opts) {
  try {
    builds[label] = { dir, opts, objs: render(dir) };
  } catch (e) {
    builds[label] = { dir, opts, error: e };
  }
}
for (const [d, o] of Object.entries(SHIPPED)) build(d, path.join(images, d), o);
for (const d of EXAMPLES) build(d, path.join(images, d), {});
const objsOf = (label) => {
  const b = builds[label];
  if (b.error) throw b.error;
  return b.objs;
};

// --- The matrix: every combination of the components, written as kustomizations ----------

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "rdmadp-kustomize-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
function kustomization(name, resources, components) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  const rel = (p) => (path.isAbsolute(p) ? path.relative(dir, p) : p);
  const k = { apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization",
              resources: resources.map(rel) };
  if (components.length) k.components = components.map(rel);
  fs.writeFileSync(path.join(dir, "kustomization.yaml"), YAML.stringify(k));
  return dir;
}
const C = (name) => path.join(images, "components", name);
const ROOTS = { "default-root": [], "k0s-root": [path.join(images, "overlays/k0s/root-dir"), C("kubelet-root-dir")] };
const TARGETING = {
  "default-nodes": {}, "nfd": { nfd: true }, "control-plane": { controlPlane: true },
  "nfd+control-plane": { nfd: true, controlPlane: true },
};
const targetingComponents = (t) => [...(t.nfd ? [C("nfd-pci-15b3")] : []), ...(t.controlPlane ? [C("control-plane")] : [])];
const FRONTS = {                                  // the front-end components, in each order
  "device-plugin": { comps: [], opts: {} },
  "cdi": { comps: [C("cdi")], opts: { cdi: true } },
  "dra": { comps: [C("dra")], opts: { dra: true } },
  "dra,cdi": { comps: [C("dra"), C("cdi")], opts: { dra: true, cdi: true } },
  "cdi,dra": { comps: [C("cdi"), C("dra")], opts: { dra: true, cdi: true } },
};
const MATRIX = [];
for (const [rootName, rootComps] of Object.entries(ROOTS)) {
  for (const [frontName, front] of Object.entries(FRONTS)) {
    for (const [tName, t] of Object.entries(TARGETING)) {
      for (const migrate of [false, true]) {
        const label = `matrix ${rootName} ${frontName} ${tName}${migrate ? " migrate" : ""}`;
        const comps = [...rootComps, ...front.comps, ...targetingComponents(t), ...(migrate ? [C("migrate")] : [])];
        const dir = kustomization(label.replace(/[ ,+]/g, "_"), [path.join(images, "base")], comps);
        const opts = { ...front.opts, ...t, migrate, ...(rootComps.length ? { root: K0S } : {}) };
        MATRIX.push(label);
        build(label, dir, opts);
      }
    }
  }
}
// The kubelet root changed after the DRA component (as overlays/dra-k0s does): needs
// dra-kubelet-root-dir last.
{
  const label = "matrix dra,cdi then k0s-root, dra-kubelet-root-dir";
  const dir = kustomization("late-root", [path.join(images, "base")],
    [C("dra"), C("cdi"), ...ROOTS["k0s-root"], C("dra-kubelet-root-dir")]);
  MATRIX.push(label);
  build(label, dir, { dra: true, cdi: true, root: K0S });
}
// Staging a pool on DRA on every kind of fleet: the fleet's DaemonSet and the staging one.
for (const [rootName, rootComps] of Object.entries(ROOTS)) {
  for (const cdi of [false, true]) {
    for (const [tName, t] of Object.entries({ "default-nodes": {}, "nfd": { nfd: true } })) {
      const label = `matrix staging ${rootName}${cdi ? " cdi" : ""} ${tName}`;
      const common = [...rootComps, ...(cdi ? [C("cdi")] : []), ...targetingComponents(t)];
      const name = label.replace(/[ ,+]/g, "_");
      const fleet = kustomization(`${name}/fleet`, [path.join(images, "base")], [...common, C("dra-staging-fleet")]);
      const nodes = kustomization(`${name}/nodes`, [path.join(images, "base")], [...common, C("dra"), C("dra-staging-nodes")]);
      const dir = kustomization(name, [fleet, nodes], []);
      MATRIX.push(label);
      build(label, dir, { staging: "both", cdi, ...t, ...(rootComps.length ? { root: K0S } : {}) });
    }
  }
}

// The memlock hook's host directory (components/memlock) beside each front end.
for (const [frontName, front] of Object.entries(FRONTS)) {
  const label = `matrix memlock ${frontName}`;
  const dir = kustomization(label.replace(/[ ,+]/g, "_"), [path.join(images, "base")], [...front.comps, C("memlock")]);
  MATRIX.push(label);
  build(label, dir, { ...front.opts, memlock: true });
}

// What `pods` reads (components/usage) beside each front end and the memlock hook.
for (const [frontName, front] of Object.entries(FRONTS)) {
  const label = `matrix usage ${frontName}`;
  const dir = kustomization(label.replace(/[ ,+]/g, "_"), [path.join(images, "base")],
                            [...front.comps, C("memlock"), C("usage")]);
  MATRIX.push(label);
  build(label, dir, { ...front.opts, memlock: true, usage: true });
  const qpsLabel = `matrix usage-qps ${frontName}`;
  const qpsDir = kustomization(qpsLabel.replace(/[ ,+]/g, "_"), [path.join(images, "base")],
                               [...front.comps, C("usage"), C("usage-qps")]);
  MATRIX.push(qpsLabel);
  build(qpsLabel, qpsDir, { ...front.opts, usage: true, usageQps: true });
  if (front.opts.dra) continue;  // the DRA component has its own account and these Events
  const eventsLabel = `matrix usage-events ${frontName}`;
  const eventsDir = kustomization(eventsLabel.replace(/[ ,+]/g, "_"), [path.join(images, "base")],
                                  [...front.comps, C("usage"), C("usage-events")]);
  MATRIX.push(eventsLabel);
  build(eventsLabel, eventsDir, { ...front.opts, usage: true, usageEvents: true });
}

// The 1.34 move's RBAC (components/dra-remove-stale-resources) beside each DRA front end.
for (const [frontName, front] of Object.entries(FRONTS)) {
  if (!front.opts.dra) continue;
  const label = `matrix remove-stale-resources ${frontName}`;
  const dir = kustomization(label.replace(/[ ,+]/g, "_"), [path.join(images, "base")],
                            [...front.comps, C("dra-remove-stale-resources")]);
  MATRIX.push(label);
  build(label, dir, { ...front.opts, removeStale: true });
}

// Every component directory is used by some build of the matrix.
// Every directory a build reads, following resources and components.
function dirsOf(dir, seen = new Set()) {
  if (seen.has(dir)) return seen;
  seen.add(dir);
  const k = YAML.parse(fs.readFileSync(path.join(dir, "kustomization.yaml"), "utf8"));
  for (const r of [...(k.resources ?? []), ...(k.components ?? [])]) {
    const p = path.resolve(dir, r);
    if (fs.statSync(p).isDirectory()) dirsOf(p, seen);
  }
  return seen;
}
check("every component in images/components is part of the matrix", () => {
  const used = new Set(MATRIX.flatMap((l) => [...dirsOf(builds[l].dir)]));
  for (const c of fs.readdirSync(path.join(images, "components"))) {
    assert.ok(used.has(path.join(images, "components", c)), `components/${c} is in no combination`);
  }
  assert.ok(MATRIX.length >= 80, `only ${MATRIX.length} combinations`);
});

// --- Schema and API validation of every build -------------------------------------------------

const pod = YAML.parse(fs.readFileSync(path.join(images, "example-pod.yaml"), "utf8"));
for (const [label, b] of Object.entries(builds)) {
  check(`renders, schema-valid and accepted by the API's pod/DaemonSet rules: ${label}`, () => {
    const objs = objsOf(label);
    for (const o of objs) {
      try { validateObject(o); } catch (e) { throw new Error(`${o.kind}/${o.metadata.name}: ${e.message}`); }
    }
    for (const ds of daemonSets(objs)) {
      const errs = validateDaemonSet(ds).map(String);
      const spec = ds.spec.template.spec;
      errs.push(...podSpecWarnings(spec, "spec.template.spec"), ...ownRules(spec, "spec.template.spec"));
      assert.deepEqual(errs, [], `${ds.metadata.name}:\n${errs.join("\n")}`);
    }
  });
}
check("schema and API rules: example-pod", () => {
  validateObject(pod);
  assert.deepEqual(validatePod(pod).map(String), []);
});
// The DRA example: a valid Pod whose claim comes from a template `render` prints for the
// example DRA config, and whose container asks for that claim.
const draPod = YAML.parse(fs.readFileSync(path.join(images, "example-pod-dra.yaml"), "utf8"));
check("schema and API rules: example-pod-dra, and its template is one render prints", () => {
  validateObject(draPod);
  assert.deepEqual(validatePod(draPod).map(String), []);
  const out = execFileSync(plugin, ["render", `--config-file=${path.join(root, "config/config-dra.json")}`,
                                    `--namespace=${draPod.metadata.namespace}`], { encoding: "utf8" });
  const templates = YAML.parseAllDocuments(out).map((d) => d.toJS()).filter((o) => o.kind === "ResourceClaimTemplate");
  const claim = draPod.spec.resourceClaims[0];
  const template = templates.find((t) => t.metadata.name === claim.resourceClaimTemplateName);
  assert.ok(template, `render prints no template ${claim.resourceClaimTemplateName}`);
  assert.equal(template.metadata.namespace, draPod.metadata.namespace);
  validateObject(template);
  assert.deepEqual(draPod.spec.containers[0].resources.claims, [{ name: claim.name }]);
});

// --- The checks can fail ----------------------------------------------------------------------

const base = objsOf("base");
const ds = find(base, "DaemonSet", FLEET);

check("schema validation rejects a broken DaemonSet (the check can fail)", () => {
  const broken = structuredClone(ds);
  broken.spec.template.spec.containers[0].ports[0].containerPort = "metrics";
  assert.throws(() => validateObject(broken), /containerPort/);
});

check("the ported API rules reject what kube-apiserver rejects (each rule can fail)", () => {
  const cases = [
    ["duplicate volume", (s) => s.volumes.push(structuredClone(s.volumes[0])), /volumes\[4\]\.name: Duplicate value: "device-plugins"/],
    ["mount of no volume", (s) => s.containers[0].volumeMounts.push({ name: "nope", mountPath: "/x" }), /volumeMounts\[4\]\.name: Not found: "nope"/],
    ["duplicate mountPath", (s) => s.containers[0].volumeMounts.push({ name: "config", mountPath: "/host/dev" }), /volumeMounts\[4\]\.mountPath: Invalid value: "\/host\/dev": must be unique/],
    ["duplicate container", (s) => s.containers.push({ ...structuredClone(s.containers[0]), ports: [] }), /containers\[1\]\.name: Duplicate value/],
    ["host path with ..", (s) => { s.volumes[3].hostPath.path = "/dev/../etc"; }, /hostPath\.path: Invalid value: "\/dev\/\.\.\/etc": must not contain '\.\.'/],
    ["host path type", (s) => { s.volumes[3].hostPath.type = "Dir"; }, /hostPath\.type: Unsupported value: "Dir"/],
    ["two volume sources", (s) => { s.volumes[3].emptyDir = {}; }, /volumes\[3\]\.hostPath: Forbidden: may not specify more than 1 volume type/],
    ["no volume source", (s) => { delete s.volumes[3].hostPath; }, /volumes\[3\]: Required value: must specify a volume type/],
    ["configMap item path", (s) => { s.volumes[2].configMap.items[0].path = "../x"; }, /items\[0\]\.path: Invalid value: "\.\.\/x": must not contain '\.\.'/],
    ["env name", (s) => s.containers[0].env.push({ name: "1BAD", value: "x" }), /env\[\d+\]\.name: Invalid value: "1BAD"/],
    ["env source", (s) => s.containers[0].env.push({ name: "X", value: "v", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } }), /may not be specified when `value` is not empty/],
    ["downward field", (s) => s.containers[0].env.push({ name: "X", valueFrom: { fieldRef: { fieldPath: "spec.nope" } } }), /fieldRef\.fieldPath: Unsupported value: "spec\.nope"/],
    ["host port under host network", (s) => { s.containers[0].ports[0].hostPort = 9999; }, /hostPort: Invalid value: 9999: must match `containerPort`/],
    ["duplicate port name", (s) => s.containers[0].ports.push({ name: "metrics", containerPort: 1 }), /ports\[1\]\.name: Duplicate value: "metrics"/],
    ["probe port", (s) => { s.containers[0].livenessProbe.httpGet.port = 0; }, /livenessProbe\.httpGet\.port: Invalid value: 0: must be between 1 and 65535/],
    ["liveness successThreshold", (s) => { s.containers[0].livenessProbe.successThreshold = 2; }, /successThreshold: Invalid value: 2: must be 1/],
    ["request over limit", (s) => { s.containers[0].resources.requests.memory = "1Gi"; }, /requests: Invalid value: "1Gi": must be less than or equal to memory limit of 128Mi/],
    ["toleration operator", (s) => s.tolerations.push({ key: "", operator: "Equal" }), /operator must be Exists when `key` is empty/],
    ["toleration effect", (s) => s.tolerations.push({ key: "a", operator: "Exists", effect: "NoWay" }), /effect: Unsupported value: "NoWay"/],
    ["node affinity term", (s) => { s.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms = []; }, /nodeSelectorTerms: Required value/],
    ["node affinity values", (s) => { s.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].values = ["x"]; }, /matchExpressions\[1\]\.values: Forbidden/],
    ["node selector key", (s) => { s.nodeSelector = { "a/b/c": "x" }; }, /nodeSelector: Invalid value: "a\/b\/c"/],
    ["restart policy", (s) => { s.restartPolicy = "Never"; }, /restartPolicy: Unsupported value: "Never": supported values: "Always"/],
  ];
  for (const [name, mutate, want] of cases) {
    const broken = structuredClone(ds);
    mutate(broken.spec.template.spec);
    const errs = validateDaemonSet(broken).map(String).join("\n");
    assert.match(errs, want, `${name}: ${errs || "accepted"}`);
  }
  const selector = structuredClone(ds);
  selector.spec.selector.matchLabels = { app: "other" };
  assert.match(validateDaemonSet(selector).map(String).join("\n"), /`selector` does not match template `labels`/);
  const both = structuredClone(ds);
  both.spec.updateStrategy.rollingUpdate = { maxUnavailable: 1, maxSurge: 1 };
  assert.match(validateDaemonSet(both).map(String).join("\n"), /maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero/);
  const dupEnv = structuredClone(ds);
  dupEnv.spec.template.spec.containers[0].env.push({ name: "MALLOC_ARENA_MAX", value: "2" });
  assert.match(podSpecWarnings(dupEnv.spec.template.spec, "s").join("\n"), /hides previous definition of "MALLOC_ARENA_MAX"/);
  const dupFlag = structuredClone(ds);
  dupFlag.spec.template.spec.containers[0].args.push("--metrics-address=:1");
  assert.match(ownRules(dupFlag.spec.template.spec, "s").join("\n"), /flag --metrics-address already given/);
  const dupHost = structuredClone(ds);
  dupHost.spec.template.spec.volumes.push({ name: "dev2", hostPath: { path: "/dev" } });
  assert.match(ownRules(dupHost.spec.template.spec, "s").join("\n"), /host path "\/dev" is already volume "host-dev"/);
});

// Issue: the DRA overlay plus the old CDI overlay's patch mounted /var/run/cdi twice; the API
// server rejects that pod. The components share the directory (components/cdi-dir).
check("the old CDI patch on the DRA overlay is rejected; the components' DRA + CDI is not", () => {
  const oldCdiPatch = [
    { op: "add", path: "/spec/template/spec/containers/0/args/-", value: "--use-cdi" },
    { op: "add", path: "/spec/template/spec/containers/0/args/-", value: "--cdi-spec-dir=/var/run/cdi" },
    { op: "add", path: "/spec/template/spec/containers/0/volumeMounts/-", value: { name: "dynamic-cdi", mountPath: "/var/run/cdi" } },
    { op: "add", path: "/spec/template/spec/volumes/-", value: { name: "dynamic-cdi", hostPath: { path: "/var/run/cdi", type: "DirectoryOrCreate" } } },
  ];
  const old = structuredClone(find(objsOf("overlays/dra"), "DaemonSet", FLEET));
  for (const op of oldCdiPatch) {
    const parts = op.path.split("/").slice(1, -1);
    parts.reduce((n, k) => n[k], old).push(op.value);
  }
  const errs = validateDaemonSet(old).map(String).join("\n");
  assert.match(errs, /volumes\[\d+\]\.name: Duplicate value: "dynamic-cdi"/);
  assert.match(errs, /mountPath: Invalid value: "\/var\/run\/cdi": must be unique/);
  for (const label of ["overlays/dra-cdi", "overlays/dra-k0s-cdi", "matrix default-root cdi,dra default-nodes"]) {
    assert.deepEqual(validateDaemonSet(find(objsOf(label), "DaemonSet", FLEET)).map(String), [], label);
  }
});

// --- What every DaemonSet of every build promises ------------------------------------------

const envOf = (c, name) => c.env?.find((e) => e.name === name);
const envValue = (c, name) => envOf(c, name)?.value;
const argValue = (c, flag) => c.args?.find((a) => a.startsWith(`--${flag}=`))?.split("=").slice(1).join("=");
const helpText = spawnSync(plugin, ["--help"], { encoding: "utf8" });
const cdiDirDefault = (helpText.stdout + helpText.stderr).match(/--cdi-spec-dir DIR\n.*\(default "([^"]+)"\)/)?.[1];

// The scheduling a DaemonSet pod gets on a node: its node selector, required node affinity
// and tolerations against the node's labels and taints (the DaemonSet controller's own
// tolerations, for node-condition taints, are not modelled: the model nodes have none).
function schedulable(spec, node) {
  if (!selectorMatches({ matchLabels: spec.nodeSelector ?? {} }, node.labels)) return false;
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms && !terms.some((t) => (t.matchExpressions ?? []).length > 0 &&
                              selectorMatches({ matchExpressions: t.matchExpressions }, node.labels))) return false;
  const tolerates = (taint) => (spec.tolerations ?? []).some((t) =>
    (t.effect === undefined || t.effect === "" || t.effect === taint.effect) &&
    (t.key === undefined || t.key === "" ? t.operator === "Exists"
      : t.key === taint.key && (t.operator === "Exists" || (t.value ?? "") === (taint.value ?? ""))));
  return (node.taints ?? []).filter((t) => t.effect !== "PreferNoSchedule").every(tolerates);
}
const linux = { "kubernetes.io/os": "linux" };
const NFD = { "feature.node.kubernetes.io/pci-15b3.present": "true" };
const MIGRATE = { "k8s-rdma-shared-dp.io/migrate": "true" };
const STAGE = { "k8s-rdma-shared-dp.io/dra-staging": "true" };
const cpTaint = { key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" };
const NODES = {
  "worker": { labels: { ...linux } },
  "GPU worker (nvidia.com/gpu taint)": { labels: { ...linux }, taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }] },
  "worker with another NoSchedule taint": { labels: { ...linux }, taints: [{ key: "dedicated", value: "storage", effect: "NoSchedule" }] },
  "kubeadm control plane": { labels: { ...linux, "node-role.kubernetes.io/control-plane": "" }, taints: [cpTaint] },
  "untainted control plane (k3s, single node)": { labels: { ...linux, "node-role.kubernetes.io/control-plane": "true", "node-role.kubernetes.io/master": "true" } },
  "Windows worker": { labels: { "kubernetes.io/os": "windows" } },
};
function expectedOn(opts, nodeName, labels) {
  const node = NODES[nodeName];
  if (nodeName === "Windows worker" || nodeName === "worker with another NoSchedule taint") return false;
  if (nodeName.includes("control plane") && !opts.controlPlane) return false;
  if (opts.nfd && labels[Object.keys(NFD)[0]] !== "true") return false;
  if (opts.migrate && labels[Object.keys(MIGRATE)[0]] !== "true") return false;
  return node !== undefined;
}

function checkDaemonSet(d, opts, objs, role) {
  const spec = d.spec.template.spec;
  const c = spec.containers[0];
  const rootDir = opts.root ?? "/var/lib/kubelet";
  const dra = role === "nodes" ? true : role === "fleet" ? !!opts.draFleet : !!opts.dra;
  // The allocator's environment and the node-critical priority.
  assert.equal(spec.priorityClassName, "system-node-critical");
  assert.equal(envValue(c, "GLIBC_TUNABLES"), "glibc.malloc.tcache_count=0");
  assert.equal(envValue(c, "MALLOC_ARENA_MAX"), "1");
  assert.match(c.image, /:[0-9][^:]*$/, "image tag must be pinned");
  assert.deepEqual(d.spec.updateStrategy.rollingUpdate, { maxUnavailable: 1, maxSurge: 0 });
  // Probes on their own localhost listener, never the metrics port; metrics outside
  // Prometheus's exporter registry (9100-9999).
  const health = argValue(c, "health-address");
  const metrics = argValue(c, "metrics-address");
  assert.match(health, /^127\.0\.0\.1:\d+$/);
  const hp = Number(health.split(":")[1]);
  const mp = Number(metrics.split(":").pop());
  for (const [probe, p] of [["liveness", "/healthz"], ["readiness", "/readyz"]]) {
    assert.deepEqual(c[`${probe}Probe`].httpGet, { host: "127.0.0.1", path: p, port: hp }, probe);
  }
  assert.notEqual(mp, hp);
  assert.ok(mp < 9100 || mp > 9999, `metrics port ${mp}`);
  assert.deepEqual(c.ports, [{ name: "metrics", containerPort: mp, protocol: "TCP" }]);
  // Only the kubelet's socket directories (and, with DRA, its plugins directory), the config,
  // the host's /dev read-only, and with CDI or DRA the CDI directory.
  const mountOf = (name) => c.volumeMounts.find((m) => m.name === name);
  const hostOf = (name) => spec.volumes.find((v) => v.name === name)?.hostPath?.path;
  assert.equal(envValue(c, "RDMADP_KUBELET_ROOT_DIR"), rootDir);
  for (const [name, sub] of [["device-plugins", "device-plugins"], ["plugins-registry", "plugins_registry"],
                             ...(dra ? [["kubelet-plugins", "plugins"]] : [])]) {
    assert.equal(mountOf(name)?.mountPath, `${rootDir}/${sub}`, name);
    assert.equal(hostOf(name), `${rootDir}/${sub}`, name);
  }
  if (opts.root) assert.ok(!JSON.stringify(d).includes("/var/lib/kubelet"), "a copy of the default kubelet root is left");
  assert.ok(!spec.volumes.some((v) => v.hostPath?.path === rootDir), "the whole kubelet root is mounted");
  assert.deepEqual(mountOf("host-dev"), { name: "host-dev", mountPath: "/host/dev", readOnly: true });
  assert.equal(envValue(c, "RDMADP_DEV_ROOT"), "/host/dev");
  assert.equal(mountOf("config").mountPath + "/config.json", envValue(c, "RDMADP_CONFIG_FILE"));
  const configMap = spec.volumes.find((v) => v.name === "config").configMap.name;
  assert.equal(configMap, role === "nodes" ? "rdma-devices-dra-staging" : "rdma-devices");
  // CDI mode and DRA: the CDI directory the daemon writes to is the host's, mounted.
  assert.equal(c.args.includes("--use-cdi"), !!opts.cdi, "--use-cdi");
  const cdiDir = argValue(c, "cdi-spec-dir") ?? envValue(c, "RDMADP_CDI_SPEC_DIR") ?? cdiDirDefault;
  if (opts.cdi || dra) {
    const m = c.volumeMounts.find((x) => x.mountPath === cdiDir);
    assert.ok(m, `the CDI directory ${cdiDir} is not mounted`);
    assert.equal(hostOf(m.name), cdiDir);
    assert.ok(!m.readOnly);
  } else {
    assert.ok(!c.volumeMounts.some((x) => x.mountPath === "/var/run/cdi"), "CDI directory without CDI");
  }
  // DRA: the driver name, the node name from the downward API, its service account, and
  // the RBAC and admission policy in the same build.
  assert.equal(c.args.some((a) => a.startsWith("--dra-driver-name=")), dra, "--dra-driver-name");
  if (dra) {
    assert.equal(spec.serviceAccountName, "rdma-shared-dp");
    assert.deepEqual(envOf(c, "NODE_NAME").valueFrom.fieldRef, { fieldPath: "spec.nodeName" });
    for (const id of DRA_OBJECTS) assert.ok(objs.some((o) => `${o.kind}/${o.metadata.name}` === id), `no ${id}`);
  } else if (opts.usageEvents) {
    assert.equal(spec.serviceAccountName, "rdma-shared-dp");
    assert.deepEqual(envOf(c, "NODE_NAME").valueFrom.fieldRef, { fieldPath: "spec.nodeName" });
    const role = find(objs, "ClusterRole", "k8s-rdma-shared-dp-events");
    assert.deepEqual(role.rules, [{ apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create"] }]);
    assert.deepEqual(find(objs, "ClusterRoleBinding", "k8s-rdma-shared-dp-events").subjects,
                     [{ kind: "ServiceAccount", name: "rdma-shared-dp", namespace: "kube-system" }]);
  } else {
    assert.equal(spec.serviceAccountName, undefined);
  }
  // remove-stale-resources: get nodes and patch nodes/status, for the DRA account, only there.
  const stale = objs.find((o) => o.kind === "ClusterRole" && o.metadata.name === "k8s-rdma-shared-dp-remove-stale-resources");
  assert.equal(!!stale, !!opts.removeStale, "the remove-stale-resources RBAC only where asked for");
  if (stale) {
    assert.deepEqual(stale.rules, [{ apiGroups: [""], resources: ["nodes"], verbs: ["get"] },
                                   { apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"] }]);
    assert.deepEqual(find(objs, "ClusterRoleBinding", "k8s-rdma-shared-dp-remove-stale-resources").subjects,
                     [{ kind: "ServiceAccount", name: "rdma-shared-dp", namespace: "kube-system" }]);
  }
  // usage-events: the Events on with the device-plugin front end alone; only there.
  assert.equal(envValue(c, "RDMADP_RDMA_UNUSED_EVENTS"), opts.usageEvents ? "true" : undefined);
  // memlock: the hook's directory is the host's, at the path the CDI specs name, writable.
  const hookPath = "/var/lib/k8s-rdma-shared-dp/bin";
  const hookMount = c.volumeMounts.find((m) => m.mountPath === hookPath);
  assert.equal(!!hookMount, !!opts.memlock, "the memlock hook directory");
  if (opts.memlock) {
    assert.equal(hostOf(hookMount.name), hookPath);
    assert.ok(!hookMount.readOnly);
    assert.equal(argValue(c, "memlock-hook-path") ?? envValue(c, "RDMADP_MEMLOCK_HOOK_PATH"), undefined,
                 "the default --memlock-hook-path is the mounted one");
  }
  // usage: the pod-resources socket where --kubelet-root-dir puts it, the kubelet's links and
  // the cgroup tree, each read-only and where the daemon's environment says.
  const usageMounts = [["pod-resources", `${rootDir}/pod-resources`, `${rootDir}/pod-resources`],
                       ["container-logs", "/host/var/log/containers", "/var/log/containers"],
                       ["host-cgroup", "/host/sys/fs/cgroup", "/sys/fs/cgroup"]];
  for (const [name, at, host] of usageMounts) {
    assert.equal(!!mountOf(name), !!opts.usage, `the ${name} mount`);
    if (!opts.usage) continue;
    assert.deepEqual(mountOf(name), { name, mountPath: at, readOnly: true }, name);
    assert.equal(hostOf(name), host, name);
  }
  assert.equal(envValue(c, "RDMADP_CGROUP_ROOT"), opts.usage ? "/host/sys/fs/cgroup" : undefined);
  assert.equal(envValue(c, "RDMADP_CONTAINER_LOGS_DIR"),
               opts.usage ? "/host/var/log/containers" : undefined);
  // usage-qps: the host PID namespace, and the count on; only there.
  assert.equal(spec.hostPID, opts.usageQps ? true : undefined, "hostPID");
  assert.equal(envValue(c, "RDMADP_RDMA_USAGE_QPS"), opts.usageQps ? "true" : undefined);
  // runc creates the termination message file under /dev: /dev must not be a read-only mount.
  const termination = c.terminationMessagePath ?? "/dev/termination-log";
  for (const m of c.volumeMounts) {
    assert.ok(!(m.readOnly && termination.startsWith(m.mountPath + "/")), `${termination} is inside ${m.mountPath}`);
  }
}

// Which nodes each DaemonSet of a build lands on, for each model node with and without the
// migrate, NFD and staging labels.
function checkNodes(objs, opts) {
  const fleet = find(objs, "DaemonSet", FLEET);
  const staging = find(objs, "DaemonSet", STAGING);
  for (const nodeName of Object.keys(NODES)) {
    for (const extra of [{}, NFD, MIGRATE, { ...NFD, ...MIGRATE }, STAGE, { ...NFD, ...STAGE }]) {
      const node = { ...NODES[nodeName], labels: { ...NODES[nodeName].labels, ...extra } };
      const staged = node.labels[Object.keys(STAGE)[0]] === "true";
      const want = expectedOn(opts, nodeName, node.labels);
      const where = `${nodeName} labelled ${JSON.stringify(extra)}`;
      if (fleet) {
        const fleetWant = want && !(opts.staging && staged);
        assert.equal(schedulable(fleet.spec.template.spec, node), fleetWant, `${FLEET} on ${where}`);
      }
      if (staging) assert.equal(schedulable(staging.spec.template.spec, node), want && staged, `${STAGING} on ${where}`);
    }
  }
}

for (const [label, b] of Object.entries(builds)) {
  if (EXAMPLES.includes(label)) continue;
  check(`what it promises (mounts, ports, root, CDI, DRA, nodes): ${label}`, () => {
    const objs = objsOf(label);
    const opts = b.opts;
    const sets = daemonSets(objs);
    assert.deepEqual(sets.map((d) => d.metadata.name).sort(),
                     opts.staging === "both" ? [FLEET, STAGING].sort() : [opts.staging === "nodes" ? STAGING : FLEET]);
    for (const d of sets) {
      const role = !opts.staging ? "only" : d.metadata.name === STAGING ? "nodes" : "fleet";
      checkDaemonSet(d, { ...opts, draFleet: opts.staging === "fleet" && opts.dra }, objs, role);
    }
    checkNodes(objs, opts);
    // Applying any build never replaces the operator's config.
    assert.equal(find(objs, "ConfigMap", "rdma-devices"), undefined, "ships rdma-devices");
    assert.equal(find(objs, "ConfigMap", "rdma-devices-dra-staging"), undefined, "ships rdma-devices-dra-staging");
  });
}

// --- Composition: order does not matter, overlays are their components ---------------------

// A DaemonSet with its keyed lists sorted: equal when only the order of entries differs.
function normalized(d) {
  const n = structuredClone(d);
  const spec = n.spec.template.spec;
  const by = (k) => (a, b) => String(a[k]).localeCompare(String(b[k]));
  spec.volumes.sort(by("name"));
  for (const c of spec.containers) {
    c.volumeMounts.sort(by("mountPath"));
    c.env.sort(by("name"));
    c.args.sort();
  }
  return n;
}
check("components compose in either order: dra then cdi equals cdi then dra, in every matrix cell", () => {
  let pairs = 0;
  for (const label of MATRIX.filter((l) => /^matrix \S+-root dra,cdi /.test(l))) {
    const other = label.replace(" dra,cdi ", " cdi,dra ");
    assert.deepEqual(normalized(find(objsOf(label), "DaemonSet", FLEET)), normalized(find(objsOf(other), "DaemonSet", FLEET)), label);
    pairs++;
  }
  assert.equal(pairs, 16);
});

check("each shipped overlay is its components on the base, nothing else", () => {
  const same = (overlay, matrix) => {
    const key = (o) => `${o.kind}/${o.metadata.name}`;
    const sort = (objs) => [...objs].sort((a, b) => key(a).localeCompare(key(b))).map((o) => (o.kind === "DaemonSet" ? normalized(o) : o));
    assert.deepEqual(sort(objsOf(overlay)), sort(objsOf(matrix)), `${overlay} differs from ${matrix}`);
  };
  same("base", "matrix default-root device-plugin default-nodes");
  same("overlays/cdi", "matrix default-root cdi default-nodes");
  same("overlays/k0s", "matrix k0s-root device-plugin default-nodes");
  same("overlays/dra", "matrix default-root dra default-nodes");
  same("overlays/dra-cdi", "matrix default-root dra,cdi default-nodes");
  same("overlays/dra-k0s-cdi", "matrix dra,cdi then k0s-root, dra-kubelet-root-dir");
  same("overlays/migrate", "matrix default-root device-plugin default-nodes migrate");
  same("overlays/migrate/dra-cdi", "matrix default-root dra,cdi default-nodes migrate");
  same("overlays/dra-staging", "matrix staging default-root default-nodes");
});

// The migration (docs/migrating.md) moves one node at a time: each migrate variant is its
// overlay with a node selector and nothing else, so the last step (apply the overlay)
// changes nothing else.
check("migrate variants: each shipped overlay plus the node selector k8s-rdma-shared-dp.io/migrate", () => {
  for (const [dir, o] of Object.entries(SHIPPED)) {
    if (!o.migrate) continue;
    const of = dir === "overlays/migrate" ? "base" : `overlays/${dir.replace("overlays/migrate/", "")}`;
    const theirs = structuredClone(objsOf(dir));
    const d = find(theirs, "DaemonSet", FLEET);
    assert.deepEqual(d.spec.template.spec.nodeSelector, MIGRATE, dir);
    delete d.spec.template.spec.nodeSelector;
    assert.deepEqual(theirs, objsOf(of), `${dir} is not ${of} plus the selector`);
    // Its own selector differs from the Go plugin's (name: rdma-shared-dp-ds): the orphaned
    // Go pods are never adopted, and theirs must be deleted with --cascade=orphan first.
    assert.notDeepEqual(d.spec.selector.matchLabels, { name: "rdma-shared-dp-ds" });
  }
  const variants = Object.keys(SHIPPED).filter((d) => SHIPPED[d].migrate).length;
  assert.equal(variants, Object.values(SHIPPED).filter((o) => !o.staging && !o.migrate).length);
});

check("staging: two DaemonSets on disjoint nodes, selectors that never select the other's pods", () => {
  for (const label of ["overlays/dra-staging", ...MATRIX.filter((l) => l.startsWith("matrix staging"))]) {
    const objs = objsOf(label);
    const fleet = find(objs, "DaemonSet", FLEET);
    const staging = find(objs, "DaemonSet", STAGING);
    assert.ok(!selectorMatches(fleet.spec.selector, staging.spec.template.metadata.labels), `${label}: the fleet selects staging pods`);
    assert.ok(!selectorMatches(staging.spec.selector, fleet.spec.template.metadata.labels), `${label}: staging selects fleet pods`);
    const expr = (d) => d.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
      .nodeSelectorTerms[0].matchExpressions.find((e) => e.key === "k8s-rdma-shared-dp.io/dra-staging");
    assert.deepEqual(expr(fleet), { key: "k8s-rdma-shared-dp.io/dra-staging", operator: "NotIn", values: ["true"] });
    assert.deepEqual(expr(staging), { key: "k8s-rdma-shared-dp.io/dra-staging", operator: "In", values: ["true"] });
    // Its own ports: the fleet pod leaving a node may still hold the fleet's.
    const ports = (d) => [argValue(d.spec.template.spec.containers[0], "metrics-address"), argValue(d.spec.template.spec.containers[0], "health-address")];
    assert.deepEqual(ports(staging), [":10111", "127.0.0.1:10112"]);
    assert.deepEqual(ports(fleet), [":10109", "127.0.0.1:10110"]);
  }
  // The fleet's DaemonSet in the staging overlay is the base's plus the exclusion, nothing else.
  const fleet = structuredClone(find(objsOf("overlays/dra-staging"), "DaemonSet", FLEET));
  fleet.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions.pop();
  assert.deepEqual(fleet, ds);
});

// --- Node targeting ----------------------------------------------------------------------------

check("base: not on control-plane nodes (affinity and no control-plane toleration), GPU taint tolerated", () => {
  const spec = ds.spec.template.spec;
  for (const t of spec.tolerations) {
    assert.ok(t.key, "a toleration without a key tolerates every taint");
    assert.notEqual(t.key, "node-role.kubernetes.io/control-plane");
    assert.notEqual(t.key, "node-role.kubernetes.io/master");
  }
  assert.ok(!schedulable(spec, NODES["kubeadm control plane"]));
  assert.ok(!schedulable(spec, NODES["untainted control plane (k3s, single node)"]));
  assert.ok(schedulable(spec, NODES["GPU worker (nvidia.com/gpu taint)"]));
  assert.ok(schedulable(spec, NODES.worker));
  // components/control-plane lets it back on; components/nfd-pci-15b3 keeps it to NFD's label.
  const cp = find(objsOf("matrix default-root device-plugin control-plane"), "DaemonSet", FLEET).spec.template.spec;
  assert.ok(schedulable(cp, NODES["kubeadm control plane"]));
  const nfd = find(objsOf("matrix default-root device-plugin nfd"), "DaemonSet", FLEET).spec.template.spec;
  assert.deepEqual(nfd.nodeSelector, NFD);
  assert.ok(!schedulable(nfd, NODES.worker));
  assert.ok(schedulable(nfd, { labels: { ...linux, ...NFD } }));
});

// --- Example configs and the example pod ----------------------------------------------------

const configOf = (label, name) => find(objsOf(label), "ConfigMap", name);
// `validate` with no flag, the config found through RDMADP_CONFIG_FILE, as `kubectl exec ...
// validate` in the pod finds it.
function validates(configText, env = {}) {
  const file = path.join(fs.mkdtempSync(path.join(tmp, "cm-")), "config.json");
  fs.writeFileSync(file, configText);
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RDMADP_")));
  return spawnSync(plugin, ["validate"], { encoding: "utf8", env: { ...clean, RDMADP_CONFIG_FILE: file, ...env } });
}

check("no build ships a ConfigMap the DaemonSets read; the examples are the only ones", () => {
  for (const label of EXAMPLES) {
    assert.deepEqual(objsOf(label).map((o) => `${o.kind}/${o.metadata.namespace}`), ["ConfigMap/kube-system"], label);
  }
});

check("the example config picks pools by vendor and link type, never by netdev name; the example pod asks for one", () => {
  const config = JSON.parse(configOf("examples/config", "rdma-devices").data["config.json"]);
  for (const e of config.configList) {
    assert.equal(e.devices, undefined, `${e.resourceName}: devices (netdev names such as ib0)`);
    assert.equal(e.selectors?.ifNames, undefined, `${e.resourceName}: ifNames (netdev names)`);
    assert.ok(e.selectors?.vendors?.length && e.selectors?.linkTypes?.length, `${e.resourceName}: vendor and link type`);
  }
  // The pair of examples: the DRA ones are the same pools with pool a flipped to DRA.
  const dra = JSON.parse(fs.readFileSync(path.join(root, "config/config-dra.json"), "utf8"));
  const unflipped = structuredClone(dra);
  for (const e of unflipped.configList) delete e.frontend;
  assert.deepEqual(config, unflipped);
  assert.deepEqual(JSON.parse(configOf("examples/config-dra", "rdma-devices").data["config.json"]), dra);
  assert.deepEqual(JSON.parse(configOf("examples/config-dra-staging", "rdma-devices-dra-staging").data["config.json"]), dra);
  // The example pod's resource is a pool of the example config.
  const c = pod.spec.containers[0];
  const pools = config.configList.map((e) => `${e.resourcePrefix ?? "rdma"}/${e.resourceName}`);
  const asked = Object.keys(c.resources.limits).filter((r) => r.includes("/"));
  assert.deepEqual(asked, ["rdma/hca_shared_devices_a"]);
  for (const r of asked) assert.ok(pools.includes(r), `${r} is no pool of images/examples/config`);
  assert.equal(String(c.resources.limits[asked[0]]), "1");
  assert.ok(c.securityContext.capabilities.add.includes("IPC_LOCK"));
});

check("every example config passes validate; found through the DaemonSet's env", () => {
  for (const [label, name] of [["examples/config", "rdma-devices"], ["examples/config-dra", "rdma-devices"],
                               ["examples/config-dra-staging", "rdma-devices-dra-staging"]]) {
    const r = validates(configOf(label, name).data["config.json"]);
    assert.equal(r.status, 0, `${label}: ${r.stdout}${r.stderr}`);
  }
  const wrong = spawnSync(plugin, ["validate"], { encoding: "utf8", env: { ...process.env, RDMADP_CONFIG_FILE: "/nonexistent/config.json" } });
  assert.equal(wrong.status, 1, "the environment was not read");
});

check("every RDMADP_ variable a build sets is one the daemon reads", () => {
  const vars = new Map();
  for (const b of Object.values(builds)) {
    if (b.error) continue;
    for (const d of daemonSets(b.objs)) for (const e of d.spec.template.spec.containers[0].env) {
      if (e.name.startsWith("RDMADP_")) vars.set(e.name, e.value);
    }
  }
  assert.ok(vars.has("RDMADP_CDI_SPEC_DIR"));
  const text = configOf("examples/config", "rdma-devices").data["config.json"];
  for (const [name, value] of vars) {
    if (name === "RDMADP_CONFIG_FILE") continue;
    const r = validates(text, { [name]: value });
    assert.doesNotMatch(r.stdout + r.stderr, /no flag reads it/, name);
  }
});

check("the DRA example config passes validate, with one DRA and one device-plugin entry", () => {
  const config = JSON.parse(configOf("examples/config-dra", "rdma-devices").data["config.json"]);
  assert.deepEqual(config.configList.map((e) => e.frontend ?? "devicePlugin"), ["dra", "devicePlugin"]);
});

check("the overlay's admission policy is what render prints; RBAC grants exactly what the DRA front end does", () => {
  const dra = objsOf("overlays/dra");
  const out = execFileSync(plugin, ["render", `--config-file=${path.join(root, "config/config-dra.json")}`], { encoding: "utf8" });
  const rendered = YAML.parseAllDocuments(out).map((d) => d.toJS());
  for (const kind of ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]) {
    assert.deepEqual(rendered.find((o) => o.kind === kind), dra.find((o) => o.kind === kind), kind);
  }
  const role = find(dra, "ClusterRole", "k8s-rdma-shared-dp-dra");
  const verbs = (res) => [...role.rules.find((r) => r.resources.includes(res)).verbs].sort();
  assert.deepEqual(verbs("resourceslices"), ["create", "delete", "list", "update", "watch"]);
  assert.deepEqual(verbs("resourceclaims"), ["get"]);
  assert.deepEqual(verbs("resourceclaims/status"), ["patch"]);
  assert.deepEqual(verbs("resourceclaims/driver"), ["associated-node:patch"]);
  assert.deepEqual(role.rules.find((r) => r.resources.includes("resourceclaims/driver")).resourceNames,
    ["rdma.k8s-rdma-shared-dp.io"]);
  assert.deepEqual(verbs("nodes"), ["get"]);
  assert.deepEqual(verbs("events"), ["create"]);
  assert.deepEqual(role.rules.find((r) => r.resources.includes("events")).apiGroups, ["events.k8s.io"]);
  assert.equal(role.rules.length, 6, "no rule the code does not use (deviceclasses, get on slices)");
  const binding = find(dra, "ClusterRoleBinding", "k8s-rdma-shared-dp-dra");
  assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "rdma-shared-dp", namespace: "kube-system" }]);
  const policy = find(dra, "ValidatingAdmissionPolicy", "k8s-rdma-shared-dp-own-node-slices");
  // Any namespace the overlay is moved to: the service account's name, not a literal namespace.
  assert.doesNotMatch(policy.spec.matchConditions[0].expression, /kube-system/);
  assert.match(policy.spec.matchConditions[0].expression, /endsWith\(":rdma-shared-dp"\)/);
  assert.ok(policy.spec.validations.some((v) => v.expression.includes("rdma.k8s-rdma-shared-dp.io")));
  assert.equal(find(dra, "ValidatingAdmissionPolicyBinding", policy.metadata.name).spec.policyName, policy.metadata.name);
});

// --- What README.md and docs/deploying.md say -----------------------------------------------

const section = (text, start) => {
  const i = text.indexOf(start);
  assert.ok(i >= 0, `no "${start}"`);
  const rest = text.slice(i + start.length);
  const end = rest.search(/\n- \*\*|\n## /);
  return start + (end < 0 ? rest : rest.slice(0, end));
};

// A DaemonSet's maxSurge needs maxUnavailable: 0, and this one cannot surge at all (its
// metrics port is a host port under the host network).
check("README's rollout advice is one the API server and the scheduler accept", () => {
  const rollout = section(readme, "- **Rollout.**");
  for (const m of rollout.matchAll(/maxSurge:\s*(\d+)/g)) {
    if (Number(m[1]) === 0) continue;
    assert.match(rollout, /maxUnavailable:\s*0\b/, `"${m[0]}" without maxUnavailable: 0`);
  }
  assert.match(rollout, /host ?port/i, "does not say why this DaemonSet cannot surge");
  const ru = (u, s) => validateRollingUpdateDaemonSet({ maxUnavailable: u, maxSurge: s }, "rollingUpdate").map(String);
  assert.match(ru(1, 1).join(), /may not be set when maxUnavailable is non-zero/);
  assert.deepEqual(ru(0, 1), []);
  assert.deepEqual(ru(1, 0), []);
  // With the host network, containerPort becomes hostPort (defaultHostNetworkPorts): a
  // surge pod on the same node could never be scheduled beside the old one.
  for (const b of Object.values(builds)) {
    for (const d of daemonSets(b.objs ?? [])) {
      if (d.spec.template.spec.hostNetwork && d.spec.template.spec.containers.some((c) => c.ports?.length)) {
        assert.equal(d.spec.updateStrategy.rollingUpdate.maxSurge, 0, b.dir);
      }
    }
  }
});

// OpenShift: the SCC goes to the service account the pods run as, per overlay.
check("the OpenShift SCC commands bind the service account each overlay runs as", () => {
  const docs = readme + "\n" + deploying;
  const cmd = /oc adm policy add-scc-to-user (\S+) -z ([\w-]+) -n ([\w-]+)/g;
  const hits = [...docs.matchAll(cmd)];
  assert.ok(hits.length >= 2, "no per-overlay oc adm policy commands");
  const bound = new Map();   // overlay -> service accounts the docs bind for it
  hits.forEach((m, i) => {
    const after = docs.slice(m.index + m[0].length, i + 1 < hits.length ? hits[i + 1].index : undefined);
    const scope = after.split(/\n\s*\n|\n- \*\*/)[0];
    const paths = [...scope.matchAll(/images\/((?:base|overlays\/[\w/-]+))/g)].map((p) => p[1].replace(/\/$/, ""));
    assert.ok(paths.length, `${m[0]}: names no overlay`);
    for (const p of paths) {
      assert.ok(builds[p], `${m[0]}: ${p} is no shipped overlay`);
      const accounts = daemonSets(objsOf(p)).map((d) => d.spec.template.spec.serviceAccountName ?? "default");
      assert.ok(accounts.includes(m[2]), `${m[0]} for images/${p}, whose pods run as ${accounts.join(", ")}`);
      for (const d of daemonSets(objsOf(p))) assert.equal(d.metadata.namespace, m[3], p);
      bound.set(p, new Set([...(bound.get(p) ?? []), m[2]]));
    }
  });
  for (const p of Object.keys(SHIPPED)) {
    if (SHIPPED[p].migrate) continue;
    for (const d of daemonSets(objsOf(p))) {
      const sa = d.spec.template.spec.serviceAccountName ?? "default";
      assert.ok(bound.get(p)?.has(sa), `no SCC command binds ${sa}, which images/${p} runs ${d.metadata.name} as`);
    }
  }
});

// "Try it": the pod's log is read once the pod runs.
check("README's Try it waits for the pod before reading its log", () => {
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((b) => b[1]);
  let seen = 0;
  for (const block of blocks) {
    const lines = block.split("\n");
    lines.forEach((line, i) => {
      const logs = line.match(/kubectl logs (?:pod\/)?([\w.-]+)/);
      if (!logs) return;
      seen++;
      const earlier = lines.slice(0, i).join("\n");
      assert.match(earlier, new RegExp(`kubectl wait [^\\n]*(?:pod/${logs[1]}\\b[^\\n]*--for=condition=Ready|--for=condition=Ready[^\\n]*pod/${logs[1]}\\b)`),
                   `kubectl logs ${logs[1]} with no kubectl wait --for=condition=Ready pod/${logs[1]} before it`);
      for (const stmt of line.split(/&&|;/)) assert.doesNotMatch(stmt.trim(), /^kubectl apply .*example-pod/, "apply and logs in one line");
    });
  }
  assert.ok(seen > 0, "README shows no kubectl logs");
  assert.match(readme, /kubectl apply -f images\/example-pod\.yaml/);
  assert.equal(pod.metadata.name, "rdma-test-pod");
});

check("docs/deploying.md names every shipped overlay and every component", () => {
  assert.ok(deploying, "no docs/deploying.md");
  for (const p of Object.keys(SHIPPED)) assert.ok(deploying.includes(`images/${p}`), `images/${p}`);
  for (const c of fs.readdirSync(path.join(images, "components"))) assert.ok(deploying.includes(`components/${c}`), `components/${c}`);
  assert.match(readme, /docs\/deploying\.md/);
});

// --- The renderer against kubectl kustomize ------------------------------------------------

// Every shipped overlay and example, and of the matrix the cells with the most components
// (each root and front end with NFD, control-plane, migrate; the late root; two staging
// fleets): together they use every component and every renderer feature (kubectl takes
// ~0.5 s a build). MANIFESTS_KUSTOMIZE_ALL=1 compares every build of the matrix too.
const kubectl = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" });
if (kubectl.status === 0) {
  const run = promisify(execFile);
  const labels = Object.keys(builds).filter((l) => process.env.MANIFESTS_KUSTOMIZE_ALL === "1" || !MATRIX.includes(l) ||
    / nfd\+control-plane migrate$/.test(l) || l.includes(" then ") || /^matrix staging (k0s-root cdi|default-root cdi) nfd$/.test(l));
  const results = {};
  const queue = [...labels];
  await Promise.all(Array.from({ length: 2 }, async () => {
    for (let label = queue.shift(); label !== undefined; label = queue.shift()) {
      try {
        const { stdout } = await run("kubectl", ["kustomize", builds[label].dir], { encoding: "utf8", maxBuffer: 1 << 24 });
        results[label] = { objs: YAML.parseAllDocuments(stdout).map((d) => d.toJS()) };
      } catch (e) {
        results[label] = { error: e.stderr || e.message };
      }
    }
  }));
  for (const label of labels) {
    check(`renderer matches kubectl kustomize (${label})`, () => {
      const theirs = results[label];
      assert.ok(!theirs.error, `kubectl kustomize failed: ${theirs.error}`);
      const key = (o) => `${o.kind}/${o.metadata.name}`;
      const sort = (objs) => [...objs].sort((a, b) => key(a).localeCompare(key(b)));
      assert.deepEqual(sort(objsOf(label)), sort(theirs.objs));
    });
  }
} else {
  console.log("skip renderer-vs-kubectl comparison: kubectl is not installed");
}

finish("manifest");
