#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <sched.h>

#include <cerrno>
#include <cstring>

#include "pkg/netlink/link_up.h"
#include "pkg/netlink/nl_socket.h"
#include "pkg/netlink/rdma_netns.h"
#include "pkg/netlink/rdma_netns_codec.h"

namespace rdmadp::netlink {
namespace {

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

TEST(RdmaNetnsCodec, RejectsMalformedReplies) {
  EXPECT_FALSE(DecodeSysGetReply(std::vector<uint8_t>(8, 0)).ok());
  auto wrong_type = Reply(16, std::pair<uint16_t, uint8_t>{66, 1});
  EXPECT_THAT(std::string(DecodeSysGetReply(wrong_type).status().message()),
              HasSubstr("unexpected netlink message type 16"));
  auto lying_length = Reply(kSysGet, std::pair<uint16_t, uint8_t>{66, 1});
  reinterpret_cast<nlmsghdr*>(lying_length.data())->nlmsg_len = 400;
  EXPECT_FALSE(DecodeSysGetReply(lying_length).ok());
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
}

TEST_F(LinkUpTest, MissingLinkIsANamedError) {
  absl::Status s = SetLinkUp("nosuchlink0");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("link nosuchlink0: lookup failed"));
}

}  // namespace
}  // namespace rdmadp::netlink
