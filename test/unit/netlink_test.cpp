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

#include <cerrno>
#include <climits>
#include <cstring>

#include "pkg/netlink/kernel_events.h"
#include "pkg/netlink/link_up.h"
#include "pkg/netlink/nl_socket.h"
#include "pkg/netlink/rdma_netns.h"
#include "pkg/netlink/rdma_netns_codec.h"

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
