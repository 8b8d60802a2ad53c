#include "pkg/pool/pool_model.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "pkg/pool/selector.h"
#include "pkg/sysfs/sysfs_parse.h"
#include "pkg/text/cat.h"

namespace rdmadp::pool {

bool PoolModel::healthy() const {
  return std::any_of(hcas.begin(), hcas.end(), [](const PoolHca& h) { return h.healthy; });
}

std::vector<int64_t> PoolModel::NumaNodes() const {
  std::set<int64_t> nodes;
  for (const auto& h : hcas) {
    if (h.function.numa_node >= 0) nodes.insert(h.function.numa_node);
  }
  return {nodes.begin(), nodes.end()};
}

std::string HealthReason(const sysfs::PciFunction& fn) {
  if (sysfs::HasUsablePort(fn)) return "";
  std::string reason;
  bool waiting_for_sm = false;
  for (const auto& dev : fn.rdma_devices) {
    for (const auto& port : dev.ports) {
      Append(reason, reason.empty() ? "" : ", ", dev.name, " port ", port.number, " ",
             sysfs::PortStateName(port.state));
      waiting_for_sm |=
          port.state == sysfs::PortState::kInit || port.state == sysfs::PortState::kArmed;
    }
  }
  if (waiting_for_sm) {
    // INIT/ARMED: the physical link is up; on InfiniBand the subnet manager activates it.
    Append(reason,
           " (the link is up but the port is not active yet: is a subnet manager, "
           "opensm or UFM, running on this fabric?)");
  }
  return reason.empty() ? "no port is ACTIVE" : reason;
}

bool IsUsablePort(const sysfs::Port& port) {
  return port.state == sysfs::PortState::kActive && port.gids != sysfs::GidTable::kAllZero;
}

std::vector<std::string> UsablePorts(const sysfs::PciFunction& fn) {
  std::vector<std::string> out;
  for (const auto& dev : fn.rdma_devices) {
    for (const auto& port : dev.ports) {
      if (IsUsablePort(port)) out.push_back(Cat(dev.name, ":", port.number));
    }
  }
  return out;
}

bool IsSlotId(std::string_view id, int64_t slots) {
  int64_t value = -1;
  auto [ptr, ec] = std::from_chars(id.data(), id.data() + id.size(), value);
  if (ec != std::errc() || ptr != id.data() + id.size()) return false;
  // Reject "01" or "+1": only the exact decimal spellings we advertised are valid.
  if (id.size() > 1 && id[0] == '0') return false;
  return value >= 0 && value < slots;
}

std::string UnusableReason(const sysfs::PciFunction& fn) {
  bool any_port = false;
  for (const auto& dev : fn.rdma_devices) any_port |= !dev.ports.empty();
  if (!any_port || !UsablePorts(fn).empty()) return "";
  if (!sysfs::HasUsablePort(fn)) return HealthReason(fn);
  std::string active;
  for (const auto& dev : fn.rdma_devices) {
    for (const auto& port : dev.ports) {
      if (port.state == sysfs::PortState::kActive) {
        Append(active, active.empty() ? "" : ", ", dev.name, " port ", port.number);
      }
    }
  }
  return Cat(active,
             ": every GID is zero, so it cannot serve RC verbs (a management function, or a "
             "RoCE netdev without addresses)");
}

PoolModel SelectPool(const config::ResourceConfig& resource,
                     const sysfs::NodeInventory& inventory) {
  PoolModel model;
  model.resource = resource;
  for (const auto& fn : inventory.functions) {
    if (!fn.rdma_capable || !Matches(resource.selectors, fn)) continue;
    if (resource.skip_unusable && !UnusableReason(fn).empty()) continue;
    std::string reason = HealthReason(fn);
    const bool healthy = reason.empty();
    model.hcas.push_back({fn, healthy, std::move(reason)});
  }
  return model;
}

}  // namespace rdmadp::pool
