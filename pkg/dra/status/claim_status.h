// What the DRA driver reports of a claim it prepared, in ResourceClaim.status.devices
// (KEP-4817, feature gate DRAResourceClaimDeviceStatus: beta and on from 1.33, GA from 1.37):
// one entry per device of ours the claim was allocated (driver, pool, device, and the
// allocation's shareID where it has one) with a Ready condition, and networkData for a
// device of one HCA with a netdev: the netdev's name, its addresses in canonical CIDR form
// and its hardware address. An HCA without a netdev (InfiniBand without IPoIB), and a
// device that spans several HCAs (a pool's slot or whole-pool device), get the condition
// only; its message names every HCA, its RDMA device and netdev.
//
// Written by server-side apply with the driver's name as field manager (status_writer.h
// does the I/O), so the entries are ours alone and the claim's other fields untouched.
// Every value here passes kube-apiserver's ValidateResourceClaimStatusUpdate (the fake API
// server ports it: test/manifests/claim_status_validation.mjs).
//
// Threads: pure; any thread.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/dra/view/dra_view.h"

namespace rdmadp::dra {

// A claim Prepare answered with devices of ours.
struct PreparedClaim {
  std::string namespace_;
  std::string name;
  std::string uid;
  struct Device {
    std::string pool;
    std::string device;
    std::string share_id;  // "" for a device allocated whole
    bool operator==(const Device&) const = default;
  };
  std::vector<Device> devices;
  // Our entries as the claim Prepare read held them (a restart of ours finds what it wrote
  // before, and writes nothing when it still holds).
  nlohmann::json reported = nlohmann::json::array();
};

// A netdev's addresses in canonical CIDR form, by netdev name (interface_addresses.h).
using InterfaceAddresses = std::map<std::string, std::vector<std::string>>;

// API limits (pkg/apis/resource/types.go): what a status entry may hold.
inline constexpr size_t kMaxNetworkIps = 16;          // NetworkDeviceDataMaxIPs
inline constexpr size_t kMaxConditionMessage = 1024;  // ours; the API allows 32768
inline constexpr std::string_view kReadyCondition = "Ready";

// The entries of `claim`'s devices as the view serves them now, every condition without its
// lastTransitionTime (StampTransitions sets it). A device no longer in the view is reported
// not ready: reason NotPublished.
nlohmann::json DeviceStatusEntries(const PreparedClaim& claim, const DraView& view,
                                   const InterfaceAddresses& addresses);

// Sets each condition's lastTransitionTime: the one of the same condition in `previous`
// (entries as last written) when its status is the same, else `now` (RFC 3339, seconds).
void StampTransitions(nlohmann::json& entries, const nlohmann::json& previous,
                      std::string_view now);

// Whether `a` and `b` say the same, lastTransitionTime aside.
bool SameReport(const nlohmann::json& a, const nlohmann::json& b);

// The server-side apply body: the claim named with its UID (kube-apiserver refuses an
// apply whose UID is not the stored claim's: one re-created under the same name is never
// written) and status.devices = `entries`.
nlohmann::json ClaimStatusApply(const PreparedClaim& claim, const nlohmann::json& entries);

// The request path of that apply for `driver` (field manager; force: our entries are ours
// whoever touched them).
std::string ClaimStatusPath(const PreparedClaim& claim, std::string_view driver);

// `driver`'s entries in `claim` (a ResourceClaim as the API server returns it) for the
// devices of `devices`: what Prepare read, or what the server kept of an apply.
nlohmann::json ReportedEntries(const nlohmann::json& claim, std::string_view driver,
                               const std::vector<PreparedClaim::Device>& devices);

// "2026-12-07T10:00:00Z": metav1.Time's form.
std::string RfcTime(std::chrono::system_clock::time_point t);

}  // namespace rdmadp::dra
