// Encoding and decoding of the NETLINK_RDMA resource-tracking dumps: the device list and,
// per device, its queue pairs or device contexts with their owners (what `rdma resource
// show qp|ctx` prints; docs/observability.md, "Sources"). Read from the kernel's
// drivers/infiniband/core/nldev.c (nldev_get_dumpit, res_get_common_dumpit,
// fill_res_qp_entry, fill_res_ctx_entry, fill_res_name_pid) and the uapi rdma_netlink.h:
//  - a dump covers one device, named by DEV_INDEX; the device list is a GET dump;
//  - every reply message repeats the device's index and name, then a table attribute
//    (RES_QP, RES_CTX) of entry attributes; neither carries NLA_F_NESTED; one device's
//    entries may span several messages; a device with nothing to list answers NLMSG_DONE
//    alone;
//  - an error found during a dump is a negative value in NLMSG_DONE; a request refused
//    before it (an unknown command on an older kernel: EINVAL) is NLMSG_ERROR;
//  - an entry's owner is RES_PID (as the reader's PID namespace numbers it; absent when
//    that namespace cannot see the owner) or, for a kernel object, RES_KERN_NAME.
// Attributes are read by type, never by position (their order changed across kernels).
// Pure: bytes in, values out; no sockets. Not thread-safe (one decoder per dump).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"

struct nlmsghdr;  // <linux/netlink.h>

namespace rdmadp::netlink {

enum class ResDump { kDevices, kQueuePairs, kContexts };

// A dump request (NLM_F_REQUEST | NLM_F_DUMP): the device list, or one device's objects.
std::vector<uint8_t> EncodeResDumpRequest(ResDump dump, uint32_t dev_index, uint32_t seq);

struct RdmaDeviceEntry {
  uint32_t index = 0;
  std::string name;
  bool operator==(const RdmaDeviceEntry&) const = default;
};

// One queue pair or device context.
struct RdmaResEntry {
  uint32_t dev_index = 0;
  std::string dev_name;
  uint32_t number = 0;              // the QP number (LQPN) or the context number (CTXN)
  std::optional<uint32_t> pid;      // a user object's owner, when the reader can see it
  std::string kern_name;            // a kernel object's owner ("" for a user object)
  std::optional<uint32_t> port;     // QP: once bound to a port
  std::optional<uint8_t> qp_type;   // QP: 2 RC, 3 UC, 4 UD, 1 GSI, ...
  std::optional<uint8_t> qp_state;  // QP: 0 RESET .. 3 RTS .. 6 ERR
  bool operator==(const RdmaResEntry&) const = default;
};

// Collects one dump's answer, datagram by datagram, as the socket delivers them.
class ResDumpDecoder {
 public:
  // `max_entries`: more entries (or devices) than this is an error, not more memory.
  ResDumpDecoder(ResDump dump, uint32_t seq, size_t max_entries);

  // One received datagram (one or more netlink messages). An error ends the dump: a
  // message that does not parse (named), another sequence number, more than max_entries,
  // or the kernel's own error (NLMSG_ERROR, or NLMSG_DONE's negative value: ErrnoOf()
  // gives the errno).
  absl::Status Feed(std::span<const uint8_t> datagram);
  bool done() const { return done_; }
  const std::vector<RdmaDeviceEntry>& devices() const { return devices_; }
  const std::vector<RdmaResEntry>& entries() const { return entries_; }

 private:
  absl::Status Message(const ::nlmsghdr* hdr);

  const ResDump dump_;
  const uint32_t seq_;
  const size_t max_entries_;
  bool done_ = false;
  std::vector<RdmaDeviceEntry> devices_;
  std::vector<RdmaResEntry> entries_;
};

// The largest datagram Feed() reads whole (the kernel's dump messages fill at most 32 KiB).
inline constexpr size_t kMaxResDatagram = size_t{64} * 1024;

}  // namespace rdmadp::netlink
