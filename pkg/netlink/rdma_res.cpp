#include "pkg/netlink/rdma_res.h"

#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "pkg/fd/unique_fd.h"
#include "pkg/text/cat.h"

namespace rdmadp::netlink {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kNoRdmaNetlink = "no NETLINK_RDMA";

// Sends the request and feeds every answer to `decoder` until the dump ends, the deadline
// passes or an error.
absl::Status Run(ResDumpDecoder& decoder, ResDump dump, uint32_t dev_index, uint32_t seq,
                 std::chrono::milliseconds timeout) {
  UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA));
  if (!fd.Valid()) {
    const int err = errno;
    // No RDMA netlink family in this kernel (ib_core not loaded): EPROTONOSUPPORT.
    if (err == EPROTONOSUPPORT || err == EAFNOSUPPORT) {
      return absl::UnavailableError(Cat(kNoRdmaNetlink, " in this kernel: ", std::strerror(err)));
    }
    return absl::UnknownError(Cat("cannot open a NETLINK_RDMA socket: ", std::strerror(err)));
  }
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  const std::vector<uint8_t> request = EncodeResDumpRequest(dump, dev_index, seq);
  if (::sendto(fd.Get(), request.data(), request.size(), 0,
               reinterpret_cast<const sockaddr*>(&kernel), sizeof(kernel)) < 0) {
    return absl::UnknownError(Cat("sending the dump request failed: ", std::strerror(errno)));
  }
  return ReceiveResDump(fd.Get(), decoder, timeout);
}

uint32_t NextSeq() {
  static std::atomic<uint32_t> seq{1};
  return seq.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

absl::Status ReceiveResDump(int fd, ResDumpDecoder& decoder, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  static thread_local std::array<uint8_t, kMaxResDatagram> buffer;
  while (!decoder.done()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    // Even with no time left, what is already queued is read.
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      return absl::UnknownError(Cat("waiting for the dump failed: ", std::strerror(errno)));
    }
    if (ready == 0) {
      return absl::DeadlineExceededError(
          Cat("the kernel did not finish the dump within ", timeout.count(), " ms"));
    }
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return absl::UnknownError(Cat("reading the dump failed: ", std::strerror(errno)));
    }
    if (static_cast<size_t>(n) > buffer.size()) {
      return absl::DataLossError(Cat("a netlink datagram of ", n, " bytes"));
    }
    if (absl::Status s = decoder.Feed({buffer.data(), static_cast<size_t>(n)}); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool IsNoRdmaNetlink(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnavailable &&
         std::string_view(status.message().data(), status.message().size())
             .starts_with(kNoRdmaNetlink);
}

absl::StatusOr<std::vector<RdmaDeviceEntry>> DumpRdmaDevices(std::chrono::milliseconds timeout,
                                                             size_t max_devices) {
  const uint32_t seq = NextSeq();
  ResDumpDecoder decoder(ResDump::kDevices, seq, max_devices);
  if (absl::Status s = Run(decoder, ResDump::kDevices, 0, seq, timeout); !s.ok()) return s;
  return decoder.devices();
}

absl::StatusOr<std::vector<RdmaResEntry>> DumpRdmaResources(ResDump dump, uint32_t dev_index,
                                                            std::chrono::milliseconds timeout,
                                                            size_t max_entries) {
  const uint32_t seq = NextSeq();
  ResDumpDecoder decoder(dump, seq, max_entries);
  if (absl::Status s = Run(decoder, dump, dev_index, seq, timeout); !s.ok()) return s;
  return decoder.entries();
}

}  // namespace rdmadp::netlink
