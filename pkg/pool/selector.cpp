#include "pkg/pool/selector.h"

#include <algorithm>
#include <string>

namespace rdmadp::pool {
namespace {

bool AnyEquals(const std::vector<std::string>& wanted, const std::string& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

}  // namespace

bool Matches(const config::Selectors& s, const sysfs::PciFunction& fn) {
  return AnyEquals(s.vendors, fn.vendor) && AnyEquals(s.device_ids, fn.device) &&
         AnyEquals(s.drivers, fn.driver) && AnyEquals(s.if_names, fn.if_name) &&
         AnyEquals(s.link_types, fn.link_type) && AnyEquals(s.pci_addresses, fn.address);
}

std::string Explain(const config::Selectors& s, const sysfs::PciFunction& fn) {
  struct Check {
    const char* key;
    const std::vector<std::string>* wanted;
    const std::string* value;
  };
  for (const Check& c :
       {Check{"vendors", &s.vendors, &fn.vendor}, Check{"deviceIDs", &s.device_ids, &fn.device},
        Check{"drivers", &s.drivers, &fn.driver}, Check{"ifNames", &s.if_names, &fn.if_name},
        Check{"linkTypes", &s.link_types, &fn.link_type},
        Check{"pciAddresses", &s.pci_addresses, &fn.address}}) {
    if (AnyEquals(*c.wanted, *c.value)) continue;
    std::string list;
    for (const auto& w : *c.wanted) list += (list.empty() ? "" : ",") + w;
    return "selectors." + std::string(c.key) + " [" + list + "] does not include \"" + *c.value +
           "\"";
  }
  if (!fn.rdma_capable)
    return "matches the selectors but is not RDMA-capable: " + fn.not_rdma_reason;
  return "";
}

}  // namespace rdmadp::pool
