// What an administrator applies to use the DRA front end, generated so nobody hand-writes
// CEL: per resource served through DRA a DeviceClass that selects its devices, a claim
// template for one share, and a template pairing one GPU with one share of an HCA under the
// same PCIe root complex (matchAttribute resource.kubernetes.io/pcieRoot); and the admission
// policy that confines each node's plugin to its own node's slices of this driver. Pure.
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
  std::string claim_namespace;   // the templates' namespace ("" = none: kubectl's current)
};

// "hca_shared_devices_a" with driver D -> "hca-shared-devices-a.D".
std::string DeviceClassName(const config::ResourceConfig& resource, const std::string& driver);
// The CEL expression selecting `resource`'s devices of `driver`.
std::string ClassSelector(const config::ResourceConfig& resource, const std::string& driver);

// Why `config` cannot be rendered for `driver` (empty: it can): resource names that map to
// the same DNS label ("hca_a" and "HCA_a") would make one DeviceClass of two resources.
std::vector<std::string> ClassNameProblems(const config::Config& config, const std::string& driver);

// Why `config`'s DRA entries cannot serve their extended resource (ClassOptions::
// extended_resource), one line each naming configList[index].deviceModel: a pod's
// `limits: <name>: 1` is one device, and the drop-in gives it every HCA of the pool, as the
// device plugin's slot does; that is a perPool or slots device, not perHca's one HCA
// (`auto` is perHca on 1.36+). `indices`: the configList index of each entry (empty: 0, 1..).
std::vector<std::string> ExtendedResourceProblems(const config::Config& config,
                                                  const std::vector<size_t>& indices = {});

// DeviceClasses and ResourceClaimTemplates for every resource of `config` served through
// DRA ("frontend": "dra"), in config order; none for device-plugin entries.
std::vector<nlohmann::json> RenderDeviceClasses(const config::Config& config,
                                                const ClassOptions& options);

// The ValidatingAdmissionPolicy and its binding for `driver`: a write to a ResourceSlice by
// the plugin's service account (`service_account`, in any namespace) is admitted only for a
// slice of the node its token is bound to, and of `driver`. images/overlays/dra ships this
// for the default driver name; render prints it for another one.
std::vector<nlohmann::json> RenderAdmissionPolicy(const std::string& driver,
                                                  const std::string& service_account);

}  // namespace rdmadp::dra
