// Static checks of Dockerfile.ubi (no Docker engine needed): stages, pinned base images,
// no `latest`, every copied file exists, a lean runtime stage with labels and ENTRYPOINT, and
// what NVIDIA network-operator's DaemonSet runs in the image (docs/network-operator.md).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { check, finish } from "./check.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const text = fs.readFileSync(path.join(root, "Dockerfile.ubi"), "utf8");
// Instructions with continuation lines joined, comments dropped.
const instructions = text
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"))
  .map((l) => {
    const [op, ...rest] = l.split(/\s+/);
    return { op: op.toUpperCase(), args: rest.join(" ") };
  });

// Split into stages.
const stages = [];
for (const ins of instructions) {
  if (ins.op === "FROM") {
    const m = ins.args.match(/^(\S+)(?:\s+AS\s+(\S+))?$/i);
    stages.push({ image: m[1], name: m[2], body: [] });
  } else if (stages.length) {
    stages[stages.length - 1].body.push(ins);
  }
}
const final = stages[stages.length - 1];

check("multi-stage", () => assert.ok(stages.length >= 2, `${stages.length} stage(s)`));
check("base images pinned by tag, never latest", () => {
  for (const s of stages) {
    assert.match(s.image, /^[^:]+:[0-9][\w.-]*$/, `${s.image} is not pinned to a version tag`);
  }
  assert.ok(!/:latest\b/.test(text), "mentions :latest");
});
check("runtime stage is UBI minimal", () => assert.match(final.image, /ubi9\/ubi-minimal:/));
check("every COPY source exists (or names an earlier stage)", () => {
  const names = new Set(stages.filter((s) => s.name).map((s) => s.name));
  for (const s of stages) {
    for (const ins of s.body.filter((i) => i.op === "COPY")) {
      const parts = ins.args.split(/\s+/);
      const from = parts.find((p) => p.startsWith("--from="));
      const srcs = parts.filter((p) => !p.startsWith("--")).slice(0, -1);
      if (from) {
        assert.ok(names.has(from.slice(7)), `COPY ${from}: no such stage`);
        continue;
      }
      for (const src of srcs) {
        assert.ok(fs.existsSync(path.join(root, src)), `COPY ${src}: not in the repository`);
        assert.notEqual(src, ".", "copies the whole tree");
      }
    }
  }
});
// The one package install the runtime stage may have: the tools NVIDIA network-operator's
// ofed-driver-validation init container runs in this image (docs/network-operator.md).
const initContainerPackages = ["grep", "kmod"];
check("runtime stage: no compilers, no source, no package but the operator's init container tools", () => {
  const body = final.body.map((i) => `${i.op} ${i.args}`).join("\n");
  const installs = final.body.filter((i) => i.op === "RUN" && /\b(dnf|microdnf|yum|rpm)\b/.test(i.args));
  assert.ok(installs.length <= 1, `${installs.length} RUNs with a package manager`);
  for (const ins of installs) {
    const m = ins.args.match(
      /^microdnf install -y --nodocs --setopt=install_weak_deps=0 ([a-z0-9 -]+?) && microdnf clean all$/);
    assert.ok(m, `RUN ${ins.args}: not one \`microdnf install -y --nodocs ` +
                 `--setopt=install_weak_deps=0 <packages> && microdnf clean all\``);
    assert.deepEqual(m[1].split(" ").sort(), initContainerPackages, `installs ${m[1]}`);
  }
  assert.ok(!/\b(gcc|g\+\+|cmake|-devel)\b/.test(body), "mentions a compiler or -devel package");
  assert.ok(!final.body.some((i) => i.op === "COPY" && !i.args.includes("--from=")), "copies from the build context");
});
check("network-operator's template: the build runs /bin/k8s-rdma-shared-dp and finds sh, lsmod, grep", () => {
  // Its container's command is /bin/k8s-rdma-shared-dp (test/manifests/runc.mjs runs it); its
  // init container (up to v26.1.x, with ofedDriver) runs `sh -c "until lsmod | grep mlx5_core; ..."`.
  const runs = final.body.filter((i) => i.op === "RUN").map((i) => i.args);
  const copy = final.body.findIndex((i) => i.op === "COPY" && i.args.includes("--from="));
  const checked = final.body.findIndex((i) => i.op === "RUN" &&
    /(^|&& )\/bin\/k8s-rdma-shared-dp --version( |$)/.test(i.args));
  assert.ok(checked > copy, `no RUN after the binary's COPY runs /bin/k8s-rdma-shared-dp --version: ${runs}`);
  assert.ok(runs.some((r) => r.includes(
    'for tool in sh lsmod grep; do command -v "$tool" >/dev/null || exit 1; done')),
    `no RUN checks that sh, lsmod and grep are found: ${runs}`);
  assert.ok(runs.some((r) => /\binstall\b.*\bkmod\b/.test(r)), "kmod (lsmod) is not installed");
});
check("labels and exec-form ENTRYPOINT", () => {
  const labels = final.body.filter((i) => i.op === "LABEL").map((i) => i.args).join(" ");
  for (const l of ["name=", "version=", "summary=", "io.k8s.display-name="]) {
    assert.ok(labels.includes(l), `missing label ${l}`);
  }
  const ep = final.body.find((i) => i.op === "ENTRYPOINT");
  assert.ok(ep, "no ENTRYPOINT");
  assert.match(ep.args, /^\["\/usr\/bin\/k8s-rdma-shared-dp"\]$/);
});
check("sets the allocator's environment (GLIBC_TUNABLES, MALLOC_ARENA_MAX) where operators see it", () => {
  const envs = final.body.filter((i) => i.op === "ENV").map((i) => i.args);
  assert.ok(envs.includes("GLIBC_TUNABLES=glibc.malloc.tcache_count=0 MALLOC_ARENA_MAX=1"), `ENV ${envs}`);
});
check("runs as root by default, so it drops into the Go plugin's DaemonSet", () => {
  const users = final.body.filter((i) => i.op === "USER").map((i) => i.args);
  assert.ok(users.length === 0 || ["0", "root"].includes(users[users.length - 1]), `USER ${users}`);
});
check("the runtime closure comes from scripts/copy-closure.sh (tested under chroot)", () => {
  const builder = stages[0].body.map((i) => `${i.op} ${i.args}`).join("\n");
  assert.ok(builder.includes("./scripts/copy-closure.sh build/k8s-rdma-shared-dp /out"));
  assert.ok(!/cp -a \/usr\/lib64\/libibverbs/.test(builder), "copies provider links as links");
});
check("no OpenSSL and no HTTP library: the metrics endpoint is our own", () => {
  assert.ok(!/openssl-devel/.test(text), "installs openssl-devel");
  assert.ok(!/httplib/.test(text), "installs cpp-httplib");
});
check(".dockerignore keeps build output and .git out", () => {
  const ignore = fs.readFileSync(path.join(root, ".dockerignore"), "utf8");
  for (const e of [".git", "build"]) assert.ok(ignore.split("\n").includes(e), `${e} not ignored`);
});
finish("Dockerfile");
