// kube-apiserver's validation of a pod template and a DaemonSet, the rules the OpenAPI
// schema (kubernetes-models) cannot express: unique names, mounts that name a volume,
// exactly one volume source, host paths without "..", selectors that match the template,
// rolling-update bounds... Ported from kubernetes/kubernetes rule for rule where this
// repository's manifests can reach them, re-expressed here (no Go code copied); each
// function names the upstream function it mirrors. FieldError (field path, type, value,
// detail, printed as Go's field.Error) comes from kube_validation.mjs.
//
// Sources (kubernetes/kubernetes, the main branch of the 1.35/1.36 period):
//  - pkg/apis/core/validation/validation.go: ValidatePodTemplateSpec, ValidatePodSpec and,
//    below it, ValidateVolumes, validateVolumeSource, validateHostPathVolumeSource,
//    validateHostPathType, validatePathNoBacksteps, validateLocalDescendingPath,
//    ValidateLocalNonReservedPath, validateConfigMapVolumeSource, validateSecretVolumeSource,
//    validateKeyToPath, validateEmptyDirVolumeSource (sizeLimit only), validateContainers,
//    validateInitContainers (name uniqueness across both lists), validateContainerCommon,
//    validateContainerPorts, ValidateEnv, validateEnvVarValueFrom,
//    validateObjectFieldSelector, ValidateEnvFrom, ValidateVolumeMounts (with
//    IsMatchedVolume, mountNameAlreadyExists/mountPathAlreadyExists against
//    volumeDevices), validateMountPropagation, validateMountRecursiveReadOnly,
//    validatePullPolicy, ValidateContainerResourceRequirements (request <= limit, extended
//    resources request == limit), validateLivenessProbe, validateReadinessProbe,
//    validateStartupProbe, validateProbe, validateHandler, validateExecAction,
//    validateHTTPGetAction, validateTCPSocketAction, validateGRPCAction,
//    ValidatePortNumOrName, checkHostPortConflicts/AccumulateUniqueHostPorts,
//    validatePodHostNetworkDeps, validateRestartPolicy, validateDNSPolicy, validateAffinity,
//    validateNodeAffinity, ValidateNodeSelector, ValidateNodeSelectorTerm,
//    ValidateNodeSelectorRequirement, ValidateNodeFieldSelectorRequirement,
//    ValidatePreferredSchedulingTerms, ValidateTolerations, validateTaintEffect, the
//    serviceAccountName and priorityClassName name checks;
//  - pkg/apis/apps/validation/validation.go: ValidateDaemonSetSpec,
//    ValidateDaemonSetUpdateStrategy, ValidateRollingUpdateDaemonSet,
//    ValidatePositiveIntOrPercent, IsNotMoreThan100Percent, getIntOrPercentValue;
//  - staging/src/k8s.io/apimachinery: pkg/apis/meta/v1/validation ValidateLabels,
//    ValidateLabelName, ValidateLabelSelector (matchLabels and matchExpressions), labels
//    selector matching; pkg/util/validation IsValidPortNum, IsValidPortName, IsEnvVarName,
//    IsValidPercent, IsConfigMapKey;
//  - pkg/apis/core/v1/defaults.go and pkg/apis/apps/v1/defaults.go: the defaults the API
//    server applies before it validates (SetDefaults_PodSpec, SetDefaults_Container,
//    SetDefaults_ContainerPort, SetDefaults_Probe, SetDefaults_HTTPGetAction,
//    SetDefaults_HostPathVolumeSource, SetDefaults_ConfigMapVolumeSource,
//    SetDefaults_ObjectFieldSelector, defaultHostNetworkPorts, SetDefaults_DaemonSet).
//
// Not ported (nothing in images/ uses them, and schema validation still checks their
// shape): the other volume sources' own fields (NFS, iSCSI, CSI, projected, ephemeral,
// image...), security contexts, sysctls, DNS config, topology spread, resource claims,
// pod-level resources, Windows rules, the feature-gated relaxed env-name rule (the strict
// rule is applied, which the relaxed one accepts).
//
// Warnings and rules of our own, kept apart from the API's errors (podSpecWarnings,
// ownRules): duplicate env names within a container (pkg/api/pod/warnings.go: the API
// server accepts them with a warning, "hides previous definition of", and `kubectl apply`
// may drop one); a flag given twice in a container's args; two volumes of one host path;
// a host path that is not absolute and clean.
import { FieldError, goQuote, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue,
         parseQuantity } from "./kube_validation.mjs";

// --- field/errors.go constructors and field.Path ------------------------------------------

const required = (f, detail = "") => new FieldError("FieldValueRequired", f, "", detail);
const invalid = (f, value, detail) => new FieldError("FieldValueInvalid", f, value, detail);
const forbidden = (f, detail) => new FieldError("FieldValueForbidden", f, "", detail);
const duplicate = (f, value) => new FieldError("FieldValueDuplicate", f, value, "");
const notFound = (f, value) => new FieldError("FieldValueNotFound", f, value, "");
const quote = (s) => goQuote(String(s));
const notSupported = (f, value, valid) => new FieldError("FieldValueNotSupported", f, value,
  "supported values: " + valid.map(quote).join(", "));
const child = (p, ...names) => names.reduce((acc, n) => (acc ? `${acc}.${n}` : n), p);
const index = (p, i) => `${p}[${i}]`;
const key = (p, k) => `${p}[${k}]`;
const list = (v) => (Array.isArray(v) ? v : []);
const entries = (m) => (m && typeof m === "object" ? Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1)) : []);
const blen = (s) => Buffer.byteLength(s, "utf8");

// --- k8s.io/apimachinery/pkg/util/validation ----------------------------------------------

const inclusiveRangeError = (lo, hi) => `must be between ${lo} and ${hi}, inclusive`;
// IsValidPortNum
const isValidPortNum = (port) => (Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)]);
// IsValidPortName
function isValidPortName(port) {
  const errs = [];
  if (blen(port) > 15) errs.push("must be no more than 15 characters");
  if (!/^[-a-z0-9]+$/.test(port)) errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!/[a-z]/.test(port)) errs.push("must contain at least one letter (a-z)");
  if (port.includes("--")) errs.push("must not contain consecutive hyphens");
  if (port.length > 0 && (port[0] === "-" || port[port.length - 1] === "-")) errs.push("must not begin or end with a hyphen");
  return errs;
}
// IsEnvVarName (the strict form; RelaxedEnvironmentVariableValidation accepts a superset)
function isEnvVarName(value) {
  const errs = [];
  if (!/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(value)) {
    errs.push("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', " +
              "and must not start with a digit (e.g. 'my.env-name', or 'MY_ENV.NAME', or 'MyEnvName1', " +
              "regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')");
  }
  if (value === ".") errs.push("must not be '.'");
  else if (value === "..") errs.push("must not be '..'");
  else if (value.startsWith("..")) errs.push("must not start with '..'");
  return errs;
}
// IsConfigMapKey
function isConfigMapKey(value) {
  const errs = [];
  if (blen(value) > 253) errs.push("must be no more than 253 characters");
  if (!/^[-._a-zA-Z0-9]+$/.test(value)) {
    errs.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' " +
              "(e.g. 'key.name', or 'KEY_NAME', or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')");
  }
  if (value === ".") errs.push("must not be '.'");
  else if (value === "..") errs.push("must not be '..'");
  else if (value.startsWith("..")) errs.push("must not start with '..'");
  return errs;
}
// IsValidPercent
const isValidPercent = (s) => (/^[0-9]+%$/.test(s) ? [] : [
  "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%', or '93%', regex used for validation is '[0-9]+%')"]);

// --- meta/v1/validation --------------------------------------------------------------------

// ValidateLabelName
const validateLabelName = (name, f) => isQualifiedName(name).map((m) => invalid(f, name, m));
// ValidateLabels
function validateLabels(labels, f) {
  const errs = [];
  for (const [k, v] of entries(labels)) {
    errs.push(...validateLabelName(k, f));
    for (const m of isValidLabelValue(String(v))) errs.push(invalid(f, v, m));
  }
  return errs;
}
// ValidateLabelSelector (LabelSelectorValidationOptions{} : invalid label values rejected)
function validateLabelSelector(sel, f) {
  const errs = [];
  if (!sel) return errs;
  list(sel.matchExpressions).forEach((e, i) => {
    const p = index(child(f, "matchExpressions"), i);
    const values = list(e.values);
    switch (e.operator) {
      case "In": case "NotIn":
        if (values.length === 0) errs.push(required(child(p, "values"), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case "Exists": case "DoesNotExist":
        if (values.length > 0) errs.push(forbidden(child(p, "values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(invalid(child(p, "operator"), e.operator, "not a valid selector operator"));
    }
    errs.push(...validateLabelName(e.key ?? "", child(p, "key")));
    values.forEach((v, j) => isValidLabelValue(v).forEach((m) => errs.push(invalid(index(child(p, "values"), j), v, m))));
  });
  errs.push(...validateLabels(sel.matchLabels, child(f, "matchLabels")));
  return errs;
}
// LabelSelectorAsSelector(...).Matches(labels.Set(...))
export function selectorMatches(sel, labels = {}) {
  for (const [k, v] of entries(sel?.matchLabels)) if (labels[k] !== v) return false;
  for (const e of list(sel?.matchExpressions)) {
    const has = Object.hasOwn(labels, e.key);
    const ok = { In: has && list(e.values).includes(labels[e.key]), NotIn: !has || !list(e.values).includes(labels[e.key]),
                 Exists: has, DoesNotExist: !has }[e.operator];
    if (!ok) return false;
  }
  return true;
}

// --- Defaults applied before validation (pkg/apis/core/v1/defaults.go, apps/v1) -----------

// SetDefaults_Container's image pull policy: Always for ":latest" or no tag, else IfNotPresent.
function defaultPullPolicy(image) {
  const noDigest = image.split("@")[0];
  const last = noDigest.slice(noDigest.lastIndexOf("/") + 1);
  const tag = last.includes(":") ? last.slice(last.indexOf(":") + 1) : (image.includes("@") ? "" : "latest");
  return tag === "latest" ? "Always" : "IfNotPresent";
}

function defaultProbe(p) {
  if (!p) return;
  p.timeoutSeconds ??= 1; p.periodSeconds ??= 10; p.successThreshold ??= 1; p.failureThreshold ??= 3;
  if (p.httpGet) { p.httpGet.path ??= "/"; p.httpGet.scheme ??= "HTTP"; }
}

function defaultContainer(c, hostNetwork) {
  c.terminationMessagePath ??= "/dev/termination-log";
  c.terminationMessagePolicy ??= "File";
  c.imagePullPolicy ??= defaultPullPolicy(c.image ?? "");
  for (const port of list(c.ports)) {
    port.protocol ??= "TCP";                               // SetDefaults_ContainerPort
    if (hostNetwork && !port.hostPort) port.hostPort = port.containerPort; // defaultHostNetworkPorts
  }
  for (const e of list(c.env)) if (e.valueFrom?.fieldRef) e.valueFrom.fieldRef.apiVersion ??= "v1";
  defaultProbe(c.livenessProbe); defaultProbe(c.readinessProbe); defaultProbe(c.startupProbe);
}

export function setDefaultsPodSpec(spec) {
  spec.restartPolicy ??= "Always";
  spec.dnsPolicy ??= "ClusterFirst";
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= "default-scheduler";
  for (const c of [...list(spec.containers), ...list(spec.initContainers)]) defaultContainer(c, spec.hostNetwork === true);
  for (const v of list(spec.volumes)) {
    if (v.hostPath) v.hostPath.type ??= "";
    if (v.configMap) v.configMap.defaultMode ??= 0o644;
    if (v.secret) v.secret.defaultMode ??= 0o644;
  }
  return spec;
}

export function setDefaultsDaemonSet(ds) {
  const spec = ds.spec;
  spec.updateStrategy ??= {};
  spec.updateStrategy.type ??= "RollingUpdate";
  if (spec.updateStrategy.type === "RollingUpdate") {
    spec.updateStrategy.rollingUpdate ??= {};
    spec.updateStrategy.rollingUpdate.maxUnavailable ??= 1;
    spec.updateStrategy.rollingUpdate.maxSurge ??= 0;
  }
  spec.revisionHistoryLimit ??= 10;
  setDefaultsPodSpec(spec.template.spec);
  return ds;
}

// --- Volumes --------------------------------------------------------------------------------

const VOLUME_SOURCES = ["emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore",
  "secret", "nfs", "iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs",
  "quobyte", "downwardAPI", "fc", "flexVolume", "configMap", "azureFile", "vsphereVolume",
  "photonPersistentDisk", "portworxVolume", "azureDisk", "storageos", "projected", "scaleIO", "csi",
  "ephemeral", "image"];
const HOST_PATH_TYPES = ["", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"];
const fileModeErrorMsg = "must be a number between 0 and 0777 (octal), both inclusive";

// validatePathNoBacksteps
function validatePathNoBacksteps(target, f) {
  return target.replace(/\\/g, "/").split("/").includes("..") ? [invalid(f, target, "must not contain '..'")] : [];
}
// validateLocalDescendingPath
function validateLocalDescendingPath(target, f) {
  const errs = [];
  if (target.startsWith("/")) errs.push(invalid(f, target, "must be a relative path"));
  errs.push(...validatePathNoBacksteps(target, f));
  return errs;
}
// ValidateLocalNonReservedPath
function validateLocalNonReservedPath(target, f) {
  const errs = validateLocalDescendingPath(target, f);
  if (target.startsWith("..") && !target.startsWith("../")) errs.push(invalid(f, target, "must not start with '..'"));
  return errs;
}
// validateHostPathType
const validateHostPathType = (t, f) => (t !== undefined && t !== null && !HOST_PATH_TYPES.includes(t)
  ? [notSupported(f, t, [...HOST_PATH_TYPES].sort())] : []);
// validateHostPathVolumeSource
function validateHostPathVolumeSource(hp, f) {
  if (!hp.path) return [required(child(f, "path"))];
  return [...validatePathNoBacksteps(hp.path, child(f, "path")), ...validateHostPathType(hp.type, child(f, "type"))];
}
const badMode = (m) => m !== undefined && m !== null && (m > 0o777 || m < 0);
// validateKeyToPath
function validateKeyToPath(kp, f) {
  const errs = [];
  if (!kp.key) errs.push(required(child(f, "key")));
  if (!kp.path) errs.push(required(child(f, "path")));
  errs.push(...validateLocalNonReservedPath(kp.path ?? "", child(f, "path")));
  if (badMode(kp.mode)) errs.push(invalid(child(f, "mode"), kp.mode, fileModeErrorMsg));
  return errs;
}
// validateConfigMapVolumeSource, validateSecretVolumeSource
function validateItemsSource(src, nameField, f) {
  const errs = [];
  if (!src[nameField]) errs.push(required(child(f, nameField)));
  if (badMode(src.defaultMode)) errs.push(invalid(child(f, "defaultMode"), src.defaultMode, fileModeErrorMsg));
  list(src.items).forEach((kp, i) => errs.push(...validateKeyToPath(kp, index(child(f, "items"), i))));
  return errs;
}
// validateVolumeSource: exactly one source; the sources images/ uses are validated in full.
function validateVolumeSource(vol, f) {
  const errs = [];
  let n = 0;
  for (const s of VOLUME_SOURCES) {
    if (vol[s] === undefined || vol[s] === null) continue;
    if (n > 0) { errs.push(forbidden(child(f, s), "may not specify more than 1 volume type")); continue; }
    n++;
    if (s === "hostPath") errs.push(...validateHostPathVolumeSource(vol.hostPath, child(f, "hostPath")));
    if (s === "configMap") errs.push(...validateItemsSource(vol.configMap, "name", child(f, "configMap")));
    if (s === "secret") errs.push(...validateItemsSource(vol.secret, "secretName", child(f, "secret")));
    if (s === "emptyDir" && vol.emptyDir.sizeLimit !== undefined && parseQuantity(String(vol.emptyDir.sizeLimit)).sign() < 0) {
      errs.push(forbidden(child(f, "emptyDir", "sizeLimit"), "SizeLimit field must be a valid resource quantity"));
    }
  }
  if (n === 0) errs.push(required(f, "must specify a volume type"));
  return errs;
}
// ValidateVolumes: returns the volumes by name (only the valid ones, as upstream) and errors.
export function validateVolumes(volumes, f) {
  const errs = [];
  const byName = new Map();
  list(volumes).forEach((vol, i) => {
    const p = index(f, i);
    const namePath = child(p, "name");
    const el = validateVolumeSource(vol, p);
    if (!vol.name) el.push(required(namePath));
    else el.push(...isDNS1123Label(vol.name).map((m) => invalid(namePath, vol.name, m)));
    if (byName.has(vol.name)) el.push(duplicate(namePath, vol.name));
    if (el.length === 0) byName.set(vol.name, vol);
    else errs.push(...el);
  });
  return [byName, errs];
}

// --- Containers ----------------------------------------------------------------------------

// validateContainerPorts
function validateContainerPorts(ports, f) {
  const errs = [];
  const names = new Set();
  list(ports).forEach((port, i) => {
    const p = index(f, i);
    if (port.name) {
      const msgs = isValidPortName(port.name);
      if (msgs.length) msgs.forEach((m) => errs.push(invalid(child(p, "name"), port.name, m)));
      else if (names.has(port.name)) errs.push(duplicate(child(p, "name"), port.name));
      else names.add(port.name);
    }
    if (!port.containerPort) errs.push(required(child(p, "containerPort")));
    else isValidPortNum(port.containerPort).forEach((m) => errs.push(invalid(child(p, "containerPort"), port.containerPort, m)));
    if (port.hostPort) isValidPortNum(port.hostPort).forEach((m) => errs.push(invalid(child(p, "hostPort"), port.hostPort, m)));
    if (!port.protocol) errs.push(required(child(p, "protocol")));
    else if (!["SCTP", "TCP", "UDP"].includes(port.protocol)) errs.push(notSupported(child(p, "protocol"), port.protocol, ["SCTP", "TCP", "UDP"]));
  });
  return errs;
}

const ENV_FIELD_PATHS = ["metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
  "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"];
// validateObjectFieldSelector (env form)
function validateObjectFieldSelector(fs, f) {
  if (!fs.apiVersion) return [required(child(f, "apiVersion"))];
  if (!fs.fieldPath) return [required(child(f, "fieldPath"))];
  const sub = fs.fieldPath.match(/^(metadata\.(?:labels|annotations))\['(.*)'\]$/);
  if (sub) return isQualifiedName(sub[1] === "metadata.annotations" ? sub[2].toLowerCase() : sub[2]).map((m) => invalid(f, sub[2], m));
  if (!ENV_FIELD_PATHS.includes(fs.fieldPath)) return [notSupported(child(f, "fieldPath"), fs.fieldPath, [...ENV_FIELD_PATHS].sort())];
  return [];
}
// validateEnvVarValueFrom (the fieldRef, configMapKeyRef and secretKeyRef sources)
function validateEnvVarValueFrom(ev, f) {
  const errs = [];
  if (!ev.valueFrom) return errs;
  let n = 0;
  const vf = ev.valueFrom;
  if (vf.fieldRef) { n++; errs.push(...validateObjectFieldSelector(vf.fieldRef, child(f, "fieldRef"))); }
  if (vf.resourceFieldRef) n++;
  for (const s of ["configMapKeyRef", "secretKeyRef"]) {
    if (!vf[s]) continue;
    n++;
    isDNS1123Subdomain(vf[s].name ?? "").forEach((m) => errs.push(invalid(child(f, s, "name"), vf[s].name ?? "", m)));
    if (!vf[s].key) errs.push(required(child(f, s, "key")));
    else isConfigMapKey(vf[s].key).forEach((m) => errs.push(invalid(child(f, s, "key"), vf[s].key, m)));
  }
  if (n === 0) errs.push(invalid(f, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"));
  else if (ev.value) errs.push(invalid(f, "", "may not be specified when `value` is not empty"));
  else if (n > 1) errs.push(invalid(f, "", "may not have more than one field specified at a time"));
  return errs;
}
// ValidateEnv
function validateEnv(vars, f) {
  const errs = [];
  list(vars).forEach((ev, i) => {
    const p = index(f, i);
    if (!ev.name) errs.push(required(child(p, "name")));
    else isEnvVarName(ev.name).forEach((m) => errs.push(invalid(child(p, "name"), ev.name, m)));
    errs.push(...validateEnvVarValueFrom(ev, child(p, "valueFrom")));
  });
  return errs;
}
// ValidateEnvFrom
function validateEnvFrom(vars, f) {
  const errs = [];
  list(vars).forEach((ev, i) => {
    const p = index(f, i);
    if (ev.prefix) isEnvVarName(ev.prefix).forEach((m) => errs.push(invalid(child(p, "prefix"), ev.prefix, m)));
    const n = (ev.configMapRef ? 1 : 0) + (ev.secretRef ? 1 : 0);
    for (const s of ["configMapRef", "secretRef"]) {
      if (ev[s] && !ev[s].name) errs.push(required(child(p, s, "name")));
    }
    if (n === 0) errs.push(invalid(f, "", "must specify one of: `configMapRef` or `secretRef`"));
    else if (n > 1) errs.push(invalid(f, "", "may not have more than one field specified at a time"));
  });
  return errs;
}
// validateMountPropagation
function validateMountPropagation(mp, c, f) {
  const errs = [];
  const supported = ["Bidirectional", "HostToContainer", "None"];
  if (!supported.includes(mp)) errs.push(notSupported(f, mp, supported));
  if (mp === "Bidirectional" && c.securityContext?.privileged !== true) {
    errs.push(forbidden(f, "Bidirectional mount propagation is available only to privileged containers"));
  }
  return errs;
}
// validateMountRecursiveReadOnly
function validateMountRecursiveReadOnly(m, f) {
  if (m.recursiveReadOnly === undefined || m.recursiveReadOnly === null) return [];
  const errs = [];
  if (m.recursiveReadOnly === "Disabled") return errs;
  if (m.recursiveReadOnly === "Enabled" || m.recursiveReadOnly === "IfPossible") {
    if (!m.readOnly) errs.push(forbidden(f, "may only be specified when readOnly is true"));
    if (m.mountPropagation && m.mountPropagation !== "None") errs.push(forbidden(f, "may only be specified when mountPropagation is None or not specified"));
  } else {
    errs.push(notSupported(f, m.recursiveReadOnly, ["Disabled", "Enabled", "IfPossible"]));
  }
  return errs;
}
// ValidateVolumeMounts
export function validateVolumeMounts(mounts, volDevices, volumes, c, f) {
  const errs = [];
  const mountpoints = new Set();
  const devicePaths = new Set(volDevices.values());
  list(mounts).forEach((m, i) => {
    const p = index(f, i);
    if (!m.name) errs.push(required(child(p, "name")));
    if (!volumes.has(m.name)) errs.push(notFound(child(p, "name"), m.name ?? ""));     // IsMatchedVolume
    if (!m.mountPath) errs.push(required(child(p, "mountPath")));
    if (mountpoints.has(m.mountPath)) errs.push(invalid(child(p, "mountPath"), m.mountPath, "must be unique"));
    mountpoints.add(m.mountPath);
    if (volDevices.has(m.name)) errs.push(invalid(child(p, "name"), m.name, "must not already exist in volumeDevices"));
    if (devicePaths.has(m.mountPath)) errs.push(invalid(child(p, "mountPath"), m.mountPath, "must not already exist as a path in volumeDevices"));
    if (volumes.get(m.name)?.image) {
      if (m.subPath) errs.push(invalid(child(p, "subPath"), m.subPath, "not allowed in image volume sources"));
      if (m.subPathExpr) errs.push(invalid(child(p, "subPathExpr"), m.subPathExpr, "not allowed in image volume sources"));
    }
    // Upstream passes the list's path, not the element's, for these two (kept as it is).
    if (m.subPath) errs.push(...validateLocalDescendingPath(m.subPath, child(f, "subPath")));
    if (m.subPathExpr) {
      if (m.subPath) errs.push(invalid(child(p, "subPathExpr"), m.subPathExpr, "subPathExpr and subPath are mutually exclusive"));
      errs.push(...validateLocalDescendingPath(m.subPathExpr, child(f, "subPathExpr")));
    }
    if (m.mountPropagation) errs.push(...validateMountPropagation(m.mountPropagation, c, child(f, "mountPropagation")));
    errs.push(...validateMountRecursiveReadOnly(m, child(f, "recursiveReadOnly")));
  });
  return errs;
}
// validatePullPolicy
function validatePullPolicy(policy, f) {
  const valid = ["Always", "IfNotPresent", "Never"];
  if (!policy) return [required(f)];
  return valid.includes(policy) ? [] : [notSupported(f, policy, valid)];
}
// ValidateContainerResourceRequirements (helper.IsOvercommitAllowed: native, non-hugepage
// resources may request less than their limit; extended resources must request it exactly)
function validateResources(res, f) {
  const errs = [];
  const limits = res?.limits ?? {};
  const native = (n) => !n.includes("/") || n.includes("kubernetes.io/");
  const overcommit = (n) => native(n) && !n.startsWith("hugepages-");
  for (const [n, q] of entries(res?.requests)) {
    const req = parseQuantity(String(q));
    if (req.sign() < 0) errs.push(invalid(key(child(f, "requests"), n), req.toString(), "must be greater than or equal to 0"));
    if (Object.hasOwn(limits, n)) {
      const lim = parseQuantity(String(limits[n]));
      if (req.cmp(lim) !== 0 && !overcommit(n)) {
        errs.push(invalid(child(f, "requests"), req.toString(), `must be equal to ${n} limit of ${lim.toString()}`));
      } else if (req.cmp(lim) > 0) {
        errs.push(invalid(child(f, "requests"), req.toString(), `must be less than or equal to ${n} limit of ${lim.toString()}`));
      }
    } else if (!overcommit(n)) {
      errs.push(required(child(f, "limits"), "Limit must be set for non overcommitable resources"));
    }
  }
  return errs;
}
// ValidatePortNumOrName
function validatePortNumOrName(port, f) {
  if (typeof port === "number") return isValidPortNum(port).map((m) => invalid(f, port, m));
  if (typeof port === "string") return isValidPortName(port).map((m) => invalid(f, port, m));
  return [invalid(f, port, "unknown type")];
}
// validateHandler (probe form: exec, httpGet, tcpSocket, grpc) and the actions
function validateHandler(h, f) {
  const errs = [];
  let n = 0;
  for (const t of ["exec", "httpGet", "tcpSocket", "grpc"]) {
    if (!h[t]) continue;
    if (n > 0) { errs.push(forbidden(child(f, t), "may not specify more than 1 handler type")); continue; }
    n++;
    const p = child(f, t);
    if (t === "exec" && list(h.exec.command).length === 0) errs.push(required(child(p, "command")));  // validateExecAction
    if (t === "httpGet") {                                                                            // validateHTTPGetAction
      if (!h.httpGet.path) errs.push(required(child(p, "path")));
      errs.push(...validatePortNumOrName(h.httpGet.port, child(p, "port")));
      if (!["HTTP", "HTTPS"].includes(h.httpGet.scheme)) errs.push(notSupported(child(p, "scheme"), h.httpGet.scheme, ["HTTP", "HTTPS"]));
    }
    if (t === "tcpSocket") errs.push(...validatePortNumOrName(h.tcpSocket.port, child(p, "port"))); // validateTCPSocketAction
    if (t === "grpc") errs.push(...validatePortNumOrName(h.grpc.port, child(p, "port")));           // validateGRPCAction
  }
  if (n === 0) errs.push(required(f, "must specify a handler type"));
  return errs;
}
// validateProbe, with validateLivenessProbe/validateStartupProbe (successThreshold 1) and
// validateReadinessProbe (no terminationGracePeriodSeconds)
function validateProbe(probe, kind, f) {
  if (!probe) return [];
  const errs = validateHandler(probe, f);
  for (const k of ["initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"]) {
    if ((probe[k] ?? 0) < 0) errs.push(invalid(child(f, k), probe[k], "must be greater than or equal to 0"));
  }
  if (probe.terminationGracePeriodSeconds !== undefined && probe.terminationGracePeriodSeconds <= 0) {
    errs.push(invalid(child(f, "terminationGracePeriodSeconds"), probe.terminationGracePeriodSeconds, "must be greater than 0"));
  }
  if (kind !== "readiness" && probe.successThreshold !== 1) errs.push(invalid(child(f, "successThreshold"), probe.successThreshold, "must be 1"));
  if (kind === "readiness" && probe.terminationGracePeriodSeconds !== undefined) {
    errs.push(invalid(child(f, "terminationGracePeriodSeconds"), probe.terminationGracePeriodSeconds, "must not be set for readinessProbes"));
  }
  return errs;
}
// validateContainerCommon
function validateContainerCommon(c, volumes, f) {
  const errs = [];
  if (!c.name) errs.push(required(child(f, "name")));
  else errs.push(...isDNS1123Label(c.name).map((m) => invalid(child(f, "name"), c.name, m)));
  if (!c.image) errs.push(required(child(f, "image")));
  if (!c.terminationMessagePolicy) errs.push(required(child(f, "terminationMessagePolicy")));
  else if (!["File", "FallbackToLogsOnError"].includes(c.terminationMessagePolicy)) {
    errs.push(notSupported(child(f, "terminationMessagePolicy"), c.terminationMessagePolicy, ["File", "FallbackToLogsOnError"]));
  }
  const volDevices = new Map(list(c.volumeDevices).map((d) => [d.name, d.devicePath]));  // GetVolumeDeviceMap
  errs.push(...validateContainerPorts(c.ports, child(f, "ports")));
  errs.push(...validateEnv(c.env, child(f, "env")));
  errs.push(...validateEnvFrom(c.envFrom, child(f, "envFrom")));
  errs.push(...validateVolumeMounts(c.volumeMounts, volDevices, volumes, c, child(f, "volumeMounts")));
  errs.push(...validatePullPolicy(c.imagePullPolicy, child(f, "imagePullPolicy")));
  errs.push(...validateResources(c.resources, child(f, "resources")));
  return errs;
}
// AccumulateUniqueHostPorts (checkHostPortConflicts)
function checkHostPortConflicts(containers, f) {
  const errs = [];
  const seen = new Set();
  containers.forEach((c, ci) => list(c.ports).forEach((port, pi) => {
    if (!port.hostPort) return;
    const id = `${port.protocol}/${port.hostIP ?? ""}/${port.hostPort}`;
    if (seen.has(id)) errs.push(duplicate(child(index(child(index(f, ci), "ports"), pi), "hostPort"), id));
    seen.add(id);
  }));
  return errs;
}
// validateContainers and validateInitContainers (names unique across both lists)
function validateContainers(spec, volumes, f) {
  const errs = [];
  const containers = list(spec.containers);
  if (containers.length === 0) return [required(child(f, "containers"))];
  const names = new Set();
  containers.forEach((c, i) => {
    const p = index(child(f, "containers"), i);
    errs.push(...validateContainerCommon(c, volumes, p));
    if (names.has(c.name)) errs.push(duplicate(child(p, "name"), c.name));
    else names.add(c.name);
    errs.push(...validateProbe(c.livenessProbe, "liveness", child(p, "livenessProbe")));
    errs.push(...validateProbe(c.readinessProbe, "readiness", child(p, "readinessProbe")));
    errs.push(...validateProbe(c.startupProbe, "startup", child(p, "startupProbe")));
    if (c.restartPolicy) errs.push(forbidden(child(p, "restartPolicy"), "may not be set for non-init containers"));
  });
  errs.push(...checkHostPortConflicts(containers, child(f, "containers")));
  list(spec.initContainers).forEach((c, i) => {
    const p = index(child(f, "initContainers"), i);
    errs.push(...validateContainerCommon(c, volumes, p));
    if (names.has(c.name)) errs.push(duplicate(child(p, "name"), c.name));
    else if (c.name) names.add(c.name);
    errs.push(...checkHostPortConflicts([c], child(f, "initContainers")));
  });
  return errs;
}

// --- Scheduling ----------------------------------------------------------------------------

// ValidateNodeSelectorRequirement (required affinity: invalid label values rejected)
function validateNodeSelectorRequirement(rq, checkValues, f) {
  const errs = [];
  const values = list(rq.values);
  switch (rq.operator) {
    case "In": case "NotIn":
      if (values.length === 0) errs.push(required(child(f, "values"), "must be specified when `operator` is 'In' or 'NotIn'"));
      break;
    case "Exists": case "DoesNotExist":
      if (values.length > 0) errs.push(forbidden(child(f, "values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      break;
    case "Gt": case "Lt":
      if (values.length !== 1) errs.push(required(child(f, "values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      break;
    default:
      errs.push(invalid(child(f, "operator"), rq.operator, "not a valid selector operator"));
  }
  errs.push(...validateLabelName(rq.key ?? "", child(f, "key")));
  if (checkValues) values.forEach((v, i) => isValidLabelValue(v).forEach((m) => errs.push(invalid(index(child(f, "values"), i), v, m))));
  return errs;
}
// ValidateNodeFieldSelectorRequirement
function validateNodeFieldSelectorRequirement(rq, f) {
  const errs = [];
  if (rq.operator === "In" || rq.operator === "NotIn") {
    if (list(rq.values).length !== 1) errs.push(required(child(f, "values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else {
    errs.push(invalid(child(f, "operator"), rq.operator, "not a valid selector operator"));
  }
  if (rq.key !== "metadata.name") errs.push(invalid(child(f, "key"), rq.key, "not a valid field selector key"));
  else list(rq.values).forEach((v, i) => isDNS1123Subdomain(v).forEach((m) => errs.push(invalid(index(child(f, "values"), i), v, m))));
  return errs;
}
// ValidateNodeSelectorTerm
function validateNodeSelectorTerm(term, checkValues, f) {
  return [
    ...list(term?.matchExpressions).flatMap((rq, j) => validateNodeSelectorRequirement(rq, checkValues, index(child(f, "matchExpressions"), j))),
    ...list(term?.matchFields).flatMap((rq, j) => validateNodeFieldSelectorRequirement(rq, index(child(f, "matchFields"), j))),
  ];
}
// ValidateNodeSelector
function validateNodeSelector(sel, f) {
  const terms = list(sel.nodeSelectorTerms);
  if (terms.length === 0) return [required(child(f, "nodeSelectorTerms"), "must have at least one node selector term")];
  return terms.flatMap((t, i) => validateNodeSelectorTerm(t, true, index(child(f, "nodeSelectorTerms"), i)));
}
// validateAffinity / validateNodeAffinity / ValidatePreferredSchedulingTerms (pod
// (anti-)affinity terms are not ported)
function validateAffinity(aff, f) {
  const errs = [];
  const na = aff?.nodeAffinity;
  if (!na) return errs;
  const p = child(f, "nodeAffinity");
  if (na.requiredDuringSchedulingIgnoredDuringExecution) {
    errs.push(...validateNodeSelector(na.requiredDuringSchedulingIgnoredDuringExecution, child(p, "requiredDuringSchedulingIgnoredDuringExecution")));
  }
  list(na.preferredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
    const tp = index(child(p, "preferredDuringSchedulingIgnoredDuringExecution"), i);
    if (!(t.weight > 0 && t.weight <= 100)) errs.push(invalid(child(tp, "weight"), t.weight, "must be in the range 1-100"));
    errs.push(...validateNodeSelectorTerm(t.preference, false, child(tp, "preference")));
  });
  return errs;
}
// validateTaintEffect (allowEmpty)
function validateTaintEffect(effect, f) {
  const valid = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
  return valid.includes(effect) ? [] : [notSupported(f, effect, valid)];
}
// ValidateTolerations
export function validateTolerations(tolerations, f) {
  const errs = [];
  list(tolerations).forEach((t, i) => {
    const p = index(f, i);
    if (t.key) errs.push(...validateLabelName(t.key, child(p, "key")));
    if (!t.key && t.operator !== "Exists") {
      errs.push(invalid(child(p, "operator"), t.operator ?? "", "operator must be Exists when `key` is empty, which means \"match all values and all keys\""));
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && t.effect !== "NoExecute") {
      errs.push(invalid(child(p, "effect"), t.effect ?? "", "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (t.operator ?? "") {
      case "Equal": case "": {
        const m = isValidLabelValue(t.value ?? "");
        if (m.length) errs.push(invalid(child(p, "operator"), t.value, m.join(";")));
        break;
      }
      case "Exists":
        if (t.value) errs.push(invalid(child(p, "operator"), t.value, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(child(p, "operator"), t.operator, ["Equal", "Exists"]));
    }
    if (t.effect) errs.push(...validateTaintEffect(t.effect, child(p, "effect")));
  });
  return errs;
}
// validatePodHostNetworkDeps (a template: hostPort 0 is allowed, it is defaulted later)
function validatePodHostNetworkDeps(spec, isPod, f) {
  const errs = [];
  if (spec.hostNetwork !== true) return errs;
  list(spec.containers).forEach((c, i) => list(c.ports).forEach((port, j) => {
    const hp = port.hostPort ?? 0;
    if ((isPod || hp !== 0) && hp !== port.containerPort) {
      errs.push(invalid(child(index(child(index(child(f, "containers"), i), "ports"), j), "hostPort"), hp,
                        "must match `containerPort` when `hostNetwork` is true"));
    }
  }));
  return errs;
}

// ValidatePodSpec (the subset above). `isPod`: opts.ResourceIsPod.
export function validatePodSpec(spec, f, isPod = false) {
  const errs = [];
  if (spec.terminationGracePeriodSeconds === undefined || spec.terminationGracePeriodSeconds === null) {
    errs.push(required(child(f, "terminationGracePeriodSeconds")));
  }
  const [volumes, vErrs] = validateVolumes(spec.volumes, child(f, "volumes"));
  errs.push(...vErrs);
  errs.push(...validateContainers(spec, volumes, f));
  errs.push(...validatePodHostNetworkDeps(spec, isPod, f));
  const restart = ["Always", "OnFailure", "Never"];
  if (!spec.restartPolicy) errs.push(required(child(f, "restartPolicy")));
  else if (!restart.includes(spec.restartPolicy)) errs.push(notSupported(child(f, "restartPolicy"), spec.restartPolicy, restart));
  const dns = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
  if (!spec.dnsPolicy) errs.push(required(child(f, "dnsPolicy")));
  else if (!dns.includes(spec.dnsPolicy)) errs.push(notSupported(child(f, "dnsPolicy"), spec.dnsPolicy, dns));
  errs.push(...validateLabels(spec.nodeSelector, child(f, "nodeSelector")));
  errs.push(...validateAffinity(spec.affinity, child(f, "affinity")));
  if (spec.serviceAccountName) {
    errs.push(...isDNS1123Subdomain(spec.serviceAccountName).map((m) => invalid(child(f, "serviceAccountName"), spec.serviceAccountName, m)));
  }
  errs.push(...validateTolerations(spec.tolerations, child(f, "tolerations")));
  if (spec.priorityClassName) {
    errs.push(...isDNS1123Subdomain(spec.priorityClassName).map((m) => invalid(child(f, "priorityClassName"), spec.priorityClassName, m)));
  }
  return errs;
}

// ValidatePodTemplateSpec (labels, then the spec; ephemeral containers are forbidden)
function validatePodTemplateSpec(template, f) {
  const errs = validateLabels(template.metadata?.labels, child(f, "metadata", "labels"));
  errs.push(...validatePodSpec(template.spec, child(f, "spec")));
  if (list(template.spec.ephemeralContainers).length) {
    errs.push(forbidden(child(f, "spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"));
  }
  return errs;
}

// --- apps/v1 DaemonSet ---------------------------------------------------------------------

// getIntOrPercentValue
const intOrPercentValue = (v) => (typeof v === "string" && isValidPercent(v).length === 0 ? Number(v.slice(0, -1)) : (typeof v === "number" ? v : 0));
// ValidatePositiveIntOrPercent
function validatePositiveIntOrPercent(v, f) {
  if (typeof v === "string") return isValidPercent(v).map((m) => invalid(f, v, m));
  if (typeof v === "number") return v < 0 ? [invalid(f, v, "must be greater than or equal to 0")] : [];
  return [invalid(f, v, "must be an integer or percentage (e.g '5%%')")];
}
// IsNotMoreThan100Percent
const isNotMoreThan100Percent = (v, f) => (typeof v === "string" && isValidPercent(v).length === 0 && Number(v.slice(0, -1)) > 100
  ? [invalid(f, v, "must not be greater than 100%")] : []);
// ValidateRollingUpdateDaemonSet
export function validateRollingUpdateDaemonSet(ru, f) {
  const errs = [];
  errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, child(f, "maxUnavailable")));
  errs.push(...validatePositiveIntOrPercent(ru.maxSurge, child(f, "maxSurge")));
  errs.push(...isNotMoreThan100Percent(ru.maxUnavailable, child(f, "maxUnavailable")));
  errs.push(...isNotMoreThan100Percent(ru.maxSurge, child(f, "maxSurge")));
  const hasUnavailable = intOrPercentValue(ru.maxUnavailable) !== 0;
  const hasSurge = intOrPercentValue(ru.maxSurge) !== 0;
  if (hasUnavailable && hasSurge) errs.push(invalid(child(f, "maxSurge"), ru.maxSurge, "may not be set when maxUnavailable is non-zero"));
  if (!hasUnavailable && !hasSurge) errs.push(required(child(f, "maxUnavailable"), "cannot be 0 when maxSurge is 0"));
  return errs;
}
// ValidateDaemonSetUpdateStrategy
function validateDaemonSetUpdateStrategy(s, f) {
  if (s.type === "OnDelete") return [];
  if (s.type === "RollingUpdate") {
    if (!s.rollingUpdate) return [required(child(f, "rollingUpdate"))];
    return validateRollingUpdateDaemonSet(s.rollingUpdate, child(f, "rollingUpdate"));
  }
  return [notSupported(f, s.type, ["RollingUpdate", "OnDelete"])];
}
// ValidateDaemonSetSpec
function validateDaemonSetSpec(spec, f) {
  const errs = validateLabelSelector(spec.selector, child(f, "selector"));
  if (!selectorMatches(spec.selector, spec.template?.metadata?.labels)) {
    errs.push(invalid(child(f, "template", "metadata", "labels"), spec.template?.metadata?.labels ?? {}, "`selector` does not match template `labels`"));
  }
  if (spec.selector && Object.keys(spec.selector.matchLabels ?? {}).length + list(spec.selector.matchExpressions).length === 0) {
    errs.push(invalid(child(f, "selector"), spec.selector, "empty selector is invalid for daemonset"));
  }
  errs.push(...validatePodTemplateSpec(spec.template, child(f, "template")));
  if (spec.template.spec.restartPolicy !== "Always") {
    errs.push(notSupported(child(f, "template", "spec", "restartPolicy"), spec.template.spec.restartPolicy, ["Always"]));
  }
  if (spec.template.spec.activeDeadlineSeconds !== undefined) {
    errs.push(forbidden(child(f, "template", "spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in DaemonSet is not Supported"));
  }
  if ((spec.minReadySeconds ?? 0) < 0) errs.push(invalid(child(f, "minReadySeconds"), spec.minReadySeconds, "must be greater than or equal to 0"));
  errs.push(...validateDaemonSetUpdateStrategy(spec.updateStrategy, child(f, "updateStrategy")));
  return errs;
}

// The API server's answer to creating this DaemonSet: defaults, then validation (a copy;
// the argument is not changed). Returns FieldErrors; String(e) is Go's text.
export function validateDaemonSet(ds) {
  const d = setDefaultsDaemonSet(structuredClone(ds));
  return validateDaemonSetSpec(d.spec, "spec");
}

// The same for a Pod (opts.ResourceIsPod: hostPort must equal containerPort).
export function validatePod(pod) {
  const p = structuredClone(pod);
  setDefaultsPodSpec(p.spec);
  return [...validateLabels(p.metadata?.labels, "metadata.labels"), ...validatePodSpec(p.spec, "spec", true)];
}

// --- Warnings and rules of our own -----------------------------------------------------------

// pkg/api/pod/warnings.go (warningsForPodSpecAndMeta): a later env entry of the same name
// hides the earlier one. The API server warns; these manifests treat it as an error.
export function podSpecWarnings(spec, f) {
  const out = [];
  for (const [kind, cs] of [["containers", spec.containers], ["initContainers", spec.initContainers]]) {
    list(cs).forEach((c, ci) => {
      const seen = new Set();
      list(c.env).forEach((e, i) => {
        if (seen.has(e.name)) out.push(`${index(child(index(child(f, kind), ci), "env"), i)}: hides previous definition of ${quote(e.name)}, which may be dropped when using apply`);
        seen.add(e.name);
      });
    });
  }
  return out;
}

// Not API rules: what a composition of components must not produce either.
export function ownRules(spec, f) {
  const out = [];
  list(spec.containers).forEach((c, ci) => {
    const flags = new Map();
    list(c.args).forEach((a, i) => {
      const m = String(a).match(/^--?([^=]+)/);
      if (!m) return;
      if (flags.has(m[1])) out.push(`${index(child(index(child(f, "containers"), ci), "args"), i)}: flag --${m[1]} already given at args[${flags.get(m[1])}]`);
      else flags.set(m[1], i);
    });
  });
  const paths = new Map();
  list(spec.volumes).forEach((v, i) => {
    if (!v.hostPath) return;
    const p = v.hostPath.path ?? "";
    const at = child(index(child(f, "volumes"), i), "hostPath.path");
    const clean = ("/" + p.split("/").filter((s) => s && s !== ".").join("/"));
    if (!p.startsWith("/") || clean !== p) out.push(`${at}: ${quote(p)} is not an absolute, clean path`);
    if (paths.has(clean)) out.push(`${at}: host path ${quote(p)} is already volume ${quote(paths.get(clean))}`);
    else paths.set(clean, v.name);
  });
  return out;
}
