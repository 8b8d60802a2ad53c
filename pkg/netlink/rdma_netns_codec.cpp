#include "pkg/netlink/rdma_netns_codec.h"

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <rdma/rdma_netlink.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "pkg/netlink/nl_socket.h"
#include "pkg/text/cat.h"

namespace rdmadp::netlink {
namespace {

constexpr int kSysGetType = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET);
constexpr char kErrnoPayload[] = "errno";

}  // namespace

std::string_view NetnsModeName(NetnsMode mode) {
  switch (mode) {
    case NetnsMode::kExclusive:
      return "exclusive";
    case NetnsMode::kShared:
      return "shared";
    case NetnsMode::kUnknown:
      break;
  }
  return "unknown";
}

std::vector<uint8_t> EncodeSysGetRequest(uint32_t seq) {
  NlMsg msg(nlmsg_alloc_simple(kSysGetType, NLM_F_REQUEST | NLM_F_ACK));
  nlmsghdr* hdr = nlmsg_hdr(msg.get());
  hdr->nlmsg_seq = seq;
  const auto* begin = reinterpret_cast<const uint8_t*>(hdr);
  return {begin, begin + hdr->nlmsg_len};
}

absl::StatusOr<NetnsMode> DecodeSysGetReply(std::span<const uint8_t> bytes) {
  if (bytes.size() < sizeof(nlmsghdr)) {
    return absl::DataLossError(Cat("netlink reply too short: ", bytes.size(), " bytes"));
  }
  // Copy into an aligned buffer: libnl reads headers in place.
  // The SYS_GET reply is well under a page; anything larger is not ours.
  std::array<uint64_t, 1024> aligned{};
  if (bytes.size() > sizeof(aligned)) {
    return absl::DataLossError(Cat("netlink reply too long: ", bytes.size(), " bytes"));
  }
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  auto* hdr = reinterpret_cast<nlmsghdr*>(aligned.data());
  if (hdr->nlmsg_len < sizeof(nlmsghdr) || hdr->nlmsg_len > bytes.size()) {
    return absl::DataLossError(Cat("netlink reply length ", hdr->nlmsg_len, " does not fit the ",
                                   bytes.size(), " bytes received"));
  }
  if (hdr->nlmsg_type == NLMSG_ERROR) {
    if (hdr->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) {
      return absl::DataLossError("truncated netlink error message");
    }
    return KernelErrorStatus(static_cast<const nlmsgerr*>(nlmsg_data(hdr))->error);
  }
  if (hdr->nlmsg_type != kSysGetType) {
    return absl::DataLossError(Cat("unexpected netlink message type ", hdr->nlmsg_type));
  }
  nlattr* attrs[RDMA_NLDEV_SYS_ATTR_NETNS_MODE + 1] = {};
  nla_policy policy[RDMA_NLDEV_SYS_ATTR_NETNS_MODE + 1] = {};
  policy[RDMA_NLDEV_SYS_ATTR_NETNS_MODE].type = NLA_U8;
  if (int rc = nlmsg_parse(hdr, 0, attrs, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, policy); rc < 0) {
    return absl::DataLossError(Cat("malformed netlink attributes: ", nl_geterror(rc)));
  }
  if (attrs[RDMA_NLDEV_SYS_ATTR_NETNS_MODE] == nullptr) {
    return absl::NotFoundError("the kernel's reply has no netns mode attribute");
  }
  switch (nla_get_u8(attrs[RDMA_NLDEV_SYS_ATTR_NETNS_MODE])) {
    case 0:
      return NetnsMode::kExclusive;
    case 1:
      return NetnsMode::kShared;
    default:
      return NetnsMode::kUnknown;
  }
}

absl::Status KernelErrorStatus(int negative_errno) {
  // Negating INT_MIN overflows: anything outside errno's range is EPROTO.
  const int code = negative_errno < 0 && negative_errno > -4096 ? -negative_errno : EPROTO;
  absl::Status status = absl::UnknownError(Cat("netlink error: ", std::strerror(code)));
  status.SetPayload(kErrnoPayload, absl::Cord(std::to_string(code)));
  return status;
}

int ErrnoOf(const absl::Status& status) {
  auto payload = status.GetPayload(kErrnoPayload);
  return payload ? std::atoi(std::string(*payload).c_str()) : 0;
}

}  // namespace rdmadp::netlink
