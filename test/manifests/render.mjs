// A small kustomize renderer for exactly what images/ uses: resources (files and
// kustomization directories), components (applied in order after the resources, each with
// its own resources, nested components, patches and replacements), patches with a kind/name
// target (JSON6902: add, replace, remove, test; strategic merge, with the pod template's
// merge keys and `$patch: delete` of a whole object), and replacements (fieldPaths with
// [key=value] selectors and list indexes; delimiter/index). As kustomize does, a target
// name also matches an object's earlier names (before a patch renamed it), and two objects
// of one kind, namespace and name in one build are an error. Where kubectl is installed,
// validate.mjs checks this against `kubectl kustomize` for every overlay and combination.
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

function readDocs(file) {
  return YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS()).filter(Boolean);
}

// The names an object had before a patch renamed it (kustomize keeps matching them).
const earlierNames = new WeakMap();

function matches(obj, sel) {
  if (sel.kind && obj.kind !== sel.kind) return false;
  if (sel.name && obj.metadata?.name !== sel.name && !earlierNames.get(obj)?.has(sel.name)) return false;
  return true;
}

// "a.b.[name=x].c.0" -> ["a", "b", {key: "name", value: "x"}, "c", 0]
function parseFieldPath(fp) {
  const parts = [];
  for (const raw of fp.match(/\[[^\]]*\]|[^.]+/g)) {
    const sel = raw.match(/^\[([^=]+)=(.*)\]$/);
    if (sel) parts.push({ key: sel[1], value: sel[2] });
    else if (/^[0-9]+$/.test(raw)) parts.push(Number(raw));
    else parts.push(raw);
  }
  return parts;
}

function resolveParent(obj, parts) {
  let node = obj;
  for (const p of parts.slice(0, -1)) {
    node = typeof p === "object" ? node?.find((e) => String(e[p.key]) === p.value) : node?.[p];
    if (node === undefined) throw new Error(`fieldPath not found at ${JSON.stringify(p)}`);
  }
  return [node, parts[parts.length - 1]];
}

function getField(obj, fp) {
  const [parent, last] = resolveParent(obj, parseFieldPath(fp));
  if (parent[last] === undefined) throw new Error(`fieldPath ${fp} not found`);
  return parent[last];
}

function setField(obj, fp, value, options) {
  const [parent, last] = resolveParent(obj, parseFieldPath(fp));
  if (parent[last] === undefined) throw new Error(`fieldPath ${fp} not found in ${obj.kind}/${obj.metadata?.name}`);
  if (options?.delimiter !== undefined) {
    const pieces = String(parent[last]).split(options.delimiter);
    pieces[options.index ?? 0] = value;
    parent[last] = pieces.join(options.delimiter);
  } else {
    parent[last] = value;
  }
}

// RFC 6902 add, replace, remove and test.
function applyJsonPatch(obj, ops) {
  for (const op of ops) {
    const keys = op.path.split("/").slice(1).map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
    let node = obj;
    for (const k of keys.slice(0, -1)) {
      node = node?.[Array.isArray(node) ? Number(k) : k];
      if (node === undefined || node === null) throw new Error(`patch ${op.op} ${op.path}: no such path`);
    }
    const last = keys[keys.length - 1];
    const at = Array.isArray(node) ? (last === "-" ? node.length : Number(last)) : last;
    const exists = Array.isArray(node) ? at < node.length : Object.hasOwn(node, at);
    switch (op.op) {
      case "add":
        if (Array.isArray(node)) {
          if (at > node.length) throw new Error(`patch add ${op.path}: index out of range`);
          node.splice(at, 0, structuredClone(op.value));
        } else {
          node[at] = structuredClone(op.value);
        }
        break;
      case "replace":
        if (!exists) throw new Error(`patch replace ${op.path}: no such path`);
        if (keys.join("/") === "metadata/name" && node[at] !== op.value) rename(obj, op.value);
        node[at] = structuredClone(op.value);
        break;
      case "remove":
        if (!exists) throw new Error(`patch remove ${op.path}: no such path`);
        if (Array.isArray(node)) node.splice(at, 1);
        else delete node[at];
        break;
      case "test":
        if (!exists || JSON.stringify(node[at]) !== JSON.stringify(op.value)) {
          throw new Error(`patch test ${op.path}: is ${JSON.stringify(node[at])}, not ${JSON.stringify(op.value)}`);
        }
        break;
      default:
        throw new Error(`unsupported patch op ${op.op}`);
    }
  }
}

function rename(obj, name) {
  const earlier = earlierNames.get(obj) ?? new Set();
  earlier.add(obj.metadata.name);
  earlierNames.set(obj, earlier);
}

// The pod template's strategic-merge keys (k8s.io/api patchMergeKey): a list under one of
// these names merges element by element on that key; any other list is replaced whole.
// Merged lists come out as kustomize (kyaml merge2) writes them: the patch's elements in
// the patch's order (merged with their namesakes), then the remaining original elements.
const MERGE_KEYS = {
  containers: "name", initContainers: "name", ephemeralContainers: "name", volumes: "name",
  volumeMounts: "mountPath", volumeDevices: "devicePath", env: "name", ports: "containerPort",
  imagePullSecrets: "name", hostAliases: "ip", resourceClaims: "name",
};
const isMap = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function strategicMerge(dest, patch, field) {
  if (isMap(patch) && isMap(dest)) {
    for (const [k, v] of Object.entries(patch)) {
      if (k.startsWith("$")) continue;
      if (v === null) delete dest[k];
      else dest[k] = strategicMerge(dest[k], v, k);
    }
    return dest;
  }
  const key = MERGE_KEYS[field];
  if (Array.isArray(patch) && Array.isArray(dest) && key) {
    const out = [];
    for (const p of patch) {
      const d = dest.find((e) => e[key] === p[key]);
      if (p.$patch === "delete") continue;
      out.push(d ? strategicMerge(d, p, undefined) : strip(structuredClone(p)));
    }
    const deleted = new Set(patch.filter((p) => p.$patch === "delete").map((p) => p[key]));
    for (const d of dest) {
      if (!patch.some((p) => p[key] === d[key]) && !deleted.has(d[key])) out.push(d);
    }
    return out;
  }
  return strip(structuredClone(patch));
}

// A new element carries no directives.
function strip(v) {
  if (Array.isArray(v)) return v.map(strip);
  if (isMap(v)) {
    for (const k of Object.keys(v)) {
      if (k.startsWith("$")) delete v[k];
      else v[k] = strip(v[k]);
    }
  }
  return v;
}

function loadResource(dir, r) {
  const p = path.join(dir, r);
  return fs.statSync(p).isDirectory() ? render(p) : readDocs(p);
}

function checkUnique(objects, where) {
  const seen = new Set();
  for (const o of objects) {
    const id = `${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
    if (seen.has(id)) throw new Error(`${where}: ${id} is included twice`);
    seen.add(id);
  }
}

export function render(dir) {
  const k = YAML.parse(fs.readFileSync(path.join(dir, "kustomization.yaml"), "utf8"));
  const objects = [];
  for (const r of k.resources ?? []) objects.push(...loadResource(dir, r));
  checkUnique(objects, dir);
  for (const c of k.components ?? []) transform(path.join(dir, c), objects);
  transform(dir, objects, k);
  return objects;
}

// A kustomization's (or component's) resources, nested components, patches, then
// replacements, on `objects`.
function transform(dir, objects, k = undefined) {
  if (!k) {
    k = YAML.parse(fs.readFileSync(path.join(dir, "kustomization.yaml"), "utf8"));
    for (const r of k.resources ?? []) objects.push(...loadResource(dir, r));
    checkUnique(objects, dir);
    for (const c of k.components ?? []) transform(path.join(dir, c), objects);
  }
  for (const patch of k.patches ?? []) {
    const text = patch.path ? fs.readFileSync(path.join(dir, patch.path), "utf8") : patch.patch;
    const body = YAML.parse(text);
    const target = patch.target ?? { kind: body.kind, name: body.metadata?.name };
    const targets = objects.filter((o) => matches(o, target));
    if (targets.length === 0) throw new Error(`patch ${patch.path ?? "(inline)"} in ${dir}: no target`);
    if (Array.isArray(body)) {
      targets.forEach((o) => applyJsonPatch(o, body));
    } else if (body.$patch === "delete") {
      for (const o of targets) objects.splice(objects.indexOf(o), 1);
    } else {
      const { apiVersion, kind, metadata, ...rest } = body;
      targets.forEach((o) => strategicMerge(o, rest, undefined));
    }
  }
  for (const rep of k.replacements ?? []) {
    const sources = objects.filter((o) => matches(o, rep.source));
    if (sources.length !== 1) throw new Error(`replacement source: ${sources.length} matches in ${dir}`);
    const value = getField(sources[0], rep.source.fieldPath);
    for (const t of rep.targets) {
      for (const o of objects.filter((x) => matches(x, t.select))) {
        for (const fp of t.fieldPaths) setField(o, fp, value, t.options);
      }
    }
  }
}
