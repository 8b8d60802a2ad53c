// CDI (Container Device Interface) naming and spec content for one pool. Pure.
//
// One spec per resource: kind `<vendor>/<class>` from the resource name (`rdma/hca_a`), one
// CDI device per pool HCA named by its PCI address, each listing that HCA's char devices plus
// /dev/infiniband/rdma_cm (runtimes de-duplicate nodes by path). A container allocated a slot
// gets every HCA of the pool, as in DeviceSpec mode.
#pragma once

#include <string>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/pool/snapshot.h"

namespace rdmadp::cdi {

inline constexpr std::string_view kCdiVersion = "0.5.0";
inline constexpr std::string_view kAnnotationPrefix = "cdi.k8s.io/";

// `rdma/hca_shared_devices_a`; characters CDI does not allow become '-', and a vendor or
// class not starting with a letter gets an "r" in front.
std::string Kind(const config::ResourceConfig& resource);

// File name of the resource's spec: `k8s-rdma-shared-dp_<prefix>_<name>.json`.
std::string SpecFileName(const config::ResourceConfig& resource);

// `cdi.k8s.io/rdmadp_<name>`: one key per resource, so two pools in one container do not
// collide. The name part is kept within the 63 characters Kubernetes allows (hash suffix).
std::string AnnotationKey(const config::ResourceConfig& resource);

// The spec document (JSON, which every CDI reader accepts).
std::string SpecJson(const pool::PoolSnapshot& snapshot);

// Empty when `name` is a valid CDI vendor or class name, else why not.
std::string VendorOrClassProblem(std::string_view name);
// Empty when `name` is a valid CDI device name, else why not.
std::string DeviceNameProblem(std::string_view name);

}  // namespace rdmadp::cdi
