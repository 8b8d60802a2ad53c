// A small stand-in for the scheduler's DRA allocator, for the fake kube-apiserver: structured
// parameters (KEP-4381) with consumable capacity (KEP-5075). It allocates one ResourceClaim
// against the stored ResourceSlices, DeviceClasses and the claims already allocated, the way
// kube-scheduler's allocator does where our driver's slices can tell the difference:
// - only a pool's newest generation counts, and only when all its slices are there;
// - a device tainted NoSchedule/NoExecute is skipped unless the request tolerates the taint;
// - a device without allowMultipleAllocations goes to one claim at a time;
// - a device with it is shared: each result consumes, per capacity, the request's amount or
//   the policy's default (the whole value without a policy), rounded up to validRange's
//   min/step or the next validValues entry, refused past max; the sum over all claims stays
//   within the value; each result gets a fresh shareID and its consumedCapacity;
// - exactly and firstAvailable requests (a subrequest's result is named "<request>/<sub>"),
//   ExactCount and All, and matchAttribute constraints across requests.
// CEL is the one thing it narrows: a selector must be a conjunction of `==` comparisons
// between device.driver or device.attributes["domain"].name and a literal (what `render`
// writes); anything else is refused with a message, never guessed.
import crypto from "node:crypto";

// Kubernetes quantities as used for counts: plain integers, optionally with k/M/G/Ki/Mi/Gi.
export function quantity(q) {
  const m = String(q).match(/^(\d+)(k|M|G|Ki|Mi|Gi)?$/);
  if (!m) throw new Error(`quantity ${JSON.stringify(q)} not understood by the test allocator`);
  const mult = { k: 1e3, M: 1e6, G: 1e9, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[m[2]] ?? 1;
  return BigInt(m[1]) * BigInt(mult);
}

function attributeValue(device, driver, ref) {
  // ref: "driver" | {domain, name}
  if (ref === "driver") return driver;
  const attrs = device.attributes ?? {};
  const a = attrs[`${ref.domain}/${ref.name}`] ?? (ref.domain === driver ? attrs[ref.name] : undefined);
  if (!a) return undefined;
  return a.string ?? a.int ?? a.bool ?? a.version;
}

// Parses the CEL subset into a list of [ref, literal] equalities.
export function parseSelector(expression) {
  const terms = [];
  for (const part of expression.split("&&").map((s) => s.trim())) {
    const m = part.match(/^(device\.driver|device\.attributes\["([^"]+)"\]\.([A-Za-z0-9_]+))\s*==\s*("(?:[^"\\]|\\.)*"|-?\d+|true|false)$/);
    if (!m) throw new Error(`CEL selector term ${JSON.stringify(part)} not understood by the test allocator`);
    const ref = m[1] === "device.driver" ? "driver" : { domain: m[2], name: m[3] };
    terms.push([ref, JSON.parse(m[4])]);
  }
  return terms;
}

function selects(selectors, device, driver) {
  for (const s of selectors) {
    for (const [ref, literal] of parseSelector(s.cel.expression)) {
      if (attributeValue(device, driver, ref) !== literal) return false;
    }
  }
  return true;
}

function tolerated(taint, tolerations) {
  if (taint.effect !== "NoSchedule" && taint.effect !== "NoExecute") return true;
  return (tolerations ?? []).some((t) =>
    (t.effect === undefined || t.effect === taint.effect) &&
    (t.operator === "Exists" ? t.key === undefined || t.key === taint.key
                             : t.key === taint.key && (t.value ?? "") === (taint.value ?? "")));
}

// How much of one capacity a request consumes on a device, or null when the policy refuses.
function consumption(cap, requested) {
  const value = quantity(cap.value);
  const policy = cap.requestPolicy;
  let amount = requested !== undefined ? quantity(requested)
             : policy?.default !== undefined ? quantity(policy.default) : value;
  if (policy?.validRange) {
    const min = quantity(policy.validRange.min);
    if (amount < min) amount = min;
    if (policy.validRange.step !== undefined) {
      const step = quantity(policy.validRange.step);
      const over = (amount - min) % step;
      if (over !== 0n) amount += step - over;
    }
    if (policy.validRange.max !== undefined && amount > quantity(policy.validRange.max)) return null;
  } else if (policy?.validValues) {
    const next = policy.validValues.map(quantity).find((v) => v >= amount);
    if (next === undefined) return null;
    amount = next;
  }
  return amount;
}

// The devices the scheduler can see: per driver/pool, the newest generation, complete.
function visibleDevices(slices) {
  const pools = new Map();
  for (const s of slices) {
    const key = `${s.spec.driver}/${s.spec.pool.name}`;
    const p = pools.get(key);
    const gen = s.spec.pool.generation;
    if (!p || gen > p.generation) pools.set(key, { generation: gen, slices: [s] });
    else if (gen === p.generation) p.slices.push(s);
  }
  const devices = [];
  for (const { slices: ss } of pools.values()) {
    if (ss.length !== ss[0].spec.pool.resourceSliceCount) continue; // incomplete: wait
    for (const s of ss) {
      for (const d of s.spec.devices ?? []) {
        devices.push({ driver: s.spec.driver, pool: s.spec.pool.name, node: s.spec.nodeName, device: d });
      }
    }
  }
  return devices;
}

const deviceKey = (c) => `${c.driver}/${c.pool}/${c.device.name}`;

// What other claims hold: per device, exclusive users and consumed capacity.
function usage(claims, exceptKey) {
  const used = new Map();
  for (const [key, c] of claims) {
    if (key === exceptKey) continue;
    for (const r of c.status?.allocation?.devices?.results ?? []) {
      const k = `${r.driver}/${r.pool}/${r.device}`;
      const u = used.get(k) ?? { exclusive: 0, consumed: {} };
      if (r.shareID === undefined) u.exclusive++;
      for (const [name, q] of Object.entries(r.consumedCapacity ?? {})) {
        u.consumed[name] = (u.consumed[name] ?? 0n) + quantity(q);
      }
      used.set(k, u);
    }
  }
  return used;
}

// Allocates `claim` (its spec; status ignored). Returns {allocation} or {error}.
export function allocate(claim, { slices, classes, claims, claimKey }) {
  const devices = visibleDevices(slices);
  const used = usage(claims, claimKey);
  // Each request (or each alternative of a firstAvailable request) as a list of candidates.
  const requests = [];
  for (const req of claim.spec?.devices?.requests ?? []) {
    const alternatives = req.exactly
      ? [{ name: req.name, ...req.exactly }]
      : (req.firstAvailable ?? []).map((s) => ({ ...s, name: `${req.name}/${s.name}` }));
    requests.push({ name: req.name, alternatives });
  }
  const constraints = claim.spec?.devices?.constraints ?? [];

  function candidates(alt) {
    const cls = classes.get(alt.deviceClassName);
    if (!cls) return { error: `deviceclass ${alt.deviceClassName} not found` };
    const selectors = [...(cls.spec?.selectors ?? []), ...(alt.selectors ?? [])];
    const out = [];
    for (const c of devices) {
      if (!selects(selectors, c.device, c.driver)) continue;
      // A request naming a capacity the device does not declare never lands on it
      // (requestsContainNonExistCapacity, staging/src/k8s.io/dynamic-resource-allocation/
      // structured/internal/experimental, with DRAConsumableCapacity on: 1.36+ defaults).
      if (Object.keys(alt.capacity?.requests ?? {}).some((n) => !(n in (c.device.capacity ?? {})))) continue;
      if (!(c.device.taints ?? []).every((t) => tolerated(t, alt.tolerations))) continue;
      out.push(c);
    }
    return { list: out };
  }

  // Picks devices for requests[i..] with `chosen` so far; depth-first, first fit.
  const pending = new Map(); // device key -> consumed within this claim
  function fits(c, alt) {
    const k = deviceKey(c);
    const u = used.get(k) ?? { exclusive: 0, consumed: {} };
    const mine = pending.get(k);
    if (!c.device.allowMultipleAllocations) {
      return u.exclusive === 0 && Object.keys(u.consumed).length === 0 && !mine ? {} : null;
    }
    if (u.exclusive > 0) return null;
    const consumed = {};
    for (const [name, cap] of Object.entries(c.device.capacity ?? {})) {
      const amount = consumption(cap, alt.capacity?.requests?.[name]);
      if (amount === null) return null;
      const total = (u.consumed[name] ?? 0n) + (mine?.[name] ?? 0n) + amount;
      if (total > quantity(cap.value)) return null;
      consumed[name] = amount;
    }
    return { consumed };
  }
  function constraintsHold(chosen) {
    for (const con of constraints) {
      const [domain, ...rest] = con.matchAttribute.split("/");
      const ref = rest.length ? { domain, name: rest.join("/") } : { domain: "", name: domain };
      const inScope = chosen.filter((x) => !con.requests || con.requests.includes(x.request.split("/")[0]));
      const values = new Set(inScope.map((x) => attributeValue(x.c.device, x.c.driver, ref)));
      if (values.has(undefined) || values.size > 1) return false;
    }
    return true;
  }
  let why = "";
  function solve(i, chosen) {
    if (i === requests.length) return chosen;
    for (const alt of requests[i].alternatives) {
      const cands = candidates(alt);
      if (cands.error) { why = cands.error; return null; }
      const all = alt.allocationMode === "All";
      const count = all ? cands.list.length : alt.count ?? 1;
      if (all && count === 0) { why = `request ${alt.name}: no device matches`; continue; }
      const picked = [];
      const pick = (from) => {
        if (picked.length === count) {
          const next = [...chosen, ...picked];
          return constraintsHold(next) ? solve(i + 1, next) : null;
        }
        for (let j = from; j < cands.list.length; ++j) {
          const c = cands.list[j];
          const f = fits(c, alt);
          if (!f) continue;
          const k = deviceKey(c);
          const before = pending.get(k);
          if (f.consumed) {
            const sum = { ...(before ?? {}) };
            for (const [n, a] of Object.entries(f.consumed)) sum[n] = (sum[n] ?? 0n) + a;
            pending.set(k, sum);
          } else pending.set(k, {});
          picked.push({ request: alt.name, c, consumed: f.consumed });
          const done = pick(j + 1);
          if (done) return done;
          picked.pop();
          if (before) pending.set(k, before); else pending.delete(k);
        }
        return null;
      };
      const done = pick(0);
      if (done) return done;
      why = `request ${alt.name}: no ${count} device(s) with the capacity left, untainted and matching`;
    }
    return null;
  }
  const chosen = solve(0, []);
  if (!chosen) return { error: why || "nothing to allocate" };
  const results = chosen.map(({ request, c, consumed }) => {
    const r = { request, driver: c.driver, pool: c.pool, device: c.device.name };
    if (consumed) {
      r.shareID = crypto.randomUUID();
      r.consumedCapacity = Object.fromEntries(Object.entries(consumed).map(([n, a]) => [n, a.toString()]));
    }
    return r;
  });
  const nodes = [...new Set(chosen.map((x) => x.c.node).filter(Boolean))];
  const allocation = { devices: { results } };
  if (nodes.length === 1) {
    allocation.nodeSelector = { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: nodes }] }] };
  }
  return { allocation };
}
