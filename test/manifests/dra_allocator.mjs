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
// - admin access (KEP-5018, DRAAdminAccess), as structured/internal/{stable,incubating,
//   experimental} allocator_*.go have it alike from 1.34 to 1.37 (see the functions below);
//   with the gate off a request that sets adminAccess (even to false) is an error.
// Several claims can be allocated together (allocateClaims), as the scheduler allocates a
// pod's claims in one Allocate call; what one takes is seen by the next.
// What the scheduler is told (structured/internal/types.go Features) comes from the gates:
// `features.adminAccess` (DRAAdminAccess) and `features.deviceTaints` (DRADeviceTaints, off:
// taints are ignored), both on unless said otherwise. Consumable capacity is always on.
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

// What the claims already allocated hold, per device: dedicated users and consumed capacity
// (kube-scheduler's allocated state, pkg/scheduler/framework/plugins/dynamicresources/
// allocateddevices.go foreachAllocatedDevice: a result with adminAccess true is not
// considered allocated at all, neither its device nor its share nor its capacity; a result
// with a shareID is a share, its consumedCapacity counted; any other result dedicates the
// device). `exceptKeys`: the claims being allocated now.
function usage(claims, exceptKeys) {
  const used = new Map();
  for (const [key, c] of claims) {
    if (exceptKeys.has(key)) continue;
    for (const r of c.status?.allocation?.devices?.results ?? []) {
      if (r.adminAccess === true) continue;
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

// klog.KObj's text: namespace/name, or the name alone without a namespace.
const kobj = (claim) => (claim.metadata?.namespace ? `${claim.metadata.namespace}/${claim.metadata.name}` : claim.metadata?.name ?? "");

const DEFAULT_FEATURES = { adminAccess: true, deviceTaints: true };

// Allocates `claim` (its spec; status ignored). Returns {allocation} or {error}.
export function allocate(claim, { slices, classes, claims, claimKey, features }) {
  const r = allocateClaims([claim], { slices, classes, claims, claimKeys: [claimKey], features });
  return r.error !== undefined ? r : { allocation: r.allocations[0] };
}

// Allocates `claimsToAllocate` together (their specs), against the claims already allocated
// in `claims` (key -> claim; `claimKeys` are those being allocated now, not counted).
// Returns {allocations} (one per claim, in order) or {error}.
export function allocateClaims(claimsToAllocate, { slices, classes, claims, claimKeys = [], features = {} }) {
  const feats = { ...DEFAULT_FEATURES, ...features };
  const devices = visibleDevices(slices);
  const used = usage(claims, new Set(claimKeys.filter((k) => k !== undefined)));
  // Allocate validates every request of every claim first (validateDeviceRequest): with
  // Features.AdminAccess off, a request that sets adminAccess at all (hasAdminAccess: the
  // field is there, true or false) stops the allocation with an error. A subrequest cannot
  // set it (deviceSubRequestAccessor.hasAdminAccess is false).
  for (const claim of claimsToAllocate) {
    for (const req of claim.spec?.devices?.requests ?? []) {
      if (!feats.adminAccess && req.exactly && req.exactly.adminAccess !== undefined && req.exactly.adminAccess !== null) {
        return { error: `claim ${kobj(claim)}, request ${req.name}: admin access is requested, but the feature is disabled` };
      }
    }
  }
  // Each request (or each alternative of a firstAvailable request) of each claim, in order,
  // as a list of candidates. A subrequest never has admin access.
  const steps = [];
  claimsToAllocate.forEach((claim, claimIndex) => {
    for (const req of claim.spec?.devices?.requests ?? []) {
      const alternatives = req.exactly
        ? [{ name: req.name, ...req.exactly }]
        : (req.firstAvailable ?? []).map((s) => ({ ...s, name: `${req.name}/${s.name}`, adminAccess: undefined }));
      steps.push({ claimIndex, name: req.name, alternatives });
    }
  });

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
      // taintPreventsAllocation, only with Features.DeviceTaints; admin access tolerates
      // nothing more than any other request.
      if (feats.deviceTaints && !(c.device.taints ?? []).every((t) => tolerated(t, alt.tolerations))) continue;
      out.push(c);
    }
    return { list: out };
  }

  // What this search has taken so far, per device: `claims`, the claims a device without
  // allowMultipleAllocations is being allocated to (the allocator's allocatingDevices), and
  // `consumed`, the capacity the shares being allocated consume (allocatingCapacity).
  const pending = new Map();
  // Whether the candidate can serve `alt` of claim `claimIndex`, as allocateOne's cheap
  // "in use" check and allocateDevice decide (allocator_incubating.go; stable and
  // experimental alike): a request with admin access passes over devices others hold and
  // only refuses a device without allowMultipleAllocations that its own claim is taking
  // already; any other request needs a device no allocated claim dedicates and no claim
  // of this search is taking. The capacity check (CmpRequestOverCapacity) is made for admin
  // access too: an admin request on a shared device takes (and is given) a share that must
  // fit beside the ordinary claims' shares.
  function fits(c, alt, claimIndex) {
    const k = deviceKey(c);
    const u = used.get(k) ?? { exclusive: 0, consumed: {} };
    const mine = pending.get(k);
    const multiple = c.device.allowMultipleAllocations === true;
    if (alt.adminAccess === true) {
      if (!multiple && mine?.claims.has(claimIndex)) return null;
    } else if (!multiple) {
      return u.exclusive === 0 && Object.keys(u.consumed).length === 0 && !mine ? {} : null;
    } else if (u.exclusive > 0) {
      return null;
    }
    if (!multiple) return {};
    const consumed = {};
    for (const [name, cap] of Object.entries(c.device.capacity ?? {})) {
      const amount = consumption(cap, alt.capacity?.requests?.[name]);
      if (amount === null) return null;
      const total = (u.consumed[name] ?? 0n) + (mine?.consumed[name] ?? 0n) + amount;
      if (total > quantity(cap.value)) return null;
      consumed[name] = amount;
    }
    return { consumed };
  }
  function constraintsHold(chosen, claimIndex) {
    const constraints = claimsToAllocate[claimIndex].spec?.devices?.constraints ?? [];
    const ofClaim = chosen.filter((x) => x.claimIndex === claimIndex);
    for (const con of constraints) {
      const [domain, ...rest] = con.matchAttribute.split("/");
      const ref = rest.length ? { domain, name: rest.join("/") } : { domain: "", name: domain };
      const inScope = ofClaim.filter((x) => !con.requests || con.requests.includes(x.request.split("/")[0]));
      const values = new Set(inScope.map((x) => attributeValue(x.c.device, x.c.driver, ref)));
      if (values.has(undefined) || values.size > 1) return false;
    }
    return true;
  }
  let why = "";
  // Picks devices for steps[i..] with `chosen` so far; depth-first, first fit.
  function solve(i, chosen) {
    if (i === steps.length) return chosen;
    const { claimIndex } = steps[i];
    for (const alt of steps[i].alternatives) {
      const cands = candidates(alt);
      if (cands.error) { why = cands.error; return null; }
      const all = alt.allocationMode === "All";
      const count = all ? cands.list.length : alt.count ?? 1;
      if (all && count === 0) { why = `request ${alt.name}: no device matches`; continue; }
      const picked = [];
      const pick = (from) => {
        if (picked.length === count) {
          const next = [...chosen, ...picked];
          return constraintsHold(next, claimIndex) ? solve(i + 1, next) : null;
        }
        for (let j = from; j < cands.list.length; ++j) {
          const c = cands.list[j];
          const f = fits(c, alt, claimIndex);
          if (!f) continue;
          const k = deviceKey(c);
          const before = pending.get(k);
          const now = { claims: new Set(before?.claims ?? []), consumed: { ...(before?.consumed ?? {}) } };
          if (f.consumed) {
            for (const [n, a] of Object.entries(f.consumed)) now.consumed[n] = (now.consumed[n] ?? 0n) + a;
          } else {
            now.claims.add(claimIndex);
          }
          pending.set(k, now);
          picked.push({ claimIndex, request: alt.name, c, consumed: f.consumed, adminAccess: alt.adminAccess === true });
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
  const allocations = claimsToAllocate.map((_, claimIndex) => {
    const mine = chosen.filter((x) => x.claimIndex === claimIndex);
    // The result as Allocate writes it: adminAccess only when the request has it (true);
    // a share (shareID, consumedCapacity) on a device with allowMultipleAllocations.
    const results = mine.map(({ request, c, consumed, adminAccess }) => {
      const r = { request, driver: c.driver, pool: c.pool, device: c.device.name };
      if (adminAccess) r.adminAccess = true;
      if (consumed) {
        r.shareID = crypto.randomUUID();
        r.consumedCapacity = Object.fromEntries(Object.entries(consumed).map(([n, a]) => [n, a.toString()]));
      }
      return r;
    });
    const nodes = [...new Set(mine.map((x) => x.c.node).filter(Boolean))];
    const allocation = { devices: { results } };
    if (nodes.length === 1) {
      allocation.nodeSelector = { nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: nodes }] }] };
    }
    return allocation;
  });
  return { allocations };
}
