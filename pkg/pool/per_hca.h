// deviceModel "perHca" in the device-plugin front end (docs/per-hca-devices.md): every HCA
// of the pool is advertised as its own rdmaHcaMax devices, each carrying the NUMA node of
// its HCA, so the kubelet's Topology Manager can align them, and a container gets exactly
// the HCAs of the IDs it was given.
//
// A device ID is the HCA's PCI address and the share's index, "0000:3b:00.0-7": stable
// across restarts, rescans and reorderings of the node's HCAs (no counter, no scan order),
// and never one of the slots model's IDs ("0".."N-1"), so the kubelet's checkpoint tells the
// two models apart. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/pool/pool_model.h"

namespace rdmadp::pool {

// "<address>-<share>".
std::string PerHcaDeviceId(std::string_view address, int64_t share);

// The HCA (its index in `hcas`) that `id` names, if `id` is exactly one we advertise with
// `shares` each: an address of `hcas` and a share index written as we write it.
class PerHcaIds {
 public:
  PerHcaIds(const std::vector<PoolHca>& hcas, int64_t shares);
  std::optional<size_t> HcaOf(std::string_view id) const;
  int64_t shares() const { return shares_; }

 private:
  std::map<std::string, size_t, std::less<>> by_address_;
  int64_t shares_ = 0;
};

// Whether `id` has the perHca form (an address, '-', digits), whatever node it names: the
// kubelet's checkpoint read at a model switch (deviceplugin/allocated_ids.h).
bool LooksPerHca(std::string_view id);

}  // namespace rdmadp::pool
