// A small kustomize renderer for exactly what images/ uses: resources (files and
// kustomization directories), components (applied in order after the resources, each with
// its own patches and replacements), JSON6902 patches with a kind/name target, and
// replacements (fieldPaths with [key=value] selectors and list indexes; delimiter/index).
// Where kubectl is installed, validate.mjs checks this against `kubectl kustomize`.
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

function readDocs(file) {
  return YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS()).filter(Boolean);
}

function matches(obj, sel) {
  return (!sel.kind || obj.kind === sel.kind) && (!sel.name || obj.metadata?.name === sel.name);
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
    node = typeof p === "object" ? node.find((e) => String(e[p.key]) === p.value) : node[p];
    if (node === undefined) throw new Error(`fieldPath not found at ${JSON.stringify(p)}`);
  }
  return [node, parts[parts.length - 1]];
}

function getField(obj, fp) {
  const [parent, last] = resolveParent(obj, parseFieldPath(fp));
  return parent[last];
}

function setField(obj, fp, value, options) {
  const [parent, last] = resolveParent(obj, parseFieldPath(fp));
  if (options?.delimiter !== undefined) {
    const pieces = String(parent[last]).split(options.delimiter);
    pieces[options.index ?? 0] = value;
    parent[last] = pieces.join(options.delimiter);
  } else {
    parent[last] = value;
  }
}

// RFC 6902 "add" and "replace", the operations the overlay uses.
function applyJsonPatch(obj, ops) {
  for (const op of ops) {
    const keys = op.path.split("/").slice(1).map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
    let node = obj;
    for (const k of keys.slice(0, -1)) node = node[Array.isArray(node) ? Number(k) : k];
    const last = keys[keys.length - 1];
    if (op.op === "add" && Array.isArray(node)) {
      if (last === "-") node.push(structuredClone(op.value));
      else node.splice(Number(last), 0, structuredClone(op.value));
    } else if (op.op === "add" || op.op === "replace") {
      node[last] = structuredClone(op.value);
    } else {
      throw new Error(`unsupported patch op ${op.op}`);
    }
  }
}

export function render(dir) {
  const k = YAML.parse(fs.readFileSync(path.join(dir, "kustomization.yaml"), "utf8"));
  const objects = [];
  for (const r of k.resources ?? []) {
    const p = path.join(dir, r);
    if (fs.statSync(p).isDirectory()) objects.push(...render(p));
    else objects.push(...readDocs(p));
  }
  for (const c of k.components ?? []) transform(path.join(dir, c), objects);
  transform(dir, objects, k);
  return objects;
}

// A kustomization's (or component's) patches, then its replacements, on `objects`.
function transform(dir, objects, k = undefined) {
  if (!k) {
    k = YAML.parse(fs.readFileSync(path.join(dir, "kustomization.yaml"), "utf8"));
    for (const r of k.resources ?? []) objects.push(...readDocs(path.join(dir, r)));
  }
  for (const patch of k.patches ?? []) {
    const ops = YAML.parse(fs.readFileSync(path.join(dir, patch.path), "utf8"));
    const targets = objects.filter((o) => matches(o, patch.target));
    if (targets.length === 0) throw new Error(`patch ${patch.path}: no target`);
    targets.forEach((o) => applyJsonPatch(o, ops));
  }
  for (const rep of k.replacements ?? []) {
    const source = objects.find((o) => matches(o, rep.source));
    if (!source) throw new Error("replacement source not found");
    const value = getField(source, rep.source.fieldPath);
    for (const t of rep.targets) {
      for (const o of objects.filter((x) => matches(x, t.select))) {
        for (const fp of t.fieldPaths) setField(o, fp, value, t.options);
      }
    }
  }
}
