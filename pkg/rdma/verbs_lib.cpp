#include "pkg/rdma/verbs_lib.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "pkg/dl/resolve.h"
#include "pkg/fd/files.h"

namespace rdmadp::rdma {
namespace {

struct Loaded {
  const VerbsLib* lib = nullptr;
  std::string why;
  bool final = true;  // false: no device yet, so ask again later (a driver loaded late)
};

Loaded Load() {
  // libibverbs reads the real sysfs (or $SYSFS_PATH), whatever --sysfs-root says.
  const char* sysfs = std::getenv("SYSFS_PATH");
  const std::string dir =
      std::string(sysfs != nullptr ? sysfs : "/sys") + "/class/infiniband_verbs";
  if (!HasUverbsDevices(dir)) return {nullptr, "no uverbs device in " + dir, false};
  // Never closed: the contexts it opens live until the process ends or Track() closes them.
  void* handle = ::dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return {nullptr, std::string("libibverbs.so.1 cannot be loaded: ") + ::dlerror() +
                         " (install libibverbs1 / rdma-core)"};
  }
  static VerbsLib verbs;
  const bool ok = dl::Resolve(handle, "ibv_get_device_list", verbs.get_device_list) &&
                  dl::Resolve(handle, "ibv_free_device_list", verbs.free_device_list) &&
                  dl::Resolve(handle, "ibv_get_device_name", verbs.get_device_name) &&
                  dl::Resolve(handle, "ibv_open_device", verbs.open_device) &&
                  dl::Resolve(handle, "ibv_close_device", verbs.close_device) &&
                  dl::Resolve(handle, "ibv_get_async_event", verbs.get_async_event) &&
                  dl::Resolve(handle, "ibv_ack_async_event", verbs.ack_async_event) &&
                  dl::Resolve(handle, "ibv_event_type_str", verbs.event_type_str);
  if (!ok) return {nullptr, std::string("libibverbs.so.1 lacks a symbol: ") + ::dlerror()};
  return {&verbs, ""};
}

}  // namespace

bool HasUverbsDevices(const std::string& sysfs_class_dir) {
  for (const std::string& name : fd::ListDir(sysfs_class_dir)) {
    if (name.starts_with("uverbs")) return true;
  }
  return false;
}

const VerbsLib* VerbsLib::Get(std::string* why) {
  static std::mutex mu;
  static Loaded loaded{nullptr, "", false};
  std::lock_guard lock(mu);
  if (!loaded.final) loaded = Load();
  if (why != nullptr) *why = loaded.why;
  return loaded.lib;
}

}  // namespace rdmadp::rdma
