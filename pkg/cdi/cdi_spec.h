// CDI (Container Device Interface) naming and spec content for one pool. Pure.
//
// One spec per resource: kind `<vendor>/<class>` from the resource name (`rdma/hca_a`), one
// CDI device per pool HCA named by its PCI address, each listing that HCA's char devices plus
// /dev/infiniband/rdma_cm (runtimes de-duplicate nodes by path). A container allocated a slot
// gets every HCA of the pool, as in DeviceSpec mode. The spec-wide containerEdits carry the
// pool's env (pool/pod_env.h), so CDI consumers that read only the spec see it too; not for
// perHca, where the Allocate answer names the container's own HCAs.
#pragma once

#include <string>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/pool/snapshot.h"

namespace rdmadp::cdi {

inline constexpr std::string_view kCdiVersion = "0.5.0";
inline constexpr std::string_view kAnnotationPrefix = "cdi.k8s.io/";

// `<resourcePrefix>/<resourceName>`, verbatim: no mapping, so two resources can never share
// a kind. KindProblems() says whether every released CDI library accepts it.
std::string Kind(const config::ResourceConfig& resource);

// CDI mode: one line per resource whose kind a released CDI library would reject or crash
// on (cdi-consumers.md: a one-character vendor or class panics every release up to v1.1.0,
// taking down every CDI request on the node), naming the field; empty when all are fine.
// Kinds are verbatim and (prefix, name) pairs unique, so kinds are unique by construction.
std::vector<std::string> KindProblems(const config::Config& config,
                                      const std::vector<size_t>& indices = {});

// File name of the resource's spec: `k8s-rdma-shared-dp_<prefix>_<name>.json`.
std::string SpecFileName(const config::ResourceConfig& resource);

// `cdi.k8s.io/rdmadp_<prefix>_<name>`: one key per resource (prefix included, so two
// resources with one name and two prefixes differ), so two pools in one container do not
// collide. The name part is kept within the 63 characters Kubernetes allows (hash suffix).
std::string AnnotationKey(const config::ResourceConfig& resource);

// The spec document (JSON, which every CDI reader accepts). `memlock_hook`: where the
// memlock hook is installed on the host ("" = not installed); a pool with `memlock` then gets
// it in the spec-wide containerEdits (MemlockHook).
std::string SpecJson(const pool::PoolSnapshot& snapshot, std::string_view memlock_hook = "");

// The createRuntime hook that sets RLIMIT_MEMLOCK to `bytes` (config::kMemlockUnlimited) in
// every container given a device of the spec (cmd/rdmadp-memlock-hook), as a CDI hook
// object: {"hookName": "createRuntime", "path": <hook>, "args": [<name>, <limit>]}.
std::string MemlockHookJson(std::string_view hook_path, uint64_t bytes);

// Empty when `name` is a CDI vendor (letters, digits, '_', '-', '.') or class (no '.') name
// that every released library accepts, else why not.
std::string VendorProblem(std::string_view name);
std::string ClassProblem(std::string_view name);
// Empty when `name` is a valid CDI device name, else why not.
std::string DeviceNameProblem(std::string_view name);

}  // namespace rdmadp::cdi
