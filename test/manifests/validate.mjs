// Validates every manifest in images/ against the Kubernetes API schema (kubernetes-models,
// offline), checks what the deployment promises, and runs the ConfigMap's config through
// the plugin's own `validate` command. Usage: node validate.mjs <plugin-binary>
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { check, finish } from "./check.mjs";
import YAML from "yaml";
import * as core from "kubernetes-models/v1";
import * as apps from "kubernetes-models/apps/v1";
import * as rbac from "kubernetes-models/rbac.authorization.k8s.io/v1";
import * as admission from "kubernetes-models/admissionregistration.k8s.io/v1";
import { render } from "./render.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const images = path.resolve(here, "../../images");
const plugin = process.argv[2];

const models = {
  "v1/ConfigMap": core.ConfigMap, "v1/Pod": core.Pod, "v1/ServiceAccount": core.ServiceAccount,
  "apps/v1/DaemonSet": apps.DaemonSet,
  "rbac.authorization.k8s.io/v1/ClusterRole": rbac.ClusterRole,
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": rbac.ClusterRoleBinding,
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy": admission.ValidatingAdmissionPolicy,
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding":
    admission.ValidatingAdmissionPolicyBinding,
};
function validateObject(obj) {
  const Model = models[`${obj.apiVersion}/${obj.kind}`];
  assert.ok(Model, `no schema for ${obj.apiVersion} ${obj.kind}`);
  new Model(obj).validate(); // throws with the JSON path of the first violation
}

const base = render(path.join(images, "base"));
const cdi = render(path.join(images, "overlays/cdi"));
const k0s = render(path.join(images, "overlays/k0s"));
const dra = render(path.join(images, "overlays/dra"));
const draK0s = render(path.join(images, "overlays/dra-k0s"));
const migrate = render(path.join(images, "overlays/migrate"));
const exampleConfig = render(path.join(images, "examples/config"));
const exampleDraConfig = render(path.join(images, "examples/config-dra"));
const overlays = [["base", base], ["overlays/cdi", cdi], ["overlays/k0s", k0s],
                  ["overlays/dra", dra], ["overlays/dra-k0s", draK0s], ["overlays/migrate", migrate]];
const pod = YAML.parse(fs.readFileSync(path.join(images, "example-pod.yaml"), "utf8"));
const find = (objs, kind, name) => objs.find((o) => o.kind === kind && o.metadata.name === name);
const ds = find(base, "DaemonSet", "rdma-shared-dp-ds");
const container = ds.spec.template.spec.containers[0];

for (const [label, objs] of [...overlays, ["examples/config", exampleConfig],
                             ["examples/config-dra", exampleDraConfig], ["example-pod", [pod]]]) {
  for (const o of objs) check(`schema: ${label} ${o.kind}/${o.metadata.name}`, () => validateObject(o));
}

check("schema validation rejects a broken DaemonSet (the check can fail)", () => {
  const broken = structuredClone(ds);
  broken.spec.template.spec.containers[0].ports[0].containerPort = "metrics";
  assert.throws(() => validateObject(broken), /containerPort/);
});

check("daemonset: node-critical, tolerations, probes, resources, rollout", () => {
  const spec = ds.spec.template.spec;
  assert.equal(spec.priorityClassName, "system-node-critical");
  assert.ok(spec.tolerations.some((t) => t.operator === "Exists" && t.effect === "NoSchedule"));
  assert.ok(container.args.includes("--metrics-address=:10109"));
  assert.ok(container.resources.requests.memory && container.resources.limits.memory);
  assert.deepEqual(ds.spec.updateStrategy.rollingUpdate, { maxUnavailable: 1, maxSurge: 0 });
  assert.match(container.image, /:[0-9][^:]*$/, "image tag must be pinned");
});

// Issue 29 item 1: applying any overlay must never replace the operator's config (the Go
// plugin's kube-system/rdma-devices, which the DaemonSet reads).
check("no overlay ships a ConfigMap named rdma-devices; the DaemonSet reads that one", () => {
  for (const [label, objs] of overlays) {
    assert.equal(find(objs, "ConfigMap", "rdma-devices"), undefined, `${label} ships rdma-devices`);
    const d = find(objs, "DaemonSet", "rdma-shared-dp-ds").spec.template.spec;
    assert.equal(d.volumes.find((v) => v.name === "config").configMap.name, "rdma-devices", label);
  }
  for (const objs of [exampleConfig, exampleDraConfig]) {
    assert.deepEqual(objs.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`),
                     ["ConfigMap/kube-system/rdma-devices"]);
  }
});

// Issue 29 item 3: a busy or taken metrics port must not fail the kubelet's probes.
check("probes use their own localhost listener, never the metrics port, in every overlay", () => {
  for (const [label, objs] of overlays) {
    const c = find(objs, "DaemonSet", "rdma-shared-dp-ds").spec.template.spec.containers[0];
    assert.ok(c.args.includes("--health-address=127.0.0.1:10110"), label);
    for (const [probe, p] of [["liveness", "/healthz"], ["readiness", "/readyz"]]) {
      const get = c[`${probe}Probe`].httpGet;
      assert.deepEqual(get, { host: "127.0.0.1", path: p, port: 10110 }, `${label} ${probe}`);
    }
    const metrics = c.args.find((a) => a.startsWith("--metrics-address=")).split(":").pop();
    assert.notEqual(metrics, "10110", label);
    // Prometheus's exporter registry allocates 9100-9999 (9109: graphite_exporter).
    assert.ok(Number(metrics) < 9100 || Number(metrics) > 9999, `${label}: metrics port ${metrics}`);
  }
});

const envOf = (c, name) => c.env.find((e) => e.name === name)?.value;

// Every place the kubelet root appears in a rendered DaemonSet.
function kubeletRootPlaces(d) {
  const spec = d.spec.template.spec;
  const c = spec.containers[0];
  const vol = (n) => spec.volumes.find((v) => v.name === n).hostPath.path;
  const mnt = (n) => c.volumeMounts.find((m) => m.name === n).mountPath;
  return [envOf(c, "RDMADP_KUBELET_ROOT_DIR"), vol("device-plugins"),
          mnt("device-plugins"), vol("plugins-registry"), mnt("plugins-registry")];
}

check("only the two kubelet socket directories are mounted, host /dev read-only aside", () => {
  assert.deepEqual(kubeletRootPlaces(ds), ["/var/lib/kubelet",
    "/var/lib/kubelet/device-plugins", "/var/lib/kubelet/device-plugins",
    "/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins_registry"]);
  const spec = ds.spec.template.spec;
  assert.ok(!spec.volumes.some((v) => v.hostPath?.path === "/var/lib/kubelet"), "whole kubelet root");
  const dev = container.volumeMounts.find((m) => m.name === "host-dev");
  assert.equal(dev.mountPath, "/host/dev");
  assert.equal(dev.readOnly, true);
  assert.equal(envOf(container, "RDMADP_DEV_ROOT"), "/host/dev");
  // runc creates the termination message file under /dev: /dev must not be a read-only mount.
  const termination = container.terminationMessagePath ?? "/dev/termination-log";
  for (const m of container.volumeMounts) {
    assert.ok(!(m.readOnly && termination.startsWith(m.mountPath + "/")),
              `${termination} is inside the read-only mount ${m.mountPath}`);
  }
});

check("the allocator's environment is in the DaemonSet, where operators see it, in every overlay", () => {
  for (const objs of [base, cdi, k0s, dra, draK0s]) {
    const env = find(objs, "DaemonSet", "rdma-shared-dp-ds").spec.template.spec.containers[0].env;
    assert.equal(env.find((e) => e.name === "GLIBC_TUNABLES")?.value, "glibc.malloc.tcache_count=0");
    assert.equal(env.find((e) => e.name === "MALLOC_ARENA_MAX")?.value, "1");
  }
});

check("kubelet root dir is one parameter, overridable from an overlay (overlays/k0s)", () => {
  const moved = find(k0s, "DaemonSet", "rdma-shared-dp-ds");
  assert.deepEqual(kubeletRootPlaces(moved), ["/var/lib/k0s/kubelet",
    "/var/lib/k0s/kubelet/device-plugins", "/var/lib/k0s/kubelet/device-plugins",
    "/var/lib/k0s/kubelet/plugins_registry", "/var/lib/k0s/kubelet/plugins_registry"]);
  assert.ok(!JSON.stringify(moved).includes("/var/lib/kubelet"), "a copy of the old root is left");
});

// Issue 27 item 9: the DRA overlay kept <root>/plugins under /var/lib/kubelet on a kubelet
// with another root, so the DRA socket was where that kubelet never looks.
check("dra overlay composes with a custom kubelet root (overlays/dra-k0s)", () => {
  const moved = find(draK0s, "DaemonSet", "rdma-shared-dp-ds");
  const spec = moved.spec.template.spec;
  assert.ok(!JSON.stringify(moved).includes("/var/lib/kubelet"), "a copy of the old root is left");
  assert.equal(envOf(spec.containers[0], "RDMADP_KUBELET_ROOT_DIR"), "/var/lib/k0s/kubelet");
  for (const dir of ["/var/lib/k0s/kubelet/plugins", "/var/lib/k0s/kubelet/plugins_registry"]) {
    const mount = spec.containers[0].volumeMounts.find((m) => m.mountPath === dir);
    assert.ok(mount, `no ${dir} mount`);
    assert.equal(spec.volumes.find((v) => v.name === mount.name).hostPath.path, dir);
  }
});

check("cdi overlay really turns CDI on and mounts /var/run/cdi", () => {
  const c = find(cdi, "DaemonSet", "rdma-shared-dp-ds").spec.template.spec;
  assert.ok(c.containers[0].args.includes("--use-cdi"));
  assert.ok(c.containers[0].args.includes("--cdi-spec-dir=/var/run/cdi"));
  const mount = c.containers[0].volumeMounts.find((m) => m.mountPath === "/var/run/cdi");
  assert.ok(mount, "no /var/run/cdi mount");
  assert.equal(c.volumes.find((v) => v.name === mount.name).hostPath.path, "/var/run/cdi");
});

check("dra overlay: node name from the downward API, its service account, plugins dir, CDI", () => {
  const spec = find(dra, "DaemonSet", "rdma-shared-dp-ds").spec.template.spec;
  const c = spec.containers[0];
  assert.equal(spec.serviceAccountName, "rdma-shared-dp");
  assert.ok(find(dra, "ServiceAccount", "rdma-shared-dp"));
  assert.deepEqual(c.env.find((e) => e.name === "NODE_NAME").valueFrom.fieldRef, { fieldPath: "spec.nodeName" });
  assert.ok(c.args.includes("--dra-driver-name=rdma.k8s-rdma-shared-dp.io"));
  assert.ok(c.args.includes("--cdi-spec-dir=/var/run/cdi"));
  for (const dir of ["/var/lib/kubelet/plugins", "/var/lib/kubelet/plugins_registry", "/var/run/cdi"]) {
    const mount = c.volumeMounts.find((m) => m.mountPath === dir);
    assert.ok(mount, `no ${dir} mount`);
    assert.equal(spec.volumes.find((v) => v.name === mount.name).hostPath.path, dir);
  }
});

check("dra overlay: RBAC grants exactly what the DRA front end does", () => {
  const role = find(dra, "ClusterRole", "k8s-rdma-shared-dp-dra");
  const verbs = (res) => [...role.rules.find((r) => r.resources.includes(res)).verbs].sort();
  assert.deepEqual(verbs("resourceslices"), ["create", "delete", "list", "update", "watch"]);
  assert.deepEqual(verbs("resourceclaims"), ["get"]);
  assert.deepEqual(verbs("nodes"), ["get"]);
  assert.equal(role.rules.length, 3, "no rule the code does not use (deviceclasses, get on slices)");
  const binding = find(dra, "ClusterRoleBinding", "k8s-rdma-shared-dp-dra");
  assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "rdma-shared-dp", namespace: "kube-system" }]);
  const policy = find(dra, "ValidatingAdmissionPolicy", "k8s-rdma-shared-dp-own-node-slices");
  // Any namespace the overlay is moved to: the service account's name, not a literal namespace.
  assert.doesNotMatch(policy.spec.matchConditions[0].expression, /kube-system/);
  assert.match(policy.spec.matchConditions[0].expression, /endsWith\(":rdma-shared-dp"\)/);
  assert.ok(policy.spec.validations.some((v) => v.expression.includes("rdma.k8s-rdma-shared-dp.io")));
  assert.equal(find(dra, "ValidatingAdmissionPolicyBinding", policy.metadata.name).spec.policyName,
               policy.metadata.name);
});

check("the DRA example config passes validate, with one DRA and one device-plugin entry", () => {
  const cm = find(exampleDraConfig, "ConfigMap", "rdma-devices");
  const config = JSON.parse(cm.data["config.json"]);
  assert.deepEqual(config.configList.map((e) => e.frontend ?? "devicePlugin"), ["dra", "devicePlugin"]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "rdmadp-cm-")), "config.json");
  fs.writeFileSync(file, cm.data["config.json"]);
  const r = spawnSync(plugin, ["validate", `--config-file=${file}`], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

check("the DRA example is config/config-dra.json, and the overlay's admission policy what render prints", () => {
  const cm = find(exampleDraConfig, "ConfigMap", "rdma-devices");
  const example = fs.readFileSync(path.join(images, "../config/config-dra.json"), "utf8");
  assert.deepEqual(JSON.parse(cm.data["config.json"]), JSON.parse(example));
  const out = execFileSync(plugin, ["render", `--config-file=${path.join(images, "../config/config-dra.json")}`],
                           { encoding: "utf8" });
  const rendered = YAML.parseAllDocuments(out).map((d) => d.toJS());
  for (const kind of ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]) {
    const ours = dra.find((o) => o.kind === kind);
    assert.deepEqual(rendered.find((o) => o.kind === kind), ours, kind);
  }
});

// The migration (docs/migrating.md) moves one node at a time: the overlay is the base with
// a node selector and nothing else, so the last step (apply base) changes nothing else.
check("migrate overlay: base plus a node selector on k8s-rdma-shared-dp.io/migrate", () => {
  const theirs = structuredClone(migrate);
  const d = find(theirs, "DaemonSet", "rdma-shared-dp-ds");
  assert.deepEqual(d.spec.template.spec.nodeSelector, { "k8s-rdma-shared-dp.io/migrate": "true" });
  delete d.spec.template.spec.nodeSelector;
  assert.deepEqual(theirs, base);
  // Its own selector differs from the Go plugin's (name: rdma-shared-dp-ds): the orphaned
  // Go pods are never adopted, and theirs must be deleted with --cascade=orphan first.
  assert.notDeepEqual(d.spec.selector.matchLabels, { name: "rdma-shared-dp-ds" });
});

check("example pod asks for one share with IPC_LOCK", () => {
  const c = pod.spec.containers[0];
  assert.equal(String(c.resources.limits["rdma/hca_shared_devices_a"]), "1");
  assert.ok(c.securityContext.capabilities.add.includes("IPC_LOCK"));
});

check("the example config is config/config.json and passes validate, found through the DaemonSet's env", () => {
  const cm = find(exampleConfig, "ConfigMap", "rdma-devices");
  const example = fs.readFileSync(path.join(images, "../config/config.json"), "utf8");
  assert.deepEqual(JSON.parse(cm.data["config.json"]), JSON.parse(example));
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "rdmadp-cm-")), "config.json");
  fs.writeFileSync(file, cm.data["config.json"]);
  const mount = container.volumeMounts.find((m) => m.name === "config").mountPath;
  assert.equal(envOf(container, "RDMADP_CONFIG_FILE"), `${mount}/config.json`, "env points elsewhere");
  // `kubectl exec ... validate` in the pod: no flag, the path from the environment.
  const r = spawnSync(plugin, ["validate"], { encoding: "utf8",
                                              env: { ...process.env, RDMADP_CONFIG_FILE: file } });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const wrong = spawnSync(plugin, ["validate"], { encoding: "utf8",
                                                  env: { ...process.env, RDMADP_CONFIG_FILE: file + ".missing" } });
  assert.equal(wrong.status, 1, "the environment was not read");
});

const kubectl = spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" });
if (kubectl.status === 0) {
  for (const [dir, ours] of [...overlays, ["examples/config", exampleConfig],
                             ["examples/config-dra", exampleDraConfig]]) {
    check(`renderer matches kubectl kustomize (${dir})`, () => {
      const out = execFileSync("kubectl", ["kustomize", path.join(images, dir)], { encoding: "utf8" });
      const theirs = YAML.parseAllDocuments(out).map((d) => d.toJS());
      const key = (o) => `${o.kind}/${o.metadata.name}`;
      const sort = (objs) => [...objs].sort((a, b) => key(a).localeCompare(key(b)));
      assert.deepEqual(sort(ours), sort(theirs));
    });
  }
} else {
  console.log("skip renderer-vs-kubectl comparison: kubectl is not installed");
}

finish("manifest");
