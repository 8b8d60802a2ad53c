#include "pkg/netlink/rdma_res_codec.h"

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <rdma/rdma_netlink.h>

#include <cstring>

#include "pkg/netlink/nl_socket.h"
#include "pkg/netlink/rdma_netns_codec.h"
#include "pkg/text/cat.h"

namespace rdmadp::netlink {
namespace {

int CommandOf(ResDump dump) {
  switch (dump) {
    case ResDump::kDevices:
      return RDMA_NLDEV_CMD_GET;
    case ResDump::kQueuePairs:
      return RDMA_NLDEV_CMD_RES_QP_GET;
    case ResDump::kContexts:
      return RDMA_NLDEV_CMD_RES_CTX_GET;
  }
  return RDMA_NLDEV_CMD_GET;
}

int TypeOf(ResDump dump) { return RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, CommandOf(dump)); }

// What each attribute this decoder reads must be, so that libnl checks its length before
// we read it (a u32 shorter than 4 bytes, a string without its NUL, is malformed).
struct Policy {
  nla_policy table[RDMA_NLDEV_ATTR_MAX] = {};
  Policy() {
    table[RDMA_NLDEV_ATTR_DEV_INDEX].type = NLA_U32;
    table[RDMA_NLDEV_ATTR_DEV_NAME].type = NLA_STRING;
    table[RDMA_NLDEV_ATTR_PORT_INDEX].type = NLA_U32;
    table[RDMA_NLDEV_ATTR_RES_LQPN].type = NLA_U32;
    table[RDMA_NLDEV_ATTR_RES_TYPE].type = NLA_U8;
    table[RDMA_NLDEV_ATTR_RES_STATE].type = NLA_U8;
    table[RDMA_NLDEV_ATTR_RES_PID].type = NLA_U32;
    table[RDMA_NLDEV_ATTR_RES_KERN_NAME].type = NLA_STRING;
    table[RDMA_NLDEV_ATTR_RES_CTXN].type = NLA_U32;
  }
};
const Policy& ThePolicy() {
  static const Policy kPolicy;
  return kPolicy;
}
constexpr int kMaxAttr = RDMA_NLDEV_ATTR_MAX - 1;

using Attrs = nlattr* [RDMA_NLDEV_ATTR_MAX];

}  // namespace

std::vector<uint8_t> EncodeResDumpRequest(ResDump dump, uint32_t dev_index, uint32_t seq) {
  NlMsg msg(nlmsg_alloc_simple(TypeOf(dump), NLM_F_REQUEST | NLM_F_DUMP));
  if (dump != ResDump::kDevices) nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
  nlmsghdr* hdr = nlmsg_hdr(msg.get());
  hdr->nlmsg_seq = seq;
  const auto* begin = reinterpret_cast<const uint8_t*>(hdr);
  return {begin, begin + hdr->nlmsg_len};
}

ResDumpDecoder::ResDumpDecoder(ResDump dump, uint32_t seq, size_t max_entries)
    : dump_(dump), seq_(seq), max_entries_(max_entries) {}

absl::Status ResDumpDecoder::Feed(std::span<const uint8_t> datagram) {
  if (done_) return absl::FailedPreconditionError("the dump has ended");
  if (datagram.size() > kMaxResDatagram) {
    return absl::DataLossError(Cat("netlink datagram of ", datagram.size(), " bytes"));
  }
  // libnl reads headers and attributes in place: an aligned copy.
  std::vector<uint64_t> aligned((datagram.size() + 7) / 8);
  std::memcpy(aligned.data(), datagram.data(), datagram.size());
  auto* hdr = reinterpret_cast<nlmsghdr*>(aligned.data());
  int remaining = static_cast<int>(datagram.size());
  if (!nlmsg_ok(hdr, remaining)) {
    return absl::DataLossError(
        Cat("netlink datagram of ", datagram.size(), " bytes holds no whole message"));
  }
  for (; nlmsg_ok(hdr, remaining); hdr = nlmsg_next(hdr, &remaining)) {
    if (absl::Status s = Message(hdr); !s.ok()) return s;
    if (done_) return absl::OkStatus();
  }
  if (remaining != 0) {
    return absl::DataLossError(Cat(remaining, " bytes after the last whole netlink message"));
  }
  return absl::OkStatus();
}

absl::Status ResDumpDecoder::Message(const ::nlmsghdr* hdr) {
  if (hdr->nlmsg_seq != seq_) {
    return absl::DataLossError(
        Cat("netlink message of sequence ", hdr->nlmsg_seq, ", not the dump's ", seq_));
  }
  if (hdr->nlmsg_type == NLMSG_ERROR || hdr->nlmsg_type == NLMSG_DONE) {
    // NLMSG_ERROR: struct nlmsgerr; NLMSG_DONE: an int, both starting with the value.
    if (hdr->nlmsg_len < NLMSG_LENGTH(sizeof(int))) {
      return absl::DataLossError("truncated netlink error or end message");
    }
    int value = 0;
    std::memcpy(&value, nlmsg_data(hdr), sizeof(value));
    if (hdr->nlmsg_type == NLMSG_DONE) done_ = true;
    if (value < 0) return KernelErrorStatus(value);
    return absl::OkStatus();  // an end, or an acknowledgement (NLMSG_ERROR with 0)
  }
  if (hdr->nlmsg_type != TypeOf(dump_)) {
    return absl::DataLossError(Cat("unexpected netlink message type ", hdr->nlmsg_type));
  }
  // The kernel's header is const here; libnl's parser only reads it.
  auto* msg = const_cast<nlmsghdr*>(hdr);
  Attrs top = {};
  auto* policy = const_cast<nla_policy*>(ThePolicy().table);
  if (int rc = nlmsg_parse(msg, 0, top, kMaxAttr, policy); rc < 0) {
    return absl::DataLossError(Cat("malformed netlink attributes: ", nl_geterror(rc)));
  }
  if (top[RDMA_NLDEV_ATTR_DEV_INDEX] == nullptr || top[RDMA_NLDEV_ATTR_DEV_NAME] == nullptr) {
    return absl::DataLossError("a dump message without its device's index and name");
  }
  const uint32_t dev_index = nla_get_u32(top[RDMA_NLDEV_ATTR_DEV_INDEX]);
  const std::string dev_name = nla_get_string(top[RDMA_NLDEV_ATTR_DEV_NAME]);
  auto over = [&] {
    return absl::ResourceExhaustedError(Cat("more than ", max_entries_, " entries in one dump"));
  };
  if (dump_ == ResDump::kDevices) {
    if (devices_.size() == max_entries_) return over();
    devices_.push_back({dev_index, dev_name});
    return absl::OkStatus();
  }
  const bool qp = dump_ == ResDump::kQueuePairs;
  nlattr* table = top[qp ? RDMA_NLDEV_ATTR_RES_QP : RDMA_NLDEV_ATTR_RES_CTX];
  if (table == nullptr) return absl::OkStatus();  // every entry filtered out
  const int entry_type = qp ? RDMA_NLDEV_ATTR_RES_QP_ENTRY : RDMA_NLDEV_ATTR_RES_CTX_ENTRY;
  nlattr* entry = nullptr;
  int rem = 0;
  nla_for_each_nested(entry, table, rem) {
    if (nla_type(entry) != entry_type) continue;
    Attrs a = {};
    if (int rc = nla_parse_nested(a, kMaxAttr, entry, policy); rc < 0) {
      return absl::DataLossError(
          Cat("malformed entry of device ", dev_name, ": ", nl_geterror(rc)));
    }
    const int number_attr = qp ? RDMA_NLDEV_ATTR_RES_LQPN : RDMA_NLDEV_ATTR_RES_CTXN;
    // A kernel-owned context is an empty entry (fill_res_ctx_entry adds nothing for it).
    if (a[number_attr] == nullptr) continue;
    if (entries_.size() == max_entries_) return over();
    RdmaResEntry e;
    e.dev_index = dev_index;
    e.dev_name = dev_name;
    e.number = nla_get_u32(a[number_attr]);
    if (a[RDMA_NLDEV_ATTR_RES_PID]) e.pid = nla_get_u32(a[RDMA_NLDEV_ATTR_RES_PID]);
    if (a[RDMA_NLDEV_ATTR_RES_KERN_NAME]) {
      e.kern_name = nla_get_string(a[RDMA_NLDEV_ATTR_RES_KERN_NAME]);
    }
    if (a[RDMA_NLDEV_ATTR_PORT_INDEX]) e.port = nla_get_u32(a[RDMA_NLDEV_ATTR_PORT_INDEX]);
    if (a[RDMA_NLDEV_ATTR_RES_TYPE]) e.qp_type = nla_get_u8(a[RDMA_NLDEV_ATTR_RES_TYPE]);
    if (a[RDMA_NLDEV_ATTR_RES_STATE]) e.qp_state = nla_get_u8(a[RDMA_NLDEV_ATTR_RES_STATE]);
    entries_.push_back(std::move(e));
  }
  return absl::OkStatus();
}

}  // namespace rdmadp::netlink
