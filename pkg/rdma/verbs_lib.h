// libibverbs, loaded with dlopen() on first use, and only on a node whose kernel has
// user-space verbs devices (/sys/class/infiniband_verbs/uverbs*). Loading it maps
// libibverbs, its libnl-route and a provider per device family: memory a node without
// RDMA hardware (and every fake-node test) has no use for. On an RDMA node it loads as
// soon as a pool has an HCA.
//
// Threads: Get() is safe from any thread (loads once); VerbsEvents calls it on the loop.
#pragma once

#include <infiniband/verbs.h>

#include <string>

namespace rdmadp::rdma {

struct VerbsLib {
  // Declared as in <infiniband/verbs.h>; resolved by name.
  ibv_device** (*get_device_list)(int* num_devices) = nullptr;
  decltype(&ibv_free_device_list) free_device_list = nullptr;
  decltype(&ibv_get_device_name) get_device_name = nullptr;
  decltype(&ibv_open_device) open_device = nullptr;
  decltype(&ibv_close_device) close_device = nullptr;
  decltype(&ibv_get_async_event) get_async_event = nullptr;
  decltype(&ibv_ack_async_event) ack_async_event = nullptr;
  decltype(&ibv_event_type_str) event_type_str = nullptr;

  // The loaded library; nullptr when the node has no uverbs device (yet: asked again on the
  // next call, since the RDMA driver may load after the plugin starts) or the library
  // cannot be loaded (for good; `why`, if given, gets one line saying which).
  static const VerbsLib* Get(std::string* why = nullptr);
};

// Whether `sysfs_class_dir` (normally /sys/class/infiniband_verbs) lists a uverbs device.
bool HasUverbsDevices(const std::string& sysfs_class_dir);

}  // namespace rdmadp::rdma
