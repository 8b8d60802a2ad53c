#include "pkg/report/discover_report.h"

#include <algorithm>
#include <map>

#include "pkg/pool/pod_env.h"
#include "pkg/pool/snapshot.h"
#include "pkg/report/table.h"
#include "pkg/sysfs/sysfs_parse.h"
#include "pkg/text/cat.h"
#include "pkg/text/escape.h"
#include "pkg/text/json.h"

namespace rdmadp::report {
namespace {

// Each configured pool, built once for both the per-function column and the summary.
std::vector<pool::SnapshotPtr> BuildPools(const sysfs::NodeInventory& inv,
                                          const config::Config& config) {
  std::vector<pool::SnapshotPtr> pools;
  for (const auto& rc : config.resources) pools.push_back(pool::PoolSnapshot::Build(rc, inv));
  return pools;
}

// Pools each function lands in, by function index.
std::vector<std::vector<std::string>> PoolsPerFunction(
    const sysfs::NodeInventory& inv, const std::vector<pool::SnapshotPtr>& snapshots) {
  std::vector<std::vector<std::string>> pools(inv.functions.size());
  for (const auto& snap : snapshots) {
    const auto& addrs = snap->advertised().hca_addresses;
    for (size_t i = 0; i < inv.functions.size(); ++i) {
      if (std::find(addrs.begin(), addrs.end(), inv.functions[i].address) != addrs.end()) {
        pools[i].push_back(snap->resource().FullName());
      }
    }
  }
  return pools;
}

std::vector<std::string> PortStates(const sysfs::PciFunction& fn) {
  std::vector<std::string> out;
  for (const auto& dev : fn.rdma_devices) {
    for (const auto& p : dev.ports) {
      out.push_back(Cat(dev.name, "/", p.number, ":", sysfs::PortStateName(p.state)));
    }
  }
  return out;
}

// The env a container of the pool gets, by name (a protobuf map has no order of its own):
// the Allocate answer's; for a DRA entry, what a claim holding every HCA of the pool gets
// (dra/claim_metadata.h), its names per claim and request.
std::map<std::string, std::string> SortedEnv(const pool::PoolSnapshot& snap) {
  const auto& envs = snap.container_response().envs();
  if (snap.resource().frontend != config::Frontend::kDra) return {envs.begin(), envs.end()};
  const std::string name = pool::PciDeviceEnvName(snap.resource().FullName());
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : envs) {
    out[k.starts_with(name) ? Cat("PCIDEVICE__<CLAIM>__<REQUEST>", k.substr(name.size())) : k] = v;
  }
  return out;
}

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

// perHca: each HCA's IDs, NUMA node and health, one line each.
std::vector<std::string> PerHcaLines(const pool::PoolSnapshot& snap) {
  const auto& adv = snap.advertised();
  std::vector<std::string> lines;
  for (size_t i = 0; i < adv.hca_addresses.size(); ++i) {
    const std::string& a = adv.hca_addresses[i];
    const int64_t numa = snap.hcas()[i].function.numa_node;
    std::string ids = "no IDs (rdmaHcaMax 0)";
    if (adv.shares_per_hca > 0) ids = Cat("IDs ", pool::PerHcaDeviceId(a, 0));
    if (adv.shares_per_hca > 1) Append(ids, "..", pool::PerHcaDeviceId(a, adv.shares_per_hca - 1));
    lines.push_back(Cat(a, " (NUMA ", numa < 0 ? std::string("-") : Cat(numa), "): ", ids, ", ",
                        adv.hca_healthy[i] ? "Healthy" : "Unhealthy"));
  }
  return lines;
}

// Every value below comes from sysfs or the config file and is printed through this: a line
// break in an RDMA device's name forged a row of its own, and ESC and NUL reached the
// terminal (H11 of the hardening round at 050f44e).
std::string Printable(std::string_view value) { return EscapeControls(value); }

}  // namespace

std::string DiscoverTable(const sysfs::NodeInventory& inv, const config::Config& config,
                          const ConfigFindings& findings) {
  const auto snapshots = BuildPools(inv, config);
  const auto pools = PoolsPerFunction(inv, snapshots);
  std::vector<std::vector<std::string>> rows = {{"PCI ADDRESS", "ID", "DRIVER", "NETDEV", "LINK",
                                                 "NUMA", "RDMA", "CHAR DEVICES", "PORTS", "POOLS"}};
  for (size_t i = 0; i < inv.functions.size(); ++i) {
    const auto& fn = inv.functions[i];
    rows.push_back({fn.address, Cat(fn.vendor, ":", fn.device), OrDash(fn.driver),
                    OrDash(fn.if_name), OrDash(fn.link_type),
                    fn.numa_node < 0 ? "-" : std::to_string(fn.numa_node),
                    fn.rdma_capable ? "yes" : "no", OrDash(Join(fn.char_devices, ",")),
                    OrDash(Join(PortStates(fn), ",")), OrDash(Join(pools[i], ","))});
    for (std::string& cell : rows.back()) cell = Printable(cell);  // before the widths are taken
  }
  std::string out = AlignedRows(rows);
  if (inv.functions.empty()) out += "(no PCI network functions found)\n";
  bool first_reason = true;
  for (const auto& fn : inv.functions) {
    if (fn.rdma_capable) continue;
    if (first_reason) out += "\nNot RDMA capable:\n";
    first_reason = false;
    Append(out, "  ", Printable(fn.address), ": ", Printable(fn.not_rdma_reason), "\n");
  }
  if (!inv.unserved.empty()) out += "\nRDMA devices not served:\n";
  for (const auto& u : inv.unserved)
    Append(out, "  ", Printable(u.ibdev), " (", Printable(u.where), "): ", Printable(u.reason),
           "\n");
  bool first_unusable = true;
  for (const auto& fn : inv.functions) {
    const std::string why = fn.rdma_capable ? pool::UnusableReason(fn) : "";
    if (why.empty()) continue;
    if (first_unusable)
      out += "\nCannot serve a pod (left out of env hints; of pools with skipUnusable):\n";
    first_unusable = false;
    Append(out, "  ", Printable(fn.address), ": ", Printable(why), "\n");
  }
  out += "\nPools:\n";
  for (const auto& snap : snapshots) {
    const auto& adv = snap->advertised();
    if (adv.per_hca) {
      Append(out, "  ", Printable(snap->resource().FullName()), ": ", adv.hca_addresses.size(),
             " HCA(s), deviceModel perHca, ", adv.shares_per_hca, " device(s) per HCA, ",
             adv.hca_addresses.empty() ? "no devices"
                                       : Cat(adv.healthy_slots, " of ", adv.slots, " Healthy"),
             "\n");
      for (const auto& line : PerHcaLines(*snap)) Append(out, "    ", Printable(line), "\n");
      if (!snap->shares_cut().empty()) {
        Append(out, "    not advertised: ", Printable(snap->shares_cut()), "\n");
      }
      if (!adv.hca_addresses.empty()) {
        out +=
            "    (the env below is for a container given every HCA; one given fewer gets "
            "those only)\n";
      }
    } else {
      Append(out, "  ", Printable(snap->resource().FullName()), ": ", adv.hca_addresses.size(),
             " HCA(s), ", adv.slots, " slot(s), ",
             adv.hca_addresses.empty() ? "no devices" : (adv.healthy ? "Healthy" : "Unhealthy"),
             "\n");
    }
    // What a container given a slot of this pool finds in its environment now.
    for (const auto& [name, value] : SortedEnv(*snap)) {
      Append(out, "    env ", Printable(name), "=",
             name.ends_with("_INFO") ? Cat("<JSON, ", value.size(), " bytes: --output=json>")
                                     : Printable(value),
             "\n");
    }
    for (const auto& line : snap->roce_not_set()) {
      Append(out, "    not set: ", Printable(line), "\n");
    }
  }
  for (const auto& entry : findings.skipped) {
    Append(out, "  ", Printable(entry.Label()), ": skipped, not served\n");
  }
  for (const auto& entry : findings.skipped) {
    for (const auto& p : entry.problems) Append(out, "problem: ", Printable(p), "\n");
  }
  for (const auto& p : findings.problems) Append(out, "problem: ", Printable(p), "\n");
  for (const auto& p : inv.AllProblems()) Append(out, "problem: ", Printable(p), "\n");
  return out;
}

std::string DiscoverJson(const sysfs::NodeInventory& inv, const config::Config& config,
                         const ConfigFindings& findings) {
  const auto snapshots = BuildPools(inv, config);
  const auto pools = PoolsPerFunction(inv, snapshots);
  auto list = [](const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += ", ";
      AppendJsonString(out, items[i]);
    }
    return out + "]";
  };
  std::string out = "{\n  \"functions\": [";
  for (size_t i = 0; i < inv.functions.size(); ++i) {
    const auto& fn = inv.functions[i];
    out += i == 0 ? "\n" : ",\n";
    const std::string ports = pool::PortsJson(fn);
    Append(out, "    {\"address\": ", JsonString(fn.address),
           ", \"vendor\": ", JsonString(fn.vendor), ", \"device\": ", JsonString(fn.device),
           ", \"driver\": ", JsonString(fn.driver), ", \"netdevs\": ", list(fn.netdevs),
           ", \"linkType\": ", JsonString(fn.link_type), ", \"numaNode\": ", fn.numa_node,
           ", \"rdmaCapable\": ", fn.rdma_capable ? "true" : "false",
           ", \"notRdmaReason\": ", JsonString(fn.not_rdma_reason),
           ", \"charDevices\": ", list(fn.char_devices), ", \"ports\": ", ports,
           ", \"unusableReason\": ",
           JsonString(fn.rdma_capable ? pool::UnusableReason(fn) : std::string()),
           ", \"pools\": ", list(pools[i]), "}");
  }
  out += inv.functions.empty() ? "],\n  \"unserved\": [" : "\n  ],\n  \"unserved\": [";
  for (size_t i = 0; i < inv.unserved.size(); ++i) {
    const auto& u = inv.unserved[i];
    Append(out, i == 0 ? "\n" : ",\n", "    {\"rdmaDevice\": ", JsonString(u.ibdev),
           ", \"where\": ", JsonString(u.where), ", \"reason\": ", JsonString(u.reason), "}");
  }
  out += inv.unserved.empty() ? "],\n  \"pools\": [" : "\n  ],\n  \"pools\": [";
  for (size_t i = 0; i < snapshots.size(); ++i) {
    const auto& adv = snapshots[i]->advertised();
    Append(out, i == 0 ? "\n" : ",\n",
           "    {\"resource\": ", JsonString(snapshots[i]->resource().FullName()),
           ", \"deviceModel\": ", JsonString(snapshots[i]->resource().ModelName()),
           ", \"hcas\": ", list(adv.hca_addresses), ", \"slots\": ", adv.slots,
           ", \"healthy\": ", adv.healthy ? "true" : "false",
           ", \"deviceNodes\": ", list(adv.device_paths), ", \"env\": {");
    bool first_env = true;
    for (const auto& [name, value] : SortedEnv(*snapshots[i])) {
      Append(out, first_env ? "" : ", ", JsonString(name), ": ", JsonString(value));
      first_env = false;
    }
    Append(out, "}, \"envNotSet\": ", list(snapshots[i]->roce_not_set()));
    if (adv.per_hca) {
      // perHca: each HCA's devices, IDs <address>-0 .. <address>-(sharesPerHca - 1).
      Append(out, ", \"sharesPerHca\": ", adv.shares_per_hca, ", \"perHca\": [");
      for (size_t h = 0; h < adv.hca_addresses.size(); ++h) {
        const std::string& a = adv.hca_addresses[h];
        Append(out, h == 0 ? "" : ", ", "{\"address\": ", JsonString(a),
               ", \"numaNode\": ", snapshots[i]->hcas()[h].function.numa_node,
               ", \"healthy\": ", adv.hca_healthy[h] ? "true" : "false");
        if (adv.shares_per_hca > 0) {  // no ID when rdmaHcaMax is 0
          Append(out, ", \"firstId\": ", JsonString(pool::PerHcaDeviceId(a, 0)),
                 ", \"lastId\": ", JsonString(pool::PerHcaDeviceId(a, adv.shares_per_hca - 1)));
        }
        out += "}";
      }
      out += "]";
    }
    out += "}";
  }
  out += snapshots.empty() ? "],\n  \"skipped\": [" : "\n  ],\n  \"skipped\": [";
  std::vector<std::string> problems;
  for (size_t i = 0; i < findings.skipped.size(); ++i) {
    const auto& entry = findings.skipped[i];
    Append(out, i == 0 ? "\n" : ",\n", "    {\"index\": ", entry.index,
           ", \"resourceName\": ", JsonString(entry.resource_name),
           ", \"problems\": ", list(entry.problems), "}");
    problems.insert(problems.end(), entry.problems.begin(), entry.problems.end());
  }
  out += findings.skipped.empty() ? "],\n" : "\n  ],\n";
  problems.insert(problems.end(), findings.problems.begin(), findings.problems.end());
  for (const auto& p : inv.AllProblems()) problems.push_back(p);
  Append(out, "  \"rdmaCmPresent\": ", inv.rdma_cm_present ? "true" : "false",
         ",\n  \"problems\": ", list(problems), "\n}\n");
  return out;
}

}  // namespace rdmadp::report
