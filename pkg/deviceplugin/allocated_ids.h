// Which device IDs of a resource the kubelet holds allocated, read from its device-manager
// checkpoint (<kubelet root>/device-plugins/kubelet_internal_checkpoint; the kubelet's
// pkg/kubelet/cm/devicemanager/checkpoint/checkpoint.go): {"Data": {"PodDeviceEntries":
// [{"PodUID", "ContainerName", "ResourceName", "DeviceIDs", "AllocResp"}],
// "RegisteredDevices": {...}}, "Checksum": N}. DeviceIDs is an object of NUMA node -> IDs
// since 1.20, a plain array before. The kubelet drops the entries of pods that are gone when
// it next writes the file (an allocation, a device list update), so the list can name pods
// that ended since: the front end asks the pod-resources API which still run, where it can.
//
// Read when an entry's deviceModel is switched on a reload (front_end.cpp): the IDs the
// kubelet holds would change meaning. Pure parsing, one file read; no thread of its own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rdmadp::deviceplugin {

inline constexpr std::string_view kKubeletCheckpointFile = "kubelet_internal_checkpoint";
// A checkpoint holds one entry per container and resource, each with its Allocate answer
// (AllocResp: a pool's _INFO can take 100 KiB of it): 64 MiB is ~600 such containers. A
// larger file is not read, and the switch it would decide is refused, saying so.
inline constexpr size_t kMaxCheckpointBytes = size_t{64} << 20;

struct AllocatedIds {
  std::vector<std::string> ids;       // every ID the checkpoint holds for the resource, in order
  std::vector<std::string> pod_uids;  // the pods holding them, first appearance order
};

// The checkpoint's allocations of `resource` (the full name, "rdma/hca_a"). An error names
// what is wrong with the text.
absl::StatusOr<AllocatedIds> ParseCheckpointAllocations(std::string_view text,
                                                        std::string_view resource);

// Reads `path`: a missing file is no allocation (a kubelet that never allocated, or a test
// node); another failure is an error naming the path.
absl::StatusOr<AllocatedIds> ReadCheckpointAllocations(const std::string& path,
                                                       std::string_view resource);

}  // namespace rdmadp::deviceplugin
