// What an administrator applies to use the DRA front end, generated so nobody hand-writes
// CEL: per configured resource a DeviceClass that selects its devices, a claim template
// for one share, and a template pairing one GPU with one share of an HCA under the same
// PCIe root complex (matchAttribute resource.kubernetes.io/pcieRoot). Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pkg/config/config.h"

namespace rdmadp::dra {

struct ClassOptions {
  std::string driver;  // the DRA driver name the slices carry
  // Also serve unchanged pods asking for `limits: <prefix>/<name>: 1` (KEP-5004): the class
  // names the extended resource. The device plugin must then not serve that name.
  bool extended_resource = false;
  std::string gpu_device_class;  // "" = no GPU pairing template
};

// "hca_shared_devices_a" with driver D -> "hca-shared-devices-a.D".
std::string DeviceClassName(const config::ResourceConfig& resource, const std::string& driver);
// The CEL expression selecting `resource`'s devices of `driver`.
std::string ClassSelector(const config::ResourceConfig& resource, const std::string& driver);

// Why `config` cannot be rendered for `driver` (empty: it can): resource names that map to
// the same DNS label ("hca_a" and "HCA_a") would make one DeviceClass of two resources.
std::vector<std::string> ClassNameProblems(const config::Config& config, const std::string& driver);

// DeviceClasses and ResourceClaimTemplates for every resource of `config`, in config order.
std::vector<nlohmann::json> RenderDeviceClasses(const config::Config& config,
                                                const ClassOptions& options);

}  // namespace rdmadp::dra
