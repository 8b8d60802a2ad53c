// Checks every ResourceSlice the DRA renderer makes (test/dra/render_slices_main.cpp), and
// the DeviceClasses and claim templates of the plugin's `render` command, against the
// official Kubernetes schema (kubernetes-models, resource.k8s.io/v1), strict field
// validation and the server-side limits the schema does not carry.
// Usage: node dra_slices.mjs <dra-render-slices> <plugin binary> <config dir>
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { check, finish } from "./check.mjs";
import { DeviceClass, ResourceClaimTemplate, ResourceSlice } from "kubernetes-models/resource.k8s.io/v1";
import path from "node:path";
import YAML from "yaml";
import { checkStrict, resourceV1 } from "./strict_fields.mjs";
import { dnsSubdomain, serverLimits } from "./dra_limits.mjs";

const slices = JSON.parse(execFileSync(process.argv[2], [], { maxBuffer: 1 << 30 }));
check(`${slices.length} slices rendered (every model, several slices for 300 HCAs)`, () => {
  assert.ok(slices.length >= 6);
  assert.ok(slices.some((s) => s.spec.pool.resourceSliceCount === 3));
});
slices.forEach((s, i) => {
  check(`schema: slice ${i} (${s.spec.pool.name}, ${s.spec.devices.length} devices)`, () => {
    new ResourceSlice(s).validate();
    checkStrict(s, resourceV1("ResourceSlice"));
  });
  check(`server limits: slice ${i}`, () => serverLimits(s));
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
  assert.throws(() => serverLimits(badName), /device name/);
});

// `render`: what an administrator applies, for every example config, with every option.
const [plugin, configDir] = [process.argv[3], process.argv[4]];
const models = { DeviceClass, ResourceClaimTemplate };
for (const file of ["config.json", "config.yaml", "config-cdi.json"]) {
  for (const extra of [[], ["--extended-resource-name", "--gpu-device-class=none"]]) {
    const out = execFileSync(plugin, ["render", `--config-file=${path.join(configDir, file)}`, ...extra]);
    const docs = YAML.parseAllDocuments(out.toString()).map((d) => d.toJS());
    check(`render ${file} ${extra.join(" ")}: ${docs.length} objects valid and strict`, () => {
      assert.ok(docs.length >= 2);
      for (const o of docs) {
        new models[o.kind](o).validate();
        checkStrict(o, resourceV1(o.kind));
        assert.ok(dnsSubdomain.test(o.metadata.name) && o.metadata.name.length <= 253, o.metadata.name);
      }
      const classes = docs.filter((o) => o.kind === "DeviceClass");
      const pairs = docs.filter((o) => o.metadata.name.endsWith("-with-gpu"));
      if (extra.length) {
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

finish("DRA");
