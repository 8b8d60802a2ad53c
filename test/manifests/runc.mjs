// The rendered DaemonSet's container, created by runc (the runtime under containerd and
// CRI-O): its volume mounts, read-only root, and the termination message file the kubelet
// bind-mounts at terminationMessagePath, on an OCI bundle whose rootfs is the image's
// runtime closure (scripts/copy-closure.sh). It must start and run `validate` on the
// mounted ConfigMap, found through the environment the DaemonSet sets (as `kubectl exec ...
// validate` in the pod does). The base ships no ConfigMap: the example one is mounted. The
// old layout (host /dev read-only over /dev) must fail to start, as
// it did on a freshly booted node: the check can fail.
// Usage: node runc.mjs <plugin-binary>
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { check, finish } from "./check.mjs";
import { render } from "./render.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const plugin = process.argv[2];
const objects = render(path.join(root, "images/base"));
const ds = objects.find((o) => o.kind === "DaemonSet");
const cm = render(path.join(root, "images/examples/config"))
  .find((o) => o.kind === "ConfigMap" && o.metadata.name === "rdma-devices");
const spec = ds.spec.template.spec;
const container = spec.containers[0];

const work = fs.mkdtempSync(path.join(os.tmpdir(), "rdmadp-runc-"));
const rootfs = path.join(work, "rootfs");
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: "utf8", ...opts });
const closure = run(path.join(root, "scripts/copy-closure.sh"), [plugin, rootfs, "--with-base"]);
assert.equal(closure.status, 0, closure.stderr);
run("ldconfig", ["-r", rootfs]);

// hostPath volumes: /dev is the real one (read-only); kubelet directories are stand-ins.
function hostSource(volume) {
  if (volume.hostPath.path === "/dev") return "/dev";
  const dir = path.join(work, "host", volume.hostPath.path);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
function ociMounts(c) {
  const mounts = [];
  for (const m of c.volumeMounts) {
    const v = spec.volumes.find((x) => x.name === m.name);
    let source;
    if (v.hostPath) {
      source = hostSource(v);
    } else {
      source = path.join(work, "configmap", v.name);
      fs.mkdirSync(source, { recursive: true });
      for (const item of v.configMap.items) {
        fs.writeFileSync(path.join(source, item.path), cm.data[item.key]);
      }
    }
    mounts.push({ destination: m.mountPath, type: "bind", source,
                  options: ["rbind", m.readOnly ? "ro" : "rw"] });
  }
  // The kubelet bind-mounts a fresh file at terminationMessagePath into every container.
  const termination = path.join(work, "termination-log");
  fs.writeFileSync(termination, "");
  mounts.push({ destination: c.terminationMessagePath ?? "/dev/termination-log", type: "bind",
                source: termination, options: ["rbind", "rw"] });
  return mounts;
}

function runContainer(name, c, args) {
  const bundle = path.join(work, name);
  fs.mkdirSync(bundle);
  assert.equal(run("runc", ["spec", "--bundle", bundle]).status, 0);
  const config = JSON.parse(fs.readFileSync(path.join(bundle, "config.json"), "utf8"));
  config.process.terminal = false;
  config.process.args = ["/usr/bin/k8s-rdma-shared-dp", ...args];
  for (const e of c.env ?? []) if (e.value !== undefined) config.process.env.push(`${e.name}=${e.value}`);
  config.process.user = { uid: c.securityContext?.runAsUser ?? 0, gid: 0 };
  config.root = { path: rootfs, readonly: !!c.securityContext?.readOnlyRootFilesystem };
  config.hostname = name;
  config.mounts.push(...ociMounts(c));
  fs.writeFileSync(path.join(bundle, "config.json"), JSON.stringify(config, null, 1));
  const r = run("runc", ["run", "--bundle", bundle, `rdmadp-${name}-${process.pid}`],
                { timeout: 30000 });
  return { status: r.status, output: (r.stdout ?? "") + (r.stderr ?? "") };
}

check("runc starts the DaemonSet's container and it validates the mounted ConfigMap", () => {
  const r = runContainer("ours", container, ["validate"]);  // the path from RDMADP_CONFIG_FILE
  assert.equal(r.status, 0, r.output);
  assert.match(r.output, /valid; \d+ resource\(s\)/);
});

check("the old layout (host /dev read-only over /dev) cannot start: the check can fail", () => {
  const old = structuredClone(container);
  old.volumeMounts = old.volumeMounts.filter((m) => m.name !== "host-dev");
  old.volumeMounts.push({ name: "host-dev", mountPath: "/dev", readOnly: true });
  const r = runContainer("old", old, ["--version"]);
  assert.notEqual(r.status, 0, r.output);
  assert.match(r.output, /termination-log.*read-only file system/);
});

fs.rmSync(work, { recursive: true, force: true });
finish("runc");
