// What the API server's validation of a resource.k8s.io/v1 ResourceSlice adds to the
// OpenAPI schema: a thin wrapper over the port of kube-apiserver's validation
// (kube_validation.mjs, pkg/apis/resource/validation), shared by the renderer check
// (dra_slices.mjs). The fake kube-apiserver calls the port itself.
import { ValidateResourceSlice, generateName } from "./kube_validation.mjs";
import { gateDefaults } from "./kube_release.mjs";

export const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const cIdentifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Throws, with every field error kube-apiserver `release` would answer (one a line), when
// it would refuse to create `s` as given (no gated field dropped: see dropDisabledFields in
// kube_release.mjs for that). A slice with only generateName is named first, as the server
// does before validating.
export function serverLimits(s, release = "1.37", gates = gateDefaults(release)) {
  const obj = structuredClone(s);
  if (!obj.metadata?.name && obj.metadata?.generateName) obj.metadata.name = generateName(obj.metadata.generateName);
  const errs = ValidateResourceSlice(obj, { release, gates });
  if (errs.length) throw new Error(errs.map(String).join("\n"));
}
