// Strict field validation, as the API server applies it with fieldValidation=Strict: every
// field of an object must be one the official type declares. kubernetes-models' validators
// accept unknown fields, so this walks its TypeScript declarations (generated from the same
// OpenAPI document) instead: a misspelt field fails here, not silently on a cluster.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const modules = path.join(path.dirname(fileURLToPath(import.meta.url)), "node_modules");
const cache = new Map();

// The declared properties of the interface in `file` (a .d.ts): name -> {file, map}: the
// file of its type (null for scalars and types without properties), and whether it is a
// map keyed by data (attributes, capacity) whose values have that type.
function declared(file) {
  if (cache.has(file)) return cache.get(file);
  const text = fs.readFileSync(file, "utf8");
  const imports = new Map();
  for (const m of text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) {
    const target = m[2].startsWith(".")
      ? path.resolve(path.dirname(file), m[2].replace(/\.js$/, ".d.ts"))
      : path.join(modules, m[2].replace(/\.js$/, "") + ".d.ts");
    imports.set(m[1], target);
  }
  const start = text.search(/^export interface \w+(?: extends [\w, ]+)? \{$/m);
  let props = null;
  if (start >= 0) {
    props = new Map();
    const lines = text.slice(start).split("\n");
    for (let i = 1; i < lines.length && lines[i] !== "}"; i++) {
      const m = lines[i].match(/^ {4}"([^"]+)"\??: (.*?);?$/);
      if (!m) continue;
      let type = m[2];
      const map = type === "{";
      if (map) type = lines[i + 1].trim().match(/^\[key: string\]: (.*);$/)?.[1] ?? "";
      const named = type.match(/^(?:Array<)?(I\w+)>?$/);
      props.set(m[1], { file: named && imports.has(named[1]) ? imports.get(named[1]) : null, map });
    }
  }
  cache.set(file, props);
  return props;
}

// Throws naming the first field `value` has that `typeFile` does not declare.
export function checkStrict(value, typeFile, where = "") {
  const props = declared(typeFile);
  if (props === null || value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => checkStrict(v, typeFile, `${where}/${i}`));
    return;
  }
  for (const [key, v] of Object.entries(value)) {
    if (!props.has(key)) {
      throw new Error(`${where}/${key}: unknown field (not in ${path.basename(typeFile)})`);
    }
    const { file, map } = props.get(key);
    if (!file) continue;
    if (map) {
      for (const [k, item] of Object.entries(v)) checkStrict(item, file, `${where}/${key}/${k}`);
    } else {
      checkStrict(v, file, `${where}/${key}`);
    }
  }
}

// What the API server's decoder does with fieldValidation unset (its default, Warn, since
// 1.27; staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go and update.go with
// the structured-merge-diff/serializer strictness errors turned into warnings): every field
// the type does not declare is dropped from `value` (in place). Returns the dropped paths
// ("/spec/devices/0/futureField"), each of which the server reports in a Warning header.
export function dropUnknown(value, typeFile, where = "") {
  const props = declared(typeFile);
  const dropped = [];
  if (props === null || value === null || typeof value !== "object") return dropped;
  if (Array.isArray(value)) {
    value.forEach((v, i) => dropped.push(...dropUnknown(v, typeFile, `${where}/${i}`)));
    return dropped;
  }
  for (const [key, v] of Object.entries(value)) {
    if (!props.has(key)) {
      delete value[key];
      dropped.push(`${where}/${key}`);
      continue;
    }
    const { file, map } = props.get(key);
    if (!file) continue;
    if (map) {
      for (const [k, item] of Object.entries(v)) dropped.push(...dropUnknown(item, file, `${where}/${key}/${k}`));
    } else {
      dropped.push(...dropUnknown(v, file, `${where}/${key}`));
    }
  }
  return dropped;
}

export const resourceV1 = (kind) =>
  path.join(modules, "kubernetes-models/resource.k8s.io/v1", `${kind}.d.ts`);
