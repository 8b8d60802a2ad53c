// What differs between kube-apiserver releases for the DRA front end, written from the
// upstream sources, so that the fake API server is exactly as unkind as the real one.
//
//  - Feature-gate defaults: pkg/features/kube_features.go (defaultVersionedKubernetesFeatureGates):
//      DRAConsumableCapacity  1.34 alpha off, 1.36 beta on
//      DRADeviceTaints        1.33 alpha off, 1.36 beta on, 1.37 GA on
//  - What a disabled gate drops on create and update: dropDisabledFields in
//    pkg/registry/resource/resourceslice/strategy.go. A field is kept on update when the
//    stored (old) slice already uses the feature (draDeviceTaintsFeatureInUse,
//    draConsumableCapacityFeatureInUse); on create there is no old slice.
//  - Devices per slice: validateResourceSliceSpec in pkg/apis/resource/validation/
//    validation.go: ResourceSliceMaxDevices (128), or
//    ResourceSliceMaxDevicesWithTaintsOrConsumesCounters (64) when any device has taints
//    (from 1.35, as issue 27 measured).
export const RELEASES = ["1.34", "1.35", "1.36", "1.37"];

export function gateDefaults(release) {
  if (!RELEASES.includes(release)) throw new Error(`unknown release ${release}`);
  const minor = Number(release.split(".")[1]);
  return {
    DRAConsumableCapacity: minor >= 36,
    DRADeviceTaints: minor >= 36,
  };
}

// validation.go: the device limit of one slice.
export function maxDevices(release, spec) {
  const minor = Number(release.split(".")[1]);
  const tainted = (spec.devices ?? []).some((d) => (d.taints ?? []).length > 0);
  return minor >= 35 && tainted ? 64 : 128;
}

function taintsInUse(slice) {
  return (slice?.spec?.devices ?? []).some((d) => (d.taints ?? []).length > 0);
}

function consumableCapacityInUse(slice) {
  return (slice?.spec?.devices ?? []).some(
    (d) => d.allowMultipleAllocations !== undefined ||
      Object.values(d.capacity ?? {}).some((c) => c.requestPolicy !== undefined));
}

// strategy.go dropDisabledFields for the fields our driver can set; `old` is null on create.
// Returns the dropped field paths (for the test's own accounting).
export function dropDisabledFields(gates, slice, old) {
  const dropped = new Set();
  const devices = slice.spec?.devices ?? [];
  if (!gates.DRADeviceTaints && !taintsInUse(old)) {
    for (const d of devices) {
      if (d.taints !== undefined) dropped.add("devices[].taints");
      delete d.taints;
    }
  }
  if (!gates.DRAConsumableCapacity && !consumableCapacityInUse(old)) {
    for (const d of devices) {
      if (d.allowMultipleAllocations !== undefined) dropped.add("devices[].allowMultipleAllocations");
      delete d.allowMultipleAllocations;
      for (const c of Object.values(d.capacity ?? {})) {
        if (c.requestPolicy !== undefined) dropped.add("capacity.requestPolicy");
        delete c.requestPolicy;
      }
    }
  }
  return [...dropped];
}
