#include "pkg/pool/selector.h"

#include <algorithm>

namespace rdmadp::pool {
namespace {

bool AnyEquals(const std::vector<std::string>& wanted, const std::string& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

}  // namespace

bool Matches(const config::Selectors& s, const sysfs::PciFunction& fn) {
  return AnyEquals(s.vendors, fn.vendor) && AnyEquals(s.device_ids, fn.device) &&
         AnyEquals(s.drivers, fn.driver) && AnyEquals(s.if_names, fn.if_name) &&
         AnyEquals(s.link_types, fn.link_type);
}

}  // namespace rdmadp::pool
