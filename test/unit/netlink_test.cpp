#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <iostream>

#include "pkg/fd/unique_fd.h"
#include "pkg/netlink/kernel_events.h"
#include "pkg/netlink/link_up.h"
#include "pkg/netlink/nl_socket.h"
#include "pkg/netlink/rdma_netns.h"
#include "pkg/netlink/rdma_netns_codec.h"
#include "pkg/netlink/rdma_res.h"
#include "pkg/netlink/rdma_res_codec.h"

namespace rdmadp::netlink {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint16_t kSysGet = (5 << 10) + 6;

// A kernel-shaped reply: header, then optional attribute (type, u8 value), 4-byte aligned.
std::vector<uint8_t> Reply(uint16_t type, std::optional<std::pair<uint16_t, uint8_t>> attr) {
  std::vector<uint8_t> out(attr ? 24 : 16, 0);
  if (attr) {  // nlattr {len 5, type}, u8 value, padding
    out[16] = 5;
    out[18] = static_cast<uint8_t>(attr->first & 0xff);
    out[19] = static_cast<uint8_t>(attr->first >> 8);
    out[20] = attr->second;
  }
  auto* hdr = reinterpret_cast<nlmsghdr*>(out.data());
  hdr->nlmsg_len = static_cast<uint32_t>(out.size());
  hdr->nlmsg_type = type;
  hdr->nlmsg_seq = 1;
  return out;
}

std::vector<uint8_t> ErrorReply(int err) {
  std::vector<uint8_t> out(NLMSG_LENGTH(sizeof(nlmsgerr)), 0);
  auto* hdr = reinterpret_cast<nlmsghdr*>(out.data());
  hdr->nlmsg_len = static_cast<uint32_t>(out.size());
  hdr->nlmsg_type = NLMSG_ERROR;
  reinterpret_cast<nlmsgerr*>(NLMSG_DATA(hdr))->error = -err;
  return out;
}

TEST(RdmaNetnsCodec, EncodesSysGetRequest) {
  const auto bytes = EncodeSysGetRequest(42);
  ASSERT_EQ(bytes.size(), 16u);
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(bytes.data());
  EXPECT_EQ(hdr->nlmsg_len, 16u);
  EXPECT_EQ(hdr->nlmsg_type, 5126);
  EXPECT_EQ(hdr->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(hdr->nlmsg_seq, 42u);
}

TEST(RdmaNetnsCodec, DecodesModes) {
  EXPECT_EQ(*DecodeSysGetReply(Reply(kSysGet, std::pair<uint16_t, uint8_t>{66, 0})),
            NetnsMode::kExclusive);
  EXPECT_EQ(*DecodeSysGetReply(Reply(kSysGet, std::pair<uint16_t, uint8_t>{66, 1})),
            NetnsMode::kShared);
  EXPECT_EQ(*DecodeSysGetReply(Reply(kSysGet, std::pair<uint16_t, uint8_t>{66, 9})),
            NetnsMode::kUnknown);
  EXPECT_EQ(NetnsModeName(NetnsMode::kShared), "shared");
}

TEST(RdmaNetnsCodec, IgnoresOtherAttributes) {
  auto other = Reply(kSysGet, std::pair<uint16_t, uint8_t>{67, 1});
  auto r = DecodeSysGetReply(other);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("no netns mode attribute"));
}

TEST(RdmaNetnsCodec, KernelErrorsKeepTheirErrno) {
  auto r = DecodeSysGetReply(ErrorReply(EINVAL));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ErrnoOf(r.status()), EINVAL);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Invalid argument"));
  EXPECT_EQ(ErrnoOf(DecodeSysGetReply(ErrorReply(EPERM)).status()), EPERM);
}

// UBSan found `-err->error` overflowing for INT_MIN: an out-of-range code is EPROTO.
TEST(RdmaNetnsCodec, OutOfRangeErrorCodesAreProtocolErrors) {
  for (int raw : {INT_MIN, -5000, 7}) {
    std::vector<uint8_t> reply = ErrorReply(0);
    reinterpret_cast<nlmsgerr*>(NLMSG_DATA(reinterpret_cast<nlmsghdr*>(reply.data())))->error = raw;
    EXPECT_EQ(ErrnoOf(DecodeSysGetReply(reply).status()), EPROTO) << raw;
  }
}

TEST(RdmaNetnsCodec, RejectsMalformedReplies) {
  EXPECT_FALSE(DecodeSysGetReply(std::vector<uint8_t>(8, 0)).ok());
  auto wrong_type = Reply(16, std::pair<uint16_t, uint8_t>{66, 1});
  EXPECT_THAT(std::string(DecodeSysGetReply(wrong_type).status().message()),
              HasSubstr("unexpected netlink message type 16"));
  auto lying_length = Reply(kSysGet, std::pair<uint16_t, uint8_t>{66, 1});
  reinterpret_cast<nlmsghdr*>(lying_length.data())->nlmsg_len = 400;
  EXPECT_FALSE(DecodeSysGetReply(lying_length).ok());
}

// ---- the resource-tracking dumps ---------------------------------------------------------
// Built by hand from the uapi layout (include/uapi/linux/netlink.h: nlattr {u16 len, u16
// type}, the payload, padding to 4 bytes; include/uapi/rdma/rdma_netlink.h's numbers), as
// drivers/infiniband/core/nldev.c writes them: nests without NLA_F_NESTED, the device's
// index and name in every message. Independent of libnl, which the decoder uses.
namespace nldev {
constexpr uint16_t kGet = (5 << 10) + 1, kQpGet = (5 << 10) + 10, kCtxGet = (5 << 10) + 22;
constexpr uint16_t kDevIndex = 1, kDevName = 2, kPortIndex = 3, kResQp = 19, kResQpEntry = 20,
                   kLqpn = 21, kSqPsn = 24, kType = 26, kState = 27, kPid = 28, kKernName = 29,
                   kPdn = 60, kCtxn = 64, kResCtx = 86, kResCtxEntry = 87;
}  // namespace nldev

class NlAttrs {
 public:
  NlAttrs& Raw(uint16_t type, const void* data, size_t len) {
    const size_t at = bytes_.size();
    bytes_.resize(at + ((4 + len + 3) & ~size_t{3}), 0);
    const auto total = static_cast<uint16_t>(4 + len);
    std::memcpy(&bytes_[at], &total, 2);
    std::memcpy(&bytes_[at + 2], &type, 2);
    if (len > 0) std::memcpy(&bytes_[at + 4], data, len);
    return *this;
  }
  NlAttrs& U32(uint16_t type, uint32_t v) { return Raw(type, &v, 4); }
  NlAttrs& U8(uint16_t type, uint8_t v) { return Raw(type, &v, 1); }
  NlAttrs& Str(uint16_t type, const std::string& s) { return Raw(type, s.c_str(), s.size() + 1); }
  NlAttrs& Nest(uint16_t type, const NlAttrs& inner) {
    return Raw(type, inner.bytes_.data(), inner.bytes_.size());
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

std::vector<uint8_t> NlMessage(uint16_t type, uint32_t seq, const std::vector<uint8_t>& payload,
                               uint16_t flags = NLM_F_MULTI) {
  std::vector<uint8_t> out(sizeof(nlmsghdr) + payload.size(), 0);
  auto* hdr = reinterpret_cast<nlmsghdr*>(out.data());
  hdr->nlmsg_len = static_cast<uint32_t>(out.size());
  hdr->nlmsg_type = type;
  hdr->nlmsg_flags = flags;
  hdr->nlmsg_seq = seq;
  std::copy(payload.begin(), payload.end(), out.begin() + sizeof(nlmsghdr));
  return out;
}
std::vector<uint8_t> Done(uint32_t seq, int value) {
  std::vector<uint8_t> payload(4);
  std::memcpy(payload.data(), &value, 4);
  return NlMessage(NLMSG_DONE, seq, payload);
}
std::vector<uint8_t> Concat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
// A dump message of device `index`/`name` with a table of entries.
std::vector<uint8_t> TableMessage(uint16_t type, uint32_t seq, uint32_t index,
                                  const std::string& name, uint16_t table, uint16_t entry_type,
                                  const std::vector<NlAttrs>& entries) {
  NlAttrs t;
  for (const NlAttrs& e : entries) t.Nest(entry_type, e);
  NlAttrs top;
  top.U32(nldev::kDevIndex, index).Str(nldev::kDevName, name).Nest(table, t);
  return NlMessage(type, seq, top.bytes());
}

TEST(RdmaResCodec, EncodesDumpRequests) {
  const auto qp = EncodeResDumpRequest(ResDump::kQueuePairs, 3, 7);
  ASSERT_EQ(qp.size(), sizeof(nlmsghdr) + 8);
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(qp.data());
  EXPECT_EQ(hdr->nlmsg_type, nldev::kQpGet);
  EXPECT_EQ(hdr->nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
  EXPECT_EQ(hdr->nlmsg_seq, 7u);
  EXPECT_EQ(std::vector<uint8_t>(qp.begin() + sizeof(nlmsghdr), qp.end()),
            NlAttrs().U32(nldev::kDevIndex, 3).bytes());
  const auto ctx = EncodeResDumpRequest(ResDump::kContexts, 0, 8);
  EXPECT_EQ(reinterpret_cast<const nlmsghdr*>(ctx.data())->nlmsg_type, nldev::kCtxGet);
  const auto list = EncodeResDumpRequest(ResDump::kDevices, 0, 9);
  EXPECT_EQ(list.size(), sizeof(nlmsghdr));  // every device: no attribute
  EXPECT_EQ(reinterpret_cast<const nlmsghdr*>(list.data())->nlmsg_type, nldev::kGet);
}

// A user RC QP with its owner, the kernel's GSI QP, and a third in the next datagram: one
// device's entries across messages and datagrams; attributes in any order, unknown ones
// (PDN, SQ_PSN) skipped.
TEST(RdmaResCodec, DecodesAQueuePairDumpAcrossMessagesAndDatagrams) {
  ResDumpDecoder d(ResDump::kQueuePairs, 5, 100);
  NlAttrs user;
  user.U32(nldev::kPortIndex, 1)
      .U32(nldev::kLqpn, 0x1a2)
      .U32(nldev::kPdn, 3)
      .U32(nldev::kPid, 4242)
      .U32(nldev::kSqPsn, 77)
      .U8(nldev::kType, 2)
      .U8(nldev::kState, 3);
  NlAttrs gsi;
  gsi.U32(nldev::kLqpn, 1)
      .U8(nldev::kType, 1)
      .U8(nldev::kState, 3)
      .Str(nldev::kKernName, "ib_core");
  NlAttrs unseen;  // its owner is not in the reader's PID namespace: no PID
  unseen.U8(nldev::kState, 0).U8(nldev::kType, 4).U32(nldev::kLqpn, 9);
  ASSERT_TRUE(d.Feed(Concat({TableMessage(nldev::kQpGet, 5, 2, "mlx5_1", nldev::kResQp,
                                          nldev::kResQpEntry, {user}),
                             TableMessage(nldev::kQpGet, 5, 2, "mlx5_1", nldev::kResQp,
                                          nldev::kResQpEntry, {gsi})}))
                  .ok());
  EXPECT_FALSE(d.done());
  ASSERT_TRUE(d.Feed(Concat({TableMessage(nldev::kQpGet, 5, 2, "mlx5_1", nldev::kResQp,
                                          nldev::kResQpEntry, {unseen}),
                             Done(5, 0)}))
                  .ok());
  EXPECT_TRUE(d.done());
  ASSERT_EQ(d.entries().size(), 3u);
  EXPECT_EQ(d.entries()[0], (RdmaResEntry{.dev_index = 2,
                                          .dev_name = "mlx5_1",
                                          .number = 0x1a2,
                                          .pid = 4242,
                                          .kern_name = "",
                                          .port = 1,
                                          .qp_type = 2,
                                          .qp_state = 3}));
  EXPECT_EQ(d.entries()[1], (RdmaResEntry{.dev_index = 2,
                                          .dev_name = "mlx5_1",
                                          .number = 1,
                                          .pid = std::nullopt,
                                          .kern_name = "ib_core",
                                          .port = std::nullopt,
                                          .qp_type = 1,
                                          .qp_state = 3}));
  EXPECT_EQ(d.entries()[2].number, 9u);
  EXPECT_EQ(d.entries()[2].pid, std::nullopt);
  EXPECT_EQ(d.entries()[2].kern_name, "");
}

// A kernel-owned context is an empty entry (fill_res_ctx_entry adds nothing): skipped.
TEST(RdmaResCodec, DecodesAContextDump) {
  ResDumpDecoder d(ResDump::kContexts, 6, 100);
  ASSERT_TRUE(d.Feed(Concat({TableMessage(nldev::kCtxGet, 6, 0, "mlx5_0", nldev::kResCtx,
                                          nldev::kResCtxEntry,
                                          {NlAttrs().U32(nldev::kCtxn, 0).U32(nldev::kPid, 100),
                                           NlAttrs(), NlAttrs().U32(nldev::kCtxn, 1)}),
                             Done(6, 0)}))
                  .ok());
  ASSERT_EQ(d.entries().size(), 2u);
  EXPECT_EQ(d.entries()[0].pid, 100u);
  EXPECT_EQ(d.entries()[1].number, 1u);
  EXPECT_EQ(d.entries()[1].pid, std::nullopt);
}

// A device with nothing to list answers NLMSG_DONE alone; the device list, one message per
// device.
TEST(RdmaResCodec, AnEmptyDumpAndTheDeviceList) {
  ResDumpDecoder empty(ResDump::kQueuePairs, 1, 10);
  ASSERT_TRUE(empty.Feed(Done(1, 0)).ok());
  EXPECT_TRUE(empty.done());
  EXPECT_TRUE(empty.entries().empty());

  ResDumpDecoder list(ResDump::kDevices, 2, 10);
  auto device = [](uint32_t index, const std::string& name) {
    NlAttrs a;
    a.U32(nldev::kDevIndex, index).Str(nldev::kDevName, name).U32(nldev::kPortIndex, 1);
    return NlMessage(nldev::kGet, 2, a.bytes());
  };
  ASSERT_TRUE(list.Feed(Concat({device(0, "mlx5_0"), device(1, "mlx5_1"), Done(2, 0)})).ok());
  EXPECT_THAT(list.devices(),
              ElementsAre(RdmaDeviceEntry{0, "mlx5_0"}, RdmaDeviceEntry{1, "mlx5_1"}));
}

// The kernel's own errors keep their errno: found during the dump (NLMSG_DONE's value: an
// unknown device index), or before it (NLMSG_ERROR: a command an older kernel lacks).
TEST(RdmaResCodec, KernelErrorsKeepTheirErrno) {
  ResDumpDecoder during(ResDump::kQueuePairs, 3, 10);
  absl::Status s = during.Feed(Done(3, -EINVAL));
  EXPECT_EQ(ErrnoOf(s), EINVAL);
  EXPECT_TRUE(during.done());
  ResDumpDecoder before(ResDump::kContexts, 4, 10);
  std::vector<uint8_t> error = ErrorReply(EINVAL);
  reinterpret_cast<nlmsghdr*>(error.data())->nlmsg_seq = 4;
  EXPECT_EQ(ErrnoOf(before.Feed(error)), EINVAL);
}

// Whatever arrives, memory is bounded and nothing is read past its end: each case an error.
TEST(RdmaResCodec, RefusesWhatTheKernelNeverSends) {
  const NlAttrs qp = NlAttrs().U32(nldev::kLqpn, 1).U32(nldev::kPid, 1);
  auto fails = [](std::vector<uint8_t> datagram, size_t max_entries, const std::string& why) {
    ResDumpDecoder d(ResDump::kQueuePairs, 1, max_entries);
    absl::Status s = d.Feed(datagram);
    EXPECT_FALSE(s.ok()) << why;
    EXPECT_THAT(std::string(s.message()), HasSubstr(why));
  };
  fails(TableMessage(nldev::kQpGet, 1, 0, "d", nldev::kResQp, nldev::kResQpEntry, {qp, qp, qp}), 2,
        "more than 2 entries in one dump");
  fails(TableMessage(nldev::kQpGet, 2, 0, "d", nldev::kResQp, nldev::kResQpEntry, {qp}), 10,
        "sequence 2, not the dump's 1");
  fails(TableMessage(nldev::kCtxGet, 1, 0, "d", nldev::kResQp, nldev::kResQpEntry, {qp}), 10,
        "unexpected netlink message type");
  uint16_t two = 7;
  fails(TableMessage(nldev::kQpGet, 1, 0, "d", nldev::kResQp, nldev::kResQpEntry,
                     {NlAttrs().Raw(nldev::kLqpn, &two, 2)}),
        10, "malformed entry of device d");
  fails(NlMessage(nldev::kQpGet, 1, NlAttrs().U32(nldev::kDevIndex, 0).bytes()), 10,
        "without its device's index and name");
  fails(NlMessage(nldev::kQpGet, 1,
                  NlAttrs().U32(nldev::kDevIndex, 0).Raw(nldev::kDevName, "ab", 2).bytes()),
        10, "malformed netlink attributes");
  fails(std::vector<uint8_t>(10, 0), 10, "holds no whole message");
  fails(Concat({TableMessage(nldev::kQpGet, 1, 0, "d", nldev::kResQp, nldev::kResQpEntry, {qp}),
                std::vector<uint8_t>(8, 0)}),
        10, "8 bytes after the last whole netlink message");
  fails(std::vector<uint8_t>(kMaxResDatagram + 1, 0), 10, "netlink datagram of 65537 bytes");
  std::vector<uint8_t> lying = Done(1, 0);
  reinterpret_cast<nlmsghdr*>(lying.data())->nlmsg_len = 4096;
  fails(lying, 10, "holds no whole message");
}

// The receive loop on a socketpair: datagrams as they come, what is queued read even with
// no time left, nothing queued a deadline, an oversized datagram an error.
TEST(RdmaResDump, ReceivesADumpFromAnyDatagramSocket) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd ours(sv[0]);
  UniqueFd kernel(sv[1]);
  auto send = [&](const std::vector<uint8_t>& d) {
    ASSERT_EQ(::send(kernel.Get(), d.data(), d.size(), 0), static_cast<ssize_t>(d.size()));
  };
  const NlAttrs qp = NlAttrs().U32(nldev::kLqpn, 7).U32(nldev::kPid, 1);
  send(TableMessage(nldev::kQpGet, 5, 0, "mlx5_0", nldev::kResQp, nldev::kResQpEntry, {qp, qp}));
  send(Concat({TableMessage(nldev::kQpGet, 5, 0, "mlx5_0", nldev::kResQp, nldev::kResQpEntry, {qp}),
               Done(5, 0)}));
  ResDumpDecoder whole(ResDump::kQueuePairs, 5, 10);
  ASSERT_TRUE(ReceiveResDump(ours.Get(), whole, std::chrono::milliseconds(0)).ok());
  EXPECT_TRUE(whole.done());
  EXPECT_EQ(whole.entries().size(), 3u);

  send(TableMessage(nldev::kQpGet, 6, 0, "mlx5_0", nldev::kResQp, nldev::kResQpEntry, {qp}));
  ResDumpDecoder cut(ResDump::kQueuePairs, 6, 10);
  absl::Status s = ReceiveResDump(ours.Get(), cut, std::chrono::milliseconds(0));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_EQ(cut.entries().size(), 1u);  // what came before the deadline

  send(std::vector<uint8_t>(kMaxResDatagram + 1024, 0));
  ResDumpDecoder big(ResDump::kQueuePairs, 7, 10);
  s = ReceiveResDump(ours.Get(), big, std::chrono::milliseconds(0));
  EXPECT_THAT(std::string(s.message()), HasSubstr("a netlink datagram of 66560 bytes"));
}

// This machine's kernel: the device list is whatever it has (none here: the dump is
// NLMSG_DONE alone, which must read as an empty list), and a device that does not exist
// is the kernel's EINVAL, found during the dump. Without ib_core there is no NETLINK_RDMA,
// said as such.
TEST(RdmaResDump, AnswersOnThisKernel) {
  auto devices = DumpRdmaDevices(std::chrono::milliseconds(2000), 64);
  if (!devices.ok()) {
    EXPECT_TRUE(IsNoRdmaNetlink(devices.status())) << devices.status();
    std::cout << "[measured] this kernel has no NETLINK_RDMA\n";
    return;
  }
  std::cout << "[measured] this kernel's RDMA devices: " << devices->size() << "\n";
  for (const RdmaDeviceEntry& d : *devices) {
    auto qps =
        DumpRdmaResources(ResDump::kQueuePairs, d.index, std::chrono::milliseconds(2000), 100000);
    EXPECT_TRUE(qps.ok()) << d.name << ": " << qps.status();
  }
  auto none =
      DumpRdmaResources(ResDump::kQueuePairs, 1u << 30, std::chrono::milliseconds(2000), 10);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(ErrnoOf(none.status()), EINVAL) << none.status();
}

std::vector<char> Datagram(std::initializer_list<std::string_view> parts) {
  std::vector<char> out;
  for (auto p : parts) {
    out.insert(out.end(), p.begin(), p.end());
    out.push_back('\0');
  }
  return out;
}

TEST(Uevent, ParsesKernelDatagrams) {
  auto ev =
      ParseUevent(Datagram({"add@/devices/pci0000:00/0000:3b:00.0/infiniband/mlx5_0", "ACTION=add",
                            "DEVPATH=/devices/pci0000:00/0000:3b:00.0/infiniband/mlx5_0",
                            "SUBSYSTEM=infiniband", "NAME=mlx5_0", "SEQNUM=4242"}));
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->action, "add");
  EXPECT_EQ(ev->subsystem, "infiniband");
  EXPECT_EQ(ev->devpath, "/devices/pci0000:00/0000:3b:00.0/infiniband/mlx5_0");
  EXPECT_TRUE(UeventTriggersRescan(*ev));
}

TEST(Uevent, IgnoresUdevRebroadcastsAndJunk) {
  EXPECT_FALSE(ParseUevent(Datagram({"libudev", "ACTION=add", "SUBSYSTEM=pci"})).has_value());
  EXPECT_FALSE(ParseUevent(Datagram({"hello"})).has_value());
  EXPECT_FALSE(ParseUevent(Datagram({"add@/x", "ACTION=add"})).has_value());  // no subsystem
  EXPECT_FALSE(ParseUevent({}).has_value());
}

TEST(Uevent, OnlyDeviceChangesThatMatterTriggerRescans) {
  auto ev = [](std::string action, std::string subsystem) {
    return Uevent{std::move(action), std::move(subsystem), "/devices/x"};
  };
  EXPECT_TRUE(UeventTriggersRescan(ev("remove", "pci")));
  EXPECT_TRUE(UeventTriggersRescan(ev("bind", "pci")));
  EXPECT_TRUE(UeventTriggersRescan(ev("add", "infiniband_verbs")));
  EXPECT_TRUE(UeventTriggersRescan(ev("remove", "infiniband_mad")));
  EXPECT_TRUE(UeventTriggersRescan(ev("change", "infiniband")));
  EXPECT_TRUE(UeventTriggersRescan(ev("add", "net")));
  EXPECT_FALSE(UeventTriggersRescan(ev("change", "net")));
  EXPECT_FALSE(UeventTriggersRescan(ev("add", "block")));
  EXPECT_FALSE(UeventTriggersRescan(ev("add", "usb")));
  // A veth or a bridge has no PCI function behind it: CNI's churn costs no rescan.
  EXPECT_FALSE(UeventTriggersRescan(Uevent{"add", "net", "/devices/virtual/net/veth1a2b"}));
  EXPECT_TRUE(UeventTriggersRescan(
      Uevent{"move", "net", "/devices/pci0000:00/0000:00:02.0/0000:3b:00.0/net/ens1f0"}));
}

// An RTM_NEWLINK datagram as the kernel sends it: nlmsghdr, ifinfomsg, attributes.
std::vector<uint8_t> LinkMessage(uint16_t type, const std::string& name) {
  std::vector<uint8_t> out(NLMSG_LENGTH(sizeof(ifinfomsg)), 0);
  auto put_attr = [&](uint16_t attr_type, const std::string& value) {
    const size_t start = NLMSG_ALIGN(out.size());
    out.resize(start + NLA_ALIGN(NLA_HDRLEN + value.size() + 1), 0);
    nlattr attr{static_cast<uint16_t>(NLA_HDRLEN + value.size() + 1), attr_type};
    std::memcpy(out.data() + start, &attr, sizeof(attr));
    std::memcpy(out.data() + start + NLA_HDRLEN, value.c_str(), value.size() + 1);
  };
  put_attr(IFLA_MTU + 100, "xxxx");  // an attribute we do not know comes first
  if (!name.empty()) put_attr(IFLA_IFNAME, name);
  auto* hdr = reinterpret_cast<nlmsghdr*>(out.data());
  hdr->nlmsg_len = static_cast<uint32_t>(out.size());
  hdr->nlmsg_type = type;
  return out;
}

TEST(LinkEvents, NamesOfLinkMessagesOnly) {
  std::vector<uint8_t> batch = LinkMessage(RTM_NEWLINK, "ib0");
  for (auto part : {LinkMessage(RTM_NEWADDR, "eth9"), LinkMessage(RTM_DELLINK, "veth7"),
                    LinkMessage(RTM_NEWLINK, "")}) {
    batch.insert(batch.end(), part.begin(), part.end());
  }
  EXPECT_THAT(ParseLinkNames(batch), ElementsAre("ib0", "veth7", ""));
  batch.resize(batch.size() - 3);  // a truncated last message is dropped, not read past
  EXPECT_THAT(ParseLinkNames(batch), ElementsAre("ib0", "veth7"));
  EXPECT_TRUE(ParseLinkNames({}).empty());
}

TEST(RdmaNetnsQuery, AnswersOnThisKernel) {
  const NetnsQuery q = QueryRdmaNetnsMode();
  // Machines without ib_core have no NETLINK_RDMA; with it, the mode must be reported.
  if (q.outcome == NetnsQuery::Outcome::kNoRdmaNetlink) {
    EXPECT_THAT(q.detail, HasSubstr("NETLINK_RDMA"));
  } else {
    EXPECT_TRUE(q.outcome == NetnsQuery::Outcome::kMode ||
                q.outcome == NetnsQuery::Outcome::kOldKernel)
        << q.detail;
  }
}

// Real rtnetlink on a real veth pair, in a private network namespace.
class LinkUpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::unshare(CLONE_NEWNET) != 0) {
      GTEST_SKIP() << "cannot create a private network namespace: " << std::strerror(errno)
                   << " (needs CAP_SYS_ADMIN)";
    }
    NlSocket sock(nl_socket_alloc());
    ASSERT_EQ(nl_connect(sock.get(), NETLINK_ROUTE), 0);
    int rc = rtnl_link_veth_add(sock.get(), "rdmadp0", "rdmadp1", getpid());
    if (rc < 0) GTEST_SKIP() << "cannot create a veth pair: " << nl_geterror(rc);
  }
};

TEST_F(LinkUpTest, SetsAVethUp) {
  ASSERT_EQ(*IsLinkUp("rdmadp0"), false);
  ASSERT_TRUE(SetLinkUp("rdmadp0").ok());
  EXPECT_EQ(*IsLinkUp("rdmadp0"), true);
  EXPECT_EQ(*IsLinkUp("rdmadp1"), false);
  EXPECT_TRUE(SetLinkUp("rdmadp0").ok());  // already up: still fine
  ASSERT_TRUE(SetLinkAdminState("rdmadp0", false).ok());
  EXPECT_EQ(*IsLinkUp("rdmadp0"), false);
}

TEST_F(LinkUpTest, LinkEventSocketSeesAStateChange) {
  auto events = LinkEventSocket::Open();
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_TRUE(events->Drain().empty());
  ASSERT_TRUE(SetLinkUp("rdmadp1").ok());
  pollfd p{events->fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 2000), 1) << "no RTM_NEWLINK within 2 s";
  EXPECT_THAT(events->Drain(), ::testing::Contains("rdmadp1"));
}

TEST_F(LinkUpTest, MissingLinkIsANamedError) {
  absl::Status s = SetLinkUp("nosuchlink0");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("link nosuchlink0: lookup failed"));
}

}  // namespace
}  // namespace rdmadp::netlink
