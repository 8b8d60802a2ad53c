#include "pkg/pool/per_hca.h"

#include "pkg/text/cat.h"

namespace rdmadp::pool {

std::string PerHcaDeviceId(std::string_view address, int64_t share) {
  return Cat(address, "-", share);
}

PerHcaIds::PerHcaIds(const std::vector<PoolHca>& hcas, int64_t shares) : shares_(shares) {
  for (size_t i = 0; i < hcas.size(); ++i) by_address_.emplace(hcas[i].function.address, i);
}

std::optional<size_t> PerHcaIds::HcaOf(std::string_view id) const {
  const size_t dash = id.rfind('-');
  if (dash == std::string_view::npos) return std::nullopt;
  auto it = by_address_.find(id.substr(0, dash));
  if (it == by_address_.end() || !IsSlotId(id.substr(dash + 1), shares_)) return std::nullopt;
  return it->second;
}

bool LooksPerHca(std::string_view id) {
  const size_t dash = id.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == id.size()) return false;
  for (char c : id.substr(dash + 1)) {
    if (c < '0' || c > '9') return false;
  }
  return id.substr(0, dash).find(':') != std::string_view::npos;
}

}  // namespace rdmadp::pool
