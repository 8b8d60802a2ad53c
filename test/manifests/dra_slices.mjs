// Checks every ResourceSlice the DRA renderer makes (test/dra/render_slices_main.cpp), and
// the DeviceClasses and claim templates of the plugin's `render` command, against the
// official Kubernetes schema (kubernetes-models, resource.k8s.io/v1), strict field
// validation and kube-apiserver's own validation (kube_validation.mjs) of every release the
// plugin supports, after that release's feature gates dropped what they drop.
// Usage: node dra_slices.mjs <dra-render-slices> <plugin binary> <config dir>
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from "kubernetes-models/admissionregistration.k8s.io/v1";
import { check, finish } from "./check.mjs";
import { DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice } from "kubernetes-models/resource.k8s.io/v1";
import path from "node:path";
import YAML from "yaml";
import { checkStrict, resourceV1 } from "./strict_fields.mjs";
import { dnsSubdomain, serverLimits } from "./dra_limits.mjs";
import { RELEASES, dropDisabledFields, gateDefaults } from "./kube_release.mjs";
import { ValidateResourceSlice, ValidateResourceSliceUpdate, generateName } from "./kube_validation.mjs";
import { allocate, parseSelector } from "./dra_allocator.mjs";

const slices = JSON.parse(execFileSync(process.argv[2], [], { maxBuffer: 1 << 30 }));
// Every model x rdmaHcaMax in {1, 2, 1000} x HCA states (all up, a port down, a CDI spec
// unwritable), and a node name longer than a DNS label: checked below with the rest, kept
// apart from the allocator checks' pools (docs/dra.md, "What the plugin does about it").
const matrix = JSON.parse(execFileSync(process.argv[2], ["--matrix"], { maxBuffer: 1 << 30 }));
check(`${matrix.length} matrix slices rendered (3 models x 3 rdmaHcaMax x 3 states + a long node name)`, () => {
  // One slice per pool, but 1000 slots take 16 (64 a slice): 3 x 3 x 3 pools, 3 x 15 more.
  assert.equal(matrix.length, 3 * 3 * 3 + 3 * 15 + 1);
  assert.ok(matrix.some((s) => (s.spec.devices[0]?.taints ?? []).some((t) => t.key.endsWith("/cdi-spec-unwritable"))));
  assert.ok(matrix.some((s) => s.spec.devices[0]?.capacity?.shares?.value === "1"));
});
check(`${slices.length} slices rendered (every model, several slices for 300 HCAs)`, () => {
  assert.ok(slices.length >= 6);
  // 300 HCAs at 64 a slice (the limit when any device may carry a taint): 5 slices.
  assert.ok(slices.some((s) => s.spec.pool.resourceSliceCount === 5));
  assert.ok(slices.every((s) => s.spec.devices.length <= 64));
});
[...slices, ...matrix].forEach((s, i) => {
  check(`schema: slice ${i} (${s.spec.pool.name}, ${s.spec.devices.length} devices)`, () => {
    new ResourceSlice(s).validate();
    checkStrict(s, resourceV1("ResourceSlice"));
  });
  check(`server limits: slice ${i}`, () => serverLimits(s));
  // What each release's kube-apiserver makes of it: its gates drop their fields
  // (strategy.go dropDisabledFields), it names the slice, then validates the create, and an
  // update that changes nothing (ValidateResourceSliceUpdate against the stored copy).
  for (const release of RELEASES) {
    check(`kube-apiserver ${release}: slice ${i} is accepted (create and a no-op update)`, () => {
      const gates = gateDefaults(release);
      const obj = structuredClone(s);
      obj.metadata.name ??= generateName(obj.metadata.generateName ?? "");
      dropDisabledFields(gates, obj, null);
      assert.deepEqual(ValidateResourceSlice(obj, { release, gates }).map(String), []);
      const stored = structuredClone(obj);
      Object.assign(stored.metadata, { resourceVersion: "1", uid: "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d", generation: 1 });
      const update = structuredClone(stored);
      dropDisabledFields(gates, update, stored);
      assert.deepEqual(ValidateResourceSliceUpdate(update, stored, { release, gates }).map(String), []);
    });
  }
});

check("the checks can fail: a wrong type, a misspelt field, a device name with capitals", () => {
  const broken = structuredClone(slices[0]);
  broken.spec.devices[0].allowMultipleAllocations = "yes";
  assert.throws(() => new ResourceSlice(broken).validate(), /allowMultipleAllocations/);
  const misspelt = structuredClone(slices[0]);
  misspelt.spec.devices[0].allowMultipleAlocations = true;
  assert.throws(() => checkStrict(misspelt, resourceV1("ResourceSlice")), /allowMultipleAlocations/);
  const deep = structuredClone(slices[0]);
  deep.spec.devices[0].capacity.shares.requestPolicy.validRnage = {};
  assert.throws(() => checkStrict(deep, resourceV1("ResourceSlice")), /validRnage/);
  const badName = structuredClone(slices[0]);
  badName.spec.devices[0].name = "HCA-0";
  assert.throws(() => serverLimits(badName), /spec\.devices\[0\]\.name: Invalid value: "HCA-0": a lowercase RFC 1123 label/);
  // The defect the old hand-written limits missed: one step past a one-share capacity.
  const oneShare = structuredClone(slices.find((x) => x.spec.devices[0].capacity?.shares?.requestPolicy));
  Object.assign(oneShare.spec.devices[0].capacity.shares, { value: "1", requestPolicy: { default: "1", validRange: { min: "1", step: "1" } } });
  assert.throws(() => serverLimits(oneShare, "1.36"), /validRange\.step: Invalid value: "1": one step 2 is larger than capacity value: 1/);
});

// `render`: what an administrator applies, for every example config, with every option.
const [plugin, configDir] = [process.argv[3], process.argv[4]];
const models = { DeviceClass, ResourceClaimTemplate, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding };
// Classes only for the entries served through DRA; a config without one is refused with one
// line, not answered with classes that select nothing (docs/reference.md, "Command line").
for (const file of ["config.json", "config.yaml", "config-cdi.json"]) {
  check(`render ${file}: no DRA entry, so nothing rendered and one line saying why`, () => {
    const r = spawnSync(plugin, ["render", `--config-file=${path.join(configDir, file)}`], { encoding: "utf8" });
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /no configList entry has "frontend": "dra"; nothing to render/);
    // One line saying why (config warnings, such as config.json's deprecated key, before it).
    assert.equal(r.stderr.trim().split("\n").filter((l) => !l.startsWith("warning: ")).length, 1);
  });
}
// An extended resource is served by a device that is the whole pool (perPool, slots): a perHca
// entry, or auto (perHca on 1.36+), would give `limits: ...: 1` one HCA where the device
// plugin gives them all. render refuses it with one line naming the field.
check("render --extended-resource-name: an auto entry is refused with one line naming its deviceModel", () => {
  const r = spawnSync(plugin, ["render", `--config-file=${path.join(configDir, "config-dra.json")}`,
                               "--extended-resource-name"], { encoding: "utf8" });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, "");
  assert.deepEqual(r.stderr.trim().split("\n"), [
    'configList[0].deviceModel: "auto" (perHca where the API server shares a device) cannot serve ' +
    "--extended-resource-name: a pod's `limits: rdma/hca_shared_devices_a: 1` would get one HCA, where the " +
    'device plugin gives every HCA of the pool; set "deviceModel": "perPool" (Kubernetes 1.36+) or "slots"']);
});
const perPoolDir = fs.mkdtempSync(path.join(os.tmpdir(), "dra-slices-"));
const perPoolConfig = path.join(perPoolDir, "config-dra-perpool.json");
{
  const c = JSON.parse(fs.readFileSync(path.join(configDir, "config-dra.json"), "utf8"));
  c.configList[0].deviceModel = "perPool";
  fs.writeFileSync(perPoolConfig, JSON.stringify(c));
}
for (const file of ["config-dra.json"]) {
  for (const extra of [[], ["--extended-resource-name", "--gpu-device-class=none"], ["--namespace=ml"]]) {
    const config = extra.includes("--extended-resource-name") ? perPoolConfig : path.join(configDir, file);
    const out = execFileSync(plugin, ["render", `--config-file=${config}`, ...extra]);
    const docs = YAML.parseAllDocuments(out.toString()).map((d) => d.toJS());
    check(`render ${file} ${extra.join(" ")}: ${docs.length} objects valid and strict`, () => {
      assert.ok(docs.length >= 2);
      for (const o of docs) {
        new models[o.kind](o).validate();
        if (o.apiVersion === "resource.k8s.io/v1") checkStrict(o, resourceV1(o.kind));
        assert.ok(dnsSubdomain.test(o.metadata.name) && o.metadata.name.length <= 253, o.metadata.name);
      }
      // One class and its templates per DRA entry (config-dra.json has one), then the policy.
      assert.deepEqual(docs.map((o) => o.kind).filter((k) => k.startsWith("Validating")),
                       ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]);
      const templates = docs.filter((o) => o.kind === "ResourceClaimTemplate");
      const ns = extra.find((e) => e.startsWith("--namespace="))?.split("=")[1];
      assert.ok(templates.every((t) => t.metadata.namespace === ns), "templates' namespace");
      const classes = docs.filter((o) => o.kind === "DeviceClass");
      const pairs = docs.filter((o) => o.metadata.name.endsWith("-with-gpu"));
      if (extra.includes("--extended-resource-name")) {
        assert.ok(classes.every((c) => c.spec.extendedResourceName.startsWith("rdma/")));
        assert.equal(pairs.length, 0);
      } else {
        assert.equal(pairs.length, classes.length);
        for (const p of pairs) {
          assert.equal(p.spec.spec.devices.constraints[0].matchAttribute, "resource.kubernetes.io/pcieRoot");
        }
      }
      for (const c of classes) {
        assert.match(c.spec.selectors[0].cel.expression, /^device\.driver == "rdma\.k8s-rdma-shared-dp\.io" && /);
      }
    });
  }
}

// What the scheduler would make of them: render's DeviceClass and claim templates for
// config-dra.json allocated by the test allocator (dra_allocator.mjs) against the renderer's
// slices, model by model. The resource behind config.json's first entry is the renderer's
// InfiniBand pool: two HCAs, the second with its port down (tainted), 1000 shares each.
{
  const out = execFileSync(plugin, ["render", `--config-file=${path.join(configDir, "config-dra.json")}`]);
  const docs = YAML.parseAllDocuments(out.toString()).map((d) => d.toJS());
  const classes = new Map(docs.filter((o) => o.kind === "DeviceClass").map((c) => [c.metadata.name, c]));
  const template = (name) => docs.find((o) => o.metadata.name === name).spec;
  const modelOf = (sl) => sl.spec.devices[0].name.replace(/-.*/, "");
  const sliceSets = { hca: [], pool: [], slot: [] };
  for (const sl of slices) sliceSets[modelOf(sl)].push(sl);
  const run = (modelSlices, spec, n, extraClasses = []) => {
    const claims = new Map();
    const all = new Map([...classes, ...extraClasses.map((c) => [c.metadata.name, c])]);
    for (let i = 0; i < n; ++i) {
      const claim = { metadata: { namespace: "ns", name: `c${i}` }, spec };
      const r = allocate(claim, { slices: modelSlices, classes: all, claims, claimKey: `ns/c${i}` });
      if (r.error) return { allocated: i, error: r.error, claims };
      claims.set(`ns/c${i}`, { ...claim, status: { allocation: r.allocation } });
    }
    return { allocated: n, claims };
  };
  const results = (claims) => [...claims.values()].flatMap((c) => c.status.allocation.devices.results);

  check("allocator, perHca: 1000 shares of the healthy HCA, then no more; the tainted one never", () => {
    const r = run(sliceSets.hca, template("hca-shared-devices-a-share").spec, 1001);
    assert.equal(r.allocated, 1000);
    assert.match(r.error, /request hca: no 1 device/);
    const res = results(r.claims);
    assert.deepEqual([...new Set(res.map((x) => x.device))], ["hca-0000-10-00-0"]);
    assert.equal(new Set(res.map((x) => x.shareID)).size, 1000);
    assert.ok(res.every((x) => x.consumedCapacity.shares === "1"));
    for (const c of r.claims.values()) {
      new ResourceClaim(c).validate();
      checkStrict(c, resourceV1("ResourceClaim"));
    }
  });
  check("allocator, perHca: claims of 300 shares consume 300 each; a fourth does not fit in the 100 left", () => {
    const spec = structuredClone(template("hca-shared-devices-a-share").spec);
    spec.devices.requests[0].exactly.capacity = { requests: { shares: "300" } };
    const r = run(sliceSets.hca, spec, 4);
    assert.equal(r.allocated, 3);
    assert.deepEqual(results(r.claims).map((x) => x.consumedCapacity.shares), ["300", "300", "300"]);
  });
  check("allocator, perHca: tolerating the port-down taint reaches the second HCA", () => {
    const spec = structuredClone(template("hca-shared-devices-a-share").spec);
    spec.devices.requests[0].exactly.capacity = { requests: { shares: "1000" } };
    spec.devices.requests[0].exactly.tolerations = [{ key: "rdma.k8s-rdma-shared-dp.io/port-down", operator: "Exists" }];
    const r = run(sliceSets.hca, spec, 3);
    assert.equal(r.allocated, 2);
    assert.deepEqual(results(r.claims).map((x) => x.device).sort(), ["hca-0000-10-00-0", "hca-0000-11-00-0"]);
  });
  check("allocator, perHca: the GPU pair template lands on an HCA under the GPU's PCIe root", () => {
    const gpuClass = { metadata: { name: "gpu.nvidia.com" }, spec: { selectors: [{ cel: { expression: 'device.driver == "gpu.nvidia.com"' } }] } };
    const gpus = { spec: { driver: "gpu.nvidia.com", nodeName: "worker-1.example.com", pool: { name: "worker-1/gpus", generation: 1, resourceSliceCount: 1 },
      devices: [{ name: "gpu-0", attributes: { "resource.kubernetes.io/pcieRoot": { string: "pci0001:20" } } },
                { name: "gpu-1", attributes: { "resource.kubernetes.io/pcieRoot": { string: "pci0000:00" } } }] } };
    const r = run([gpus, ...sliceSets.hca], template("hca-shared-devices-a-with-gpu").spec, 2, [gpuClass]);
    assert.equal(r.allocated, 1, r.error); // one GPU next to the healthy IB HCA; GPUs are exclusive
    assert.deepEqual(results(r.claims).map((x) => `${x.request}=${x.device}`), ["gpu=gpu-1", "hca=hca-0000-10-00-0"]);
  });
  check("allocator, perPool: one shared device, 1000 shares", () => {
    const r = run(sliceSets.pool, template("hca-shared-devices-a-share").spec, 1001);
    assert.equal(r.allocated, 1000);
    assert.deepEqual([...new Set(results(r.claims).map((x) => x.device))], ["pool"]);
  });
  check("allocator, slots: the rendered template allocates exclusive devices, no shareID, one claim each", () => {
    const r = run(sliceSets.slot, template("hca-shared-devices-a-share").spec, 3);
    assert.equal(r.allocated, 3, r.error);
    const res = results(r.claims);
    assert.equal(new Set(res.map((x) => x.device)).size, 3);
    assert.ok(res.every((x) => x.shareID === undefined && x.consumedCapacity === undefined));
  });
  check("allocator, slots: a request naming shares never lands on a device without them (1.36 scheduler)", () => {
    const spec = structuredClone(template("hca-shared-devices-a-share").spec);
    spec.devices.requests[0].exactly.capacity = { requests: { shares: "1" } };
    const r = run(sliceSets.slot, spec, 1);
    assert.equal(r.allocated, 0);
  });
  check("allocator: an older generation or an incomplete pool is not allocated from", () => {
    const stale = structuredClone(sliceSets.hca.filter((x) => x.spec.pool.name.endsWith("devices-a")));
    const newer = structuredClone(stale[0]);
    newer.spec.pool.generation = 2;
    newer.spec.pool.resourceSliceCount = 2; // its second slice is not there yet
    const r = run([...stale, newer], template("hca-shared-devices-a-share").spec, 1);
    assert.equal(r.allocated, 0);
  });
  check("allocator: CEL it does not understand is refused, not guessed", () => {
    assert.throws(() => parseSelector('device.attributes["x"].y.startsWith("a")'), /not understood/);
    assert.deepEqual(parseSelector('device.driver == "d" && device.attributes["d"].n == 3'),
                     [["driver", "d"], [{ domain: "d", name: "n" }, 3]]);
  });
}

finish("DRA");
