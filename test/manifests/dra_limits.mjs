// What the API server's validation of a resource.k8s.io/v1 ResourceSlice adds to the
// OpenAPI schema (pkg/apis/resource/validation): name formats, list and map sizes, string
// lengths. Shared by the renderer check (dra_slices.mjs) and the fake kube-apiserver.
import assert from "node:assert/strict";

export const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const cIdentifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

// What the API server's validation adds to the OpenAPI schema (pkg/apis/resource/validation).
// `maxDevices`: 128, or 64 when a device has taints on 1.35+ (kube_release.mjs).
export function serverLimits(s, maxDevices = 128) {
  const spec = s.spec;
  assert.ok(dnsSubdomain.test(spec.driver) && spec.driver.length <= 63, `driver ${spec.driver}`);
  for (const part of spec.pool.name.split("/")) assert.ok(dnsSubdomain.test(part), `pool ${spec.pool.name}`);
  assert.ok(spec.pool.name.length <= 253);
  assert.ok(spec.pool.generation >= 0 && spec.pool.resourceSliceCount >= 1);
  // No minimum: validation.go's validateSet bounds the count only from above (a pool
  // whose every HCA is down on a server without taints publishes an empty slice).
  assert.ok(spec.devices.length <= maxDevices,
    `spec.devices: Too many: ${spec.devices.length}: must have at most ${maxDevices} items`);
  const names = new Set();
  for (const d of spec.devices) {
    assert.ok(dnsLabel.test(d.name) && d.name.length <= 63, `device name ${d.name}`);
    assert.ok(!names.has(d.name), `duplicate device ${d.name}`);
    names.add(d.name);
    const attrs = Object.entries(d.attributes ?? {});
    const caps = Object.entries(d.capacity ?? {});
    assert.ok(attrs.length + caps.length <= 32, `${d.name}: ${attrs.length + caps.length} attributes+capacities`);
    for (const [key, value] of [...attrs, ...caps]) {
      const [domain, id] = key.includes("/") ? key.split("/") : [null, key];
      if (domain !== null) assert.ok(dnsSubdomain.test(domain), `attribute domain ${key}`);
      assert.ok(cIdentifier.test(id) && id.length <= 32, `attribute name ${key}`);
      if ("string" in value) assert.ok(value.string.length <= 64, `${key} longer than 64`);
      if (key in (d.attributes ?? {})) {
        const kinds = Object.keys(value).filter((k) => ["string", "int", "bool", "version"].includes(k));
        assert.equal(kinds.length, 1, `${key}: exactly one value type`);
      }
    }
    for (const t of d.taints ?? []) {
      assert.ok(["NoSchedule", "NoExecute"].includes(t.effect), `taint effect ${t.effect}`);
    }
  }
}
