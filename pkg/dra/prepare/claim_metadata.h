// What a container given a prepared claim learns about its HCAs (docs/dra.md, "Prepare"), per
// request of the claim:
//
// - a KEP-5304 device metadata file, in the format and at the in-container paths of the
//   upstream kubelet-plugin helper (k8s.io/dynamic-resource-allocation,
//   kubeletplugin/metadata.go): written to
//   <data dir>/dra-device-metadata/<claim uid>/<request>/metadata.json and bind-mounted
//   read-only at
//   /var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claim>/<request>/<driver>-metadata.json
//   (resourceclaimtemplates/<pod claim name>/... for a claim made from a template), by a
//   CDI spec <cdi dir>/<driver>_metadata_<claim uid>_<request>.json, kind <driver>/metadata,
//   device <claim uid>_<request>. The host side is keyed by the UID alone: it always fits a
//   path component (a namespace and a name may be 63 + 253 characters), and a claim deleted
//   and re-created under its name (a new UID) never shares a file with the old one, so the
//   old one's Unprepare cannot remove what the new one's spec mounts;
// - in that same CDI device's edits, PCIDEVICE__<CLAIM>__<REQUEST> (its HCAs' PCI
//   addresses) and _INFO (the device-plugin front end's JSON), named by
//   pool::ClaimPciDeviceEnvName: never a device plugin's name, nor another request's or
//   claim's (but for a template's claim the pod calls X beside a claim named X, which the
//   plugin cannot tell apart: docs/pod-env.md). CLAIM is the pod's name for a claim made
//   from a template, the claim's own name otherwise. And, where the entries ask for them,
//   NCCL_IB_HCA / UCX_NET_DEVICES naming the usable ports of every hinted device of the
//   whole claim (one value, the same in each request's edits).
//   A claim the scheduler made for an extended resource (KEP-5004, `limits:
//   rdma/hca_shared_devices_a: 1` served by a DeviceClass with extendedResourceName) has no
//   name a pod knows (`<pod>-extended-resources-<random>`, requests `container-<i>-request-<j>`):
//   its requests' env is PCIDEVICE_<RESOURCE> and _INFO exactly as the device plugin's
//   Allocate names them for the entry (pool::PciDeviceEnvName), and its hints are the
//   request's own HCAs' (each container gets only its own requests), so a pod moved from
//   the device plugin to DRA sees no difference. A container gets one request per
//   resource, so no two of its requests share a name.
//
// The metadata CDI ID joins the first device of each request in the Prepare answer, as the
// upstream helper does. Prepare writes the files every time (a replayed Prepare after a
// reboot recreates them); Unprepare removes them. Every step below the data directory goes
// through directory file descriptors and never follows a symlink: whatever else is found
// where a directory or file of ours belongs (a symlink, a file in place of a directory) is
// removed as itself, so nothing planted there redirects a write or a removal.
//
// Threads: the DraServer's workers (file-system calls only).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/dra/prepare/prepare_claim.h"

namespace rdmadp::dra {

struct ClaimRef {
  std::string namespace_;
  std::string name;
  std::string uid;
  // The pod's name for the claim (annotation resource.kubernetes.io/pod-claim-name on a
  // claim made from a template); nullopt for a claim the pod names directly.
  std::optional<std::string> pod_claim_name;
  // The scheduler made this claim for a pod's extended-resource request (KEP-5004:
  // annotation resource.kubernetes.io/extended-resource-claim "true"): the pod names no
  // claim, so its containers' env is named as the device plugin names it.
  bool extended_resource = false;
};

// The claim's identity as the API server returned it. Names that could not be paths
// (not DNS subdomains / labels, a UID with other than letters, digits and '-' or longer than
// 64 characters) are an error naming the field.
absl::StatusOr<ClaimRef> ReadClaimRef(const nlohmann::json& claim);

struct MetadataDirs {
  std::string driver;
  std::string data_dir;  // <kubelet plugins dir>/<driver>
  std::string cdi_dir;
};

inline constexpr std::string_view kMetadataContainerDir =
    "/var/run/kubernetes.io/dra-device-attributes";

// kube-apiserver stores at most this many results in a claim's allocation
// (AllocationResultsMaxSize, k8s.io/kubernetes pkg/apis/resource/types.go). Each request of
// ours is a file and a CDI spec: a claim answered with more is not a claim the API server
// stored, and is refused rather than written out (2,000 results were 2,000 spec files).
inline constexpr size_t kMaxAllocationResults = 32;

// Pure: the metadata stream for one request (one metadata.resource.k8s.io/v1alpha1
// DeviceMetadata object and a newline).
std::string MetadataFile(const ClaimRef& claim, std::string_view driver,
                         std::string_view request_ref, const std::vector<PreparedDevice>& devices);
// Pure: the env of one request's CDI device (see above), by name. When _INFO is left out
// (over pool::kMaxInfoBytes) and `info_left_out` is given, it is set to one line saying so
// that names the claim, the request, the variable and the size, for the caller to log (as
// the device plugin's pool::PodEnv does); else it is cleared.
std::map<std::string, std::string> RequestEnv(const ClaimRef& claim, std::string_view request,
                                              const std::vector<PreparedDevice>& request_devices,
                                              const std::vector<PreparedDevice>& claim_devices,
                                              std::string* info_left_out = nullptr);
// In-container path of one request's metadata file.
std::string MetadataContainerPath(const ClaimRef& claim, std::string_view driver,
                                  std::string_view request);

// Writes every request's file and spec and adds the metadata CDI IDs to `devices`. More
// than kMaxAllocationResults devices, a UID or request name that could not be a path
// component, is an error before anything is written. `dirs.data_dir` must exist.
absl::Status WriteClaimMetadata(const MetadataDirs& dirs, const ClaimRef& claim,
                                std::vector<PreparedDevice>& devices);
// Removes what WriteClaimMetadata wrote for the claim with this UID, and nothing of another
// UID; nothing there is fine. `namespace_` and `name` name the claim in errors, and find a
// directory of the layout before UID keying (<namespace>_<name>), removed only when every
// metadata file in it names this UID.
// The claims whose metadata Prepare wrote under `dirs.data_dir` and no Unprepare removed:
// namespace, name and UID as each claim's metadata.json says (a directory whose files do not
// name its UID is skipped), at most `max`. A restarted driver learns from it which claims
// it prepared before.
struct PreparedClaimRef {
  std::string namespace_;
  std::string name;
  std::string uid;
};
std::vector<PreparedClaimRef> ListPreparedClaims(const MetadataDirs& dirs, size_t max);

absl::Status RemoveClaimMetadata(const MetadataDirs& dirs, const std::string& namespace_,
                                 const std::string& name, const std::string& uid);

}  // namespace rdmadp::dra
