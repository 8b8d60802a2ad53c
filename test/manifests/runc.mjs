// The rendered DaemonSet's container, created by runc (the runtime under containerd and
// CRI-O): its volume mounts, read-only root, and the termination message file the kubelet
// bind-mounts at terminationMessagePath, on an OCI bundle whose rootfs is the image's
// runtime closure (scripts/copy-closure.sh). It must start and run `validate` on the
// mounted ConfigMap, found through the environment the DaemonSet sets (as `kubectl exec ...
// validate` in the pod does). The base ships no ConfigMap: the example one is mounted. The
// old layout (host /dev read-only over /dev) must fail to start, as
// it did on a freshly booted node: the check can fail.
// Then NVIDIA network-operator's container (docs/network-operator.md): its command
// /bin/k8s-rdma-shared-dp with no args and no env, privileged, its mounts (host /dev over
// /dev, the ConfigMap at the Go plugin's path). It must serve the demo node to a kubelet
// stand-in on its defaults alone: register every resource of the config, list the slots
// with their NUMA node, and exit 0 on SIGTERM leaving no socket behind.
// Usage: node runc.mjs <plugin-binary>   (as root)
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { check, finish } from "./check.mjs";
import { render } from "./render.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const plugin = process.argv[2];
const objects = render(path.join(root, "images/base"));
const ds = objects.find((o) => o.kind === "DaemonSet");
const cm = render(path.join(root, "images/examples/config"))
  .find((o) => o.kind === "ConfigMap" && o.metadata.name === "rdma-devices");
const spec = ds.spec.template.spec;
const container = spec.containers[0];

const work = fs.mkdtempSync(path.join(os.tmpdir(), "rdmadp-runc-"));
const rootfs = path.join(work, "rootfs");
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: "utf8", ...opts });
const closure = run(path.join(root, "scripts/copy-closure.sh"), [plugin, rootfs, "--with-base"]);
assert.equal(closure.status, 0, closure.stderr);
run("ldconfig", ["-r", rootfs]);
// UBI 9's /bin is a link to usr/bin (the filesystem package), so the image answers to
// /bin/k8s-rdma-shared-dp, network-operator's command. The closure has no /bin: add it.
if (!fs.existsSync(path.join(rootfs, "bin"))) fs.symlinkSync("usr/bin", path.join(rootfs, "bin"));

// hostPath volumes: /dev is the real one (read-only); kubelet directories are stand-ins.
function hostSource(volume) {
  if (volume.hostPath.path === "/dev") return "/dev";
  const dir = path.join(work, "host", volume.hostPath.path);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
// The pod a container belongs to: its volumes, where its hostPaths come from, and the data of
// its ConfigMap.
const ours = { name: "ours", volumes: spec.volumes, host: hostSource, data: cm.data };
function ociMounts(c, pod) {
  const mounts = [];
  for (const m of c.volumeMounts) {
    const v = pod.volumes.find((x) => x.name === m.name);
    let source;
    let readOnly = !!m.readOnly;
    if (v.hostPath) {
      source = pod.host(v);
    } else {
      source = path.join(work, "configmap", pod.name, v.name);
      fs.mkdirSync(source, { recursive: true });
      for (const item of v.configMap.items) {
        fs.writeFileSync(path.join(source, item.path), pod.data[item.key]);
      }
      readOnly = true;  // the kubelet mounts ConfigMap volumes read-only, whatever readOnly says
    }
    mounts.push({ destination: m.mountPath.replace(/(.)\/+$/, "$1"), type: "bind", source,
                  options: ["rbind", readOnly ? "ro" : "rw"] });
  }
  // The kubelet bind-mounts a fresh file at terminationMessagePath into every container.
  const termination = path.join(work, "termination-log");
  fs.writeFileSync(termination, "");
  mounts.push({ destination: c.terminationMessagePath ?? "/dev/termination-log", type: "bind",
                source: termination, options: ["rbind", "rw"] });
  return mounts;
}

// An OCI bundle for container `c` of `pod` running `argv`; `adjust` edits the config last.
function makeBundle(name, c, argv, pod = ours, adjust = () => {}) {
  const bundle = path.join(work, name);
  fs.mkdirSync(bundle);
  assert.equal(run("runc", ["spec", "--bundle", bundle]).status, 0);
  const config = JSON.parse(fs.readFileSync(path.join(bundle, "config.json"), "utf8"));
  config.process.terminal = false;
  config.process.args = argv;
  for (const e of c.env ?? []) if (e.value !== undefined) config.process.env.push(`${e.name}=${e.value}`);
  config.process.user = { uid: c.securityContext?.runAsUser ?? 0, gid: 0 };
  config.root = { path: rootfs, readonly: !!c.securityContext?.readOnlyRootFilesystem };
  config.hostname = name;
  config.mounts.push(...ociMounts(c, pod));
  adjust(config);
  fs.writeFileSync(path.join(bundle, "config.json"), JSON.stringify(config, null, 1));
  return bundle;
}

function runContainer(name, c, args) {
  const bundle = makeBundle(name, c, ["/usr/bin/k8s-rdma-shared-dp", ...args]);
  const r = run("runc", ["run", "--bundle", bundle, `rdmadp-${name}-${process.pid}`],
                { timeout: 30000 });
  return { status: r.status, output: (r.stdout ?? "") + (r.stderr ?? "") };
}

check("runc starts the DaemonSet's container and it validates the mounted ConfigMap", () => {
  const r = runContainer("ours", container, ["validate"]);  // the path from RDMADP_CONFIG_FILE
  assert.equal(r.status, 0, r.output);
  assert.match(r.output, /valid; \d+ resource\(s\)/);
});

check("the old layout (host /dev read-only over /dev) cannot start: the check can fail", () => {
  const old = structuredClone(container);
  old.volumeMounts = old.volumeMounts.filter((m) => m.name !== "host-dev");
  old.volumeMounts.push({ name: "host-dev", mountPath: "/dev", readOnly: true });
  const r = runContainer("old", old, ["--version"]);
  assert.notEqual(r.status, 0, r.output);
  assert.match(r.output, /termination-log.*read-only file system/);
});

// ---- NVIDIA network-operator's DaemonSet ----------------------------------------------
// Its container and volumes as Mellanox/network-operator renders
// manifests/state-rdma-shared-device-plugin/0060_rdma-shared-dev-plugin-ds.yaml for a
// NicClusterPolicy without useCdi (v26.1.2; the container is the same from v23.10.0 to
// v26.4.x): a command and no args, no env, no probes, privileged, the host's /dev over /dev.
// The ofed-driver-validation init container (up to v26.1.x, with ofedDriver set) runs
// sh/lsmod/grep, which the runtime closure does not have: test/manifests/dockerfile.mjs checks
// that the image installs and finds them.
const operator = {
  container: {
    name: "rdma-shared-dp",
    command: ["/bin/k8s-rdma-shared-dp"],
    securityContext: { privileged: true },
    volumeMounts: [
      { name: "device-plugin", mountPath: "/var/lib/kubelet/device-plugins", readOnly: false },
      { name: "plugins-registry", mountPath: "/var/lib/kubelet/plugins_registry", readOnly: false },
      { name: "config", mountPath: "/k8s-rdma-shared-dev-plugin" },
      { name: "devs", mountPath: "/dev/" },
    ],
  },
  volumes: [
    { name: "device-plugin", hostPath: { path: "/var/lib/kubelet/device-plugins" } },
    { name: "plugins-registry", hostPath: { path: "/var/lib/kubelet/plugins_registry" } },
    { name: "config", configMap: { name: "rdma-devices",
                                   items: [{ key: "config.json", path: "config.json" }] } },
    { name: "devs", hostPath: { path: "/dev/" } },
  ],
};

// The demo node (test/support/fake_node.cpp, PluginHarness::AddDemoHcas): four ConnectX HCAs,
// two InfiniBand on NUMA 0 and two RoCE on NUMA 1, and an Intel NIC without RDMA, laid out
// as the kernel does (device directories under sys/devices/pci0000:00, reached through the
// same symlinks). Its /dev/infiniband entries are plain files: only their existence is checked.
function demoNode(dir) {
  const sys = path.join(dir, "sys");
  const dev = path.join(dir, "dev");
  const write = (file, text) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  };
  const link = (at, target) => {  // relative, as sysfs links are
    fs.mkdirSync(path.dirname(at), { recursive: true });
    fs.rmSync(at, { force: true });
    fs.symlinkSync(path.relative(path.dirname(at), target), at);
  };
  for (const d of ["bus/pci/devices", "class/net", "class/infiniband"]) {
    fs.mkdirSync(path.join(sys, d), { recursive: true });
  }
  write(path.join(sys, "class/infiniband_verbs/abi_version"), "6\n");
  write(path.join(sys, "class/infiniband_mad/abi_version"), "5\n");
  write(path.join(dev, "infiniband/rdma_cm"), "");
  let uverbs = 0;
  let umad = 0;
  const charDev = (cls, name, ibdev, deviceDir) => {
    const entry = path.join(deviceDir, cls, name);
    write(path.join(entry, "ibdev"), `${ibdev}\n`);
    write(path.join(entry, "dev"), "231:0\n");
    link(path.join(sys, "class", cls, name), entry);
    write(path.join(dev, "infiniband", name), "");
  };
  const add = (fn) => {
    const d = path.join(sys, "devices/pci0000:00", fn.address);
    const id = `${fn.vendor}:${fn.device}`.toUpperCase();
    write(path.join(d, "class"), "0x020000\n");
    write(path.join(d, "vendor"), `0x${fn.vendor}\n`);
    write(path.join(d, "device"), `0x${fn.device}\n`);
    write(path.join(d, "numa_node"), `${fn.numa}\n`);
    write(path.join(d, "modalias"), `pci:v0000${fn.vendor}d0000${fn.device}\n`);
    write(path.join(d, "uevent"), `DRIVER=${fn.driver}\nPCI_CLASS=20000\nPCI_ID=${id}\n` +
          `PCI_SUBSYS_ID=${id}\nPCI_SLOT_NAME=${fn.address}\nMODALIAS=pci:v0000${id}\n`);
    link(path.join(sys, "bus/pci/devices", fn.address), d);
    fs.mkdirSync(path.join(sys, "bus/pci/drivers", fn.driver), { recursive: true });
    link(path.join(d, "driver"), path.join(sys, "bus/pci/drivers", fn.driver));
    const netdev = path.join(d, "net", fn.netdev);
    write(path.join(netdev, "type"), fn.infiniband ? "32\n" : "1\n");
    write(path.join(netdev, "operstate"), "up\n");
    link(path.join(sys, "class/net", fn.netdev), netdev);
    if (!fn.ibdev) return;
    const ib = path.join(d, "infiniband", fn.ibdev);
    write(path.join(ib, "ports/1/state"), "4: ACTIVE\n");
    write(path.join(ib, "ports/1/link_layer"), fn.infiniband ? "InfiniBand\n" : "Ethernet\n");
    for (let g = 0; g < 4; g++) {
      write(path.join(ib, "ports/1/gids", String(g)), g === 0
        ? `fe80:0000:0000:0000:0002:c903:00${fn.address.slice(5, 7)}:0001\n`
        : "0000:0000:0000:0000:0000:0000:0000:0000\n");
    }
    link(path.join(sys, "class/infiniband", fn.ibdev), ib);
    charDev("infiniband_verbs", `uverbs${uverbs++}`, fn.ibdev, d);
    const n = umad++;
    charDev("infiniband_mad", `umad${n}`, fn.ibdev, d);
    if (fn.infiniband) charDev("infiniband_mad", `issm${n}`, fn.ibdev, d);  // RoCE has no issm
  };
  for (let i = 0; i < 4; i++) {
    const infiniband = i < 2;
    add({ address: `0000:${(0x10 + i).toString(16)}:00.0`, vendor: "15b3", device: "1017",
          driver: "mlx5_core", numa: infiniband ? 0 : 1, infiniband, ibdev: `mlx5_${i}`,
          netdev: infiniband ? `ib${i}` : `enp${16 + i}s0f0np0` });
  }
  add({ address: "0000:05:00.0", vendor: "8086", device: "1521", driver: "igb", numa: -1,
        infiniband: false, netdev: "eno1" });
  return { sys, dev };
}
// PluginHarness::DemoConfig: what `spec.rdmaSharedDevicePlugin.config` would hold.
const demoConfig = {
  periodicUpdateInterval: 300,
  configList: [
    { resourceName: "hca_shared_devices_a", rdmaHcaMax: 1000,
      selectors: { vendors: ["15b3"], linkTypes: ["infiniband"] }, envHints: ["nccl", "ucx"] },
    { resourceName: "hca_shared_devices_b", rdmaHcaMax: 500,
      selectors: { vendors: ["15b3"], linkTypes: ["ether"] } },
  ],
};
const expected = {  // resource -> slots and the NUMA node of its HCAs
  "rdma/hca_shared_devices_a": { slots: 1000, numa: 0 },
  "rdma/hca_shared_devices_b": { slots: 500, numa: 1 },
};

// gRPC over HTTP/2 (node:http2) with the few protobuf messages the kubelet exchanges with a
// device plugin (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto).
function grpcFrame(message) {
  const head = Buffer.alloc(5);  // not compressed, big-endian length
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}
function grpcReader(onMessage) {  // a 'data' handler that calls onMessage per whole message
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
      const n = pending.readUInt32BE(1);
      if (pending[0] !== 0) throw new Error("a compressed gRPC message");
      onMessage(pending.subarray(5, 5 + n));
      pending = pending.subarray(5 + n);
    }
  };
}
function protoFields(buf) {  // [{no, value}]: varints as BigInt, the rest as Buffers
  const out = [];
  let i = 0;
  const varint = () => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (i >= buf.length) throw new Error("a truncated protobuf message");
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const wire = key & 7;
    const no = key >> 3;
    if (wire === 0) {
      out.push({ no, value: varint() });
    } else if (wire === 1 || wire === 2 || wire === 5) {
      const n = wire === 2 ? Number(varint()) : wire === 1 ? 8 : 4;
      out.push({ no, value: buf.subarray(i, i + n) });
      i += n;
    } else {
      throw new Error(`protobuf wire type ${wire}`);
    }
  }
  return out;
}
const text = (fields, no) => fields.find((f) => f.no === no)?.value.toString("utf8") ?? "";
// Device {ID = 1, health = 2, topology = 3 {nodes = 1 {ID = 1}}}
function device(buf) {
  const f = protoFields(buf);
  const topology = f.find((x) => x.no === 3);
  const numa = !topology ? [] : protoFields(topology.value).filter((x) => x.no === 1)
    .map((node) => Number(protoFields(node.value).find((x) => x.no === 1)?.value ?? 0n));
  return { id: text(f, 1), health: text(f, 2), numa };
}

// The kubelet, as up to 1.24 (docs/kubelet-versions.md): Register (RegisterRequest {version =
// 1, endpoint = 2, resource_name = 3}) is answered at once, then the endpoint is dialled and
// ListAndWatch started. Socket paths are relative to the process's directory, the stand-in's
// device-plugins directory (a Unix socket path has at most 107 bytes; TMPDIR may be long).
function kubeletStandIn() {
  const resources = new Map();  // name -> {endpoint, version, lists: [[device]]}
  const problems = [];
  const sessions = [];
  const server = http2.createServer();
  server.on("sessionError", () => {});
  server.on("stream", (stream, headers) => {
    const chunks = [];
    stream.on("error", () => {});
    stream.on("data", (c) => chunks.push(c));
    stream.on("end", () => {
      const status = (code, message) => {
        stream.respond({ ":status": 200, "content-type": "application/grpc" },
                       { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers(
          message ? { "grpc-status": String(code), "grpc-message": message }
                  : { "grpc-status": String(code) }));
        stream.end(code === 0 ? grpcFrame(Buffer.alloc(0)) : undefined);  // Empty
      };
      if (headers[":path"] !== "/v1beta1.Registration/Register") {
        problems.push(`unexpected call ${headers[":path"]}`);
        return status(12, "unimplemented");
      }
      try {
        let request;
        grpcReader((m) => { request = protoFields(m); })(Buffer.concat(chunks));
        const name = text(request, 3);
        const r = { endpoint: text(request, 2), version: text(request, 1), lists: [] };
        resources.set(name, r);
        status(0, "");
        sessions.push(listAndWatch(r.endpoint, (list) => r.lists.push(list)));
      } catch (e) {
        problems.push(`Register: ${e.message}`);
        status(13, "bad request");
      }
    });
  });
  function listAndWatch(endpoint, onList) {
    const session = http2.connect("http://localhost",
                                  { createConnection: () => net.connect({ path: endpoint }) });
    session.on("error", () => {});
    const req = session.request({ ":method": "POST", ":path": "/v1beta1.DevicePlugin/ListAndWatch",
                                  "content-type": "application/grpc", te: "trailers" });
    req.on("error", () => {});
    req.on("response", () => {});
    const reader = grpcReader((m) => {  // ListAndWatchResponse {devices = 1}
      onList(protoFields(m).filter((f) => f.no === 1).map((f) => device(f.value)));
    });
    req.on("data", (chunk) => {
      try { reader(chunk); } catch (e) { problems.push(`ListAndWatch ${endpoint}: ${e.message}`); }
    });
    req.end(grpcFrame(Buffer.alloc(0)));  // Empty
    return session;
  }
  return {
    resources, problems,
    listen: () => new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen("./kubelet.sock", resolve);
    }),
    close: () => {
      for (const s of sessions) s.destroy();
      server.close();
    },
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(what)), ms); });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

// The image's own environment (Dockerfile.ubi's last stage): all the container gets, as the
// operator's template sets none.
const imageEnv = (() => {
  const dockerfile = fs.readFileSync(path.join(root, "Dockerfile.ubi"), "utf8").replace(/\\\n/g, " ");
  const last = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
  return [...last.matchAll(/^ENV\s+(.+)$/gm)].flatMap((m) => m[1].trim().split(/\s+/));
})();

async function operatorCase() {
  const name = "operator";
  const node = demoNode(path.join(work, "node"));
  const pod = {
    name, volumes: operator.volumes, data: { "config.json": JSON.stringify(demoConfig, null, 2) },
    // The node's /dev is the demo node's; its kubelet directories are stand-ins.
    host: (v) => {
      if (v.hostPath.path.replace(/(.)\/+$/, "$1") === "/dev") return node.dev;
      const dir = path.join(work, "node-host", v.hostPath.path);
      fs.mkdirSync(dir, { recursive: true });
      return dir;
    },
  };
  const boundingSet = () =>
    BigInt("0x" + fs.readFileSync("/proc/self/status", "utf8").match(/^CapBnd:\s*([0-9a-f]+)/m)[1]);
  const c = operator.container;
  assert.ok(!c.args && !c.env, "the template as the operator renders it: no args, no env");
  assert.ok(imageEnv.every((e) => e.includes("=") && !e.startsWith("RDMADP_")), `ENV ${imageEnv}`);
  const bundle = makeBundle(name, c, c.command, pod, (config) => {
    // privileged: true: every capability, no masked or read-only paths, every device.
    const caps = ["CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL",
      "SETGID", "SETUID", "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST",
      "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT",
      "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME",
      "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
      "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ"]
      // Listed in capability-number order: a runtime grants what its own bounding set holds
      // (this machine's sandbox lacks some), so the test asks for exactly those.
      .filter((_, bit) => (boundingSet() >> BigInt(bit)) & 1n)
      .map((x) => `CAP_${x}`);
    config.process.capabilities = { bounding: caps, effective: caps, permitted: caps };
    config.process.noNewPrivileges = false;
    config.linux.maskedPaths = [];
    config.linux.readonlyPaths = [];
    config.linux.resources = { ...config.linux.resources, devices: [{ allow: true, access: "rwm" }] };
    config.process.env.push(...imageEnv);
    // The node's sysfs is the demo node's. The host's /dev has the standard nodes; the demo
    // node's has only infiniband/: bind the few a process may open from the test host.
    config.mounts = config.mounts.filter((m) => m.destination !== "/sys" &&
                                                !m.destination.startsWith("/sys/"));
    config.mounts.push({ destination: "/sys", type: "bind", source: node.sys,
                         options: ["rbind", "ro"] });
    for (const d of ["null", "zero", "full", "random", "urandom", "tty"]) {
      config.mounts.push({ destination: `/dev/${d}`, type: "bind", source: `/dev/${d}`,
                           options: ["bind", "rw"] });
    }
    // hostNetwork: true is left out: the container keeps runc's empty network namespace, so
    // setting the demo HCAs' netdevs up (on by default) can reach no link of the test host.
  });

  const pluginsDir = pod.host(operator.volumes[0]);
  const cwd = process.cwd();
  process.chdir(pluginsDir);
  const kubelet = kubeletStandIn();
  const id = `rdmadp-${name}-${process.pid}`;
  let child;
  let output = "";
  let waiting = true;
  try {
    await kubelet.listen();
    child = spawn("runc", ["run", "--bundle", bundle, id], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (d) => { output += d; });
    child.stderr.on("data", (d) => { output += d; });
    const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve(code ?? signal)));
    const died = exited.then((s) => { throw new Error(`the container exited (${s}) before serving`); });
    died.catch(() => {});
    const listed = (async () => {
      while (waiting) {
        const rs = Object.keys(expected).map((n) => kubelet.resources.get(n));
        if (rs.every((r) => r && r.lists.length > 0)) return;
        await sleep(50);
      }
    })();
    await within(Promise.race([listed, died]), 30000,
                 "no registration and list of every resource within 30 s");

    assert.deepEqual(kubelet.problems, []);
    for (const [resource, want] of Object.entries(expected)) {
      const r = kubelet.resources.get(resource);
      assert.equal(r.version, "v1beta1");
      assert.match(r.endpoint, /^hca_shared_devices_[ab]-[0-9a-f]{8}\.sock$/);
      const list = r.lists[r.lists.length - 1];
      assert.deepEqual(list.map((d) => d.id).sort((x, y) => x - y),
                       Array.from({ length: want.slots }, (_, i) => String(i)), `${resource}: slots`);
      assert.ok(list.every((d) => d.health === "Healthy"), `${resource}: not every slot Healthy`);
      assert.deepEqual([...new Set(list.flatMap((d) => d.numa))], [want.numa], `${resource}: NUMA`);
    }
    // The slots and NUMA nodes above are the demo node's: its sysfs was read at /sys, the
    // default root.

    assert.equal(run("runc", ["kill", id, "TERM"]).status, 0);
    const status = await within(exited, 15000, "still running 15 s after SIGTERM");
    assert.equal(status, 0, "exit status after SIGTERM");
    const left = fs.readdirSync(pluginsDir).filter((f) => f !== "kubelet.sock");
    assert.deepEqual(left, [], "sockets left in device-plugins");
  } catch (e) {
    e.message += `\n--- container output ---\n${output}`;
    throw e;
  } finally {
    waiting = false;
    kubelet.close();
    process.chdir(cwd);
    if (child && child.exitCode === null && child.signalCode === null) {
      run("runc", ["kill", id, "KILL"]);
      await within(new Promise((resolve) => child.on("close", resolve)), 10000, "runc run")
        .catch(() => {});
    }
    run("runc", ["delete", "--force", id]);
  }
}

let operatorFailure = null;
try {
  await operatorCase();
} catch (e) {
  operatorFailure = e;
}
check("runc runs network-operator's container (its command, no args or env, its mounts, " +
      "privileged) and it serves the demo node on its defaults", () => {
  if (operatorFailure) throw operatorFailure;
});

fs.rmSync(work, { recursive: true, force: true });
finish("runc");
