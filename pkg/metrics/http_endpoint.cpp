#include "pkg/metrics/http_endpoint.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>

#include "absl/status/status.h"
#include "pkg/metrics/http_request.h"
#include "pkg/text/cat.h"

namespace rdmadp::metrics {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// After an error answer we stop sending and read (and drop) what the client still sends for
// this long before closing: closing with unread bytes would reset the connection, and the
// client could lose the answer it has not read yet.
constexpr milliseconds kLinger{1000};
constexpr size_t kLingerBytes = 1 << 20;
// Accepting is paused this long when the process is out of file descriptors.
constexpr milliseconds kAcceptPause{100};
constexpr uint64_t kListenId = 0;
constexpr uint64_t kStopId = 1;

absl::Status ParseAddress(const std::string& address, std::string_view flag, std::string& host,
                          int& port) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(Cat(flag, " \"", address, "\": use HOST:PORT or :PORT"));
  }
  host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "::";  // both stacks (IPV6_V6ONLY off); "0.0.0.0" without IPv6
  const std::string p = address.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  if (ec != std::errc() || ptr != p.data() + p.size() || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(Cat(flag, " \"", address, "\": port must be 0..65535"));
  }
  return absl::OkStatus();
}

// A listening socket on host:port (port 0: any free one), or an invalid fd and `error`.
UniqueFd Listen(const std::string& host, int port, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    error = ::gai_strerror(rc);
    return {};
  }
  UniqueFd fd;
  error = "no usable address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    UniqueFd s(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!s.Valid()) {
      error = std::strerror(errno);
      continue;
    }
    int yes = 1;  // no SO_REUSEPORT: a second instance must fail, not share our probes
    ::setsockopt(s.Get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (ai->ai_family == AF_INET6) {
      int no = 0;  // "::" also accepts IPv4
      ::setsockopt(s.Get(), IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof(no));
    }
    if (::bind(s.Get(), ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(s.Get(), 64) == 0) {
      fd = std::move(s);
      break;
    }
    error = std::strerror(errno);
  }
  ::freeaddrinfo(found);
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

bool Ipv6Available() { return UniqueFd(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0)).Valid(); }

struct Conn {
  enum class State { kReading, kWriting, kLingering };
  UniqueFd fd;
  State state = State::kReading;
  std::string in;   // at most kMaxHeadBytes
  std::string out;  // the response being written
  size_t written = 0;
  size_t lingered = 0;
  bool close_after = false;
  bool peer_closed = false;  // EOF or an error on read: answer what is complete, then close
  Clock::time_point deadline;
  Clock::time_point waiting_since;  // eviction order: who has waited longest
};

}  // namespace

// The connection table, owned by the endpoint's thread.
class HttpEndpoint::Connections {
 public:
  Connections(HttpEndpoint& ep, int epoll_fd) : ep_(ep), epoll_(epoll_fd) {}

  void AcceptAll(Clock::time_point now) {
    while (true) {
      const int fd =
          ::accept4(ep_.listen_fd_.Get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE) PauseAccepting(now);
        return;
      }
      if (conns_.size() >= ep_.limits_.max_connections) EvictLongestWaiting();
      const uint64_t id = next_id_++;
      Conn& c = conns_[id];
      c.fd = UniqueFd(fd);
      c.deadline = now + ep_.limits_.head_timeout;
      c.waiting_since = now;
      Watch(id, c, EPOLL_CTL_ADD, EPOLLIN);
      ep_.open_connections_.store(conns_.size());
    }
  }

  void OnEvent(uint64_t id, uint32_t events, Clock::time_point now) {
    auto it = conns_.find(id);
    if (it == conns_.end()) return;  // closed earlier in this batch
    Conn& c = it->second;
    bool open = true;
    if (c.state == Conn::State::kWriting) {
      if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) open = Advance(id, c, now);
    } else if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) {
      if (c.state == Conn::State::kLingering) {
        open = Linger(c);
      } else {
        // A client may send its request and shut down its side at once: answer it first.
        c.peer_closed = !Read(c, now);
        open = Advance(id, c, now) && !(c.peer_closed && c.state == Conn::State::kReading);
      }
    }
    if (!open) Close(id);
  }

  void CloseExpired(Clock::time_point now) {
    for (auto it = conns_.begin(); it != conns_.end();) {
      auto next = std::next(it);
      if (it->second.deadline <= now) Close(it->first);
      it = next;
    }
    if (accept_paused_ && now >= resume_accept_at_) {
      accept_paused_ = false;
      epoll_event ev{.events = EPOLLIN, .data = {.u64 = kListenId}};
      ::epoll_ctl(epoll_, EPOLL_CTL_ADD, ep_.listen_fd_.Get(), &ev);
    }
  }

  // For epoll_wait: -1 (no deadline) or the milliseconds to the nearest one.
  int TimeoutMs(Clock::time_point now) const {
    std::optional<Clock::time_point> next;
    if (accept_paused_) next = resume_accept_at_;
    for (const auto& [id, c] : conns_) {
      if (!next || c.deadline < *next) next = c.deadline;
    }
    if (!next) return -1;
    if (*next <= now) return 0;
    return static_cast<int>(
        std::chrono::duration_cast<milliseconds>(*next - now + milliseconds(1)).count());
  }

  void CloseAll() {
    conns_.clear();
    ep_.open_connections_.store(0);
  }

 private:
  void Watch(uint64_t id, const Conn& c, int op, uint32_t events) {
    epoll_event ev{.events = events, .data = {.u64 = id}};
    ::epoll_ctl(epoll_, op, c.fd.Get(), &ev);
  }

  void Close(uint64_t id) {
    auto node = conns_.extract(id);
    ep_.open_connections_.store(conns_.size());
    // The fd closes (and leaves the epoll set) only now: a client that sees the close can
    // rely on open_connections() already counting it out.
  }

  void EvictLongestWaiting() {
    auto oldest = std::min_element(conns_.begin(), conns_.end(), [](const auto& a, const auto& b) {
      return a.second.waiting_since < b.second.waiting_since;
    });
    if (oldest != conns_.end()) Close(oldest->first);
  }

  void PauseAccepting(Clock::time_point now) {
    if (accept_paused_) return;
    accept_paused_ = true;
    resume_accept_at_ = now + kAcceptPause;
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, ep_.listen_fd_.Get(), nullptr);
  }

  // Reads what is there, up to the head limit. False: the peer is gone.
  bool Read(Conn& c, Clock::time_point now) {
    char buf[4096];
    while (c.in.size() < kMaxHeadBytes) {
      const ssize_t n = ::read(c.fd.Get(), buf, std::min(sizeof(buf), kMaxHeadBytes - c.in.size()));
      if (n > 0) {
        if (c.in.empty()) c.deadline = now + ep_.limits_.head_timeout;  // a request begins
        c.in.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return n < 0 && errno == EAGAIN;
    }
    return true;
  }

  // Answers complete requests and writes; false when the connection is done.
  bool Advance(uint64_t id, Conn& c, Clock::time_point now) {
    while (true) {
      if (c.state == Conn::State::kReading) {
        const HeadParse parse = ParseHead(c.in);
        if (parse.state == HeadParse::State::kIncomplete) return true;
        HttpResponse response;
        bool head_only = false;
        if (parse.state == HeadParse::State::kError) {
          response = Reject(parse.status, parse.reason);
        } else {
          c.in.erase(0, parse.consumed);
          head_only = parse.request.method == "HEAD";
          std::optional<HttpResponse> rejected = Screen(parse.request);
          response = rejected ? std::move(*rejected) : Route(parse.request.path);
          if (!parse.request.keep_alive || c.peer_closed) response.close = true;
        }
        c.out = Serialize(response, head_only);
        c.written = 0;
        c.close_after = response.close;
        c.state = Conn::State::kWriting;
        c.deadline = now + ep_.limits_.write_timeout;
      }
      while (c.written < c.out.size()) {
        const ssize_t n =
            ::send(c.fd.Get(), c.out.data() + c.written, c.out.size() - c.written, MSG_NOSIGNAL);
        if (n > 0) {
          c.written += static_cast<size_t>(n);
        } else if (n < 0 && errno == EINTR) {
          continue;
        } else if (n < 0 && errno == EAGAIN) {
          Watch(id, c, EPOLL_CTL_MOD, EPOLLOUT);
          return true;
        } else {
          return false;
        }
      }
      c.out.clear();
      if (c.close_after) {
        ::shutdown(c.fd.Get(), SHUT_WR);
        c.state = Conn::State::kLingering;
        c.in.clear();
        c.deadline = now + kLinger;
        Watch(id, c, EPOLL_CTL_MOD, EPOLLIN);
        return true;
      }
      c.state = Conn::State::kReading;
      c.waiting_since = now;
      c.deadline = now + (c.in.empty() ? ep_.limits_.idle_timeout : ep_.limits_.head_timeout);
      Watch(id, c, EPOLL_CTL_MOD, EPOLLIN);
      if (c.in.empty()) return true;  // else: a pipelined request is already here
    }
  }

  // Drops what the client still sends after an error answer; false at its end.
  bool Linger(Conn& c) {
    char buf[4096];
    while (c.lingered < kLingerBytes) {
      const ssize_t n = ::read(c.fd.Get(), buf, sizeof(buf));
      if (n > 0) {
        c.lingered += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return n < 0 && errno == EAGAIN;
    }
    return false;
  }

  HttpResponse Route(const std::string& path) const {
    HttpResponse r;
    if (path == "/metrics" || path == "/healthz" || path == "/readyz") {
      const std::optional<View> view = ep_.collect_();
      if (!view) {
        r.status = 503;
        r.body = "event loop did not answer within 1 s\n";
      } else if (path == "/metrics") {
        r.body = FormatPrometheus(*view);
        r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      } else if (path == "/healthz") {
        r.body = "ok\n";
      } else if (const std::string why = NotReadyReason(*view); !why.empty()) {
        r.status = 503;
        r.body = why + "\n" + ReadyNotes(*view);
      } else {
        r.body = "ready\n" + ReadyNotes(*view);
      }
      return r;
    }
    r.status = 404;
    r.body = "not found: try /metrics, /healthz or /readyz\n";
    return r;
  }

  HttpEndpoint& ep_;
  const int epoll_;
  std::map<uint64_t, Conn> conns_;
  uint64_t next_id_ = 2;  // 0 and 1 name the listener and the stop eventfd
  bool accept_paused_ = false;
  Clock::time_point resume_accept_at_;
};

absl::StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(const std::string& address,
                                                                  Collect collect,
                                                                  std::string_view flag,
                                                                  HttpLimits limits) {
  std::unique_ptr<HttpEndpoint> ep(new HttpEndpoint());
  int port = 0;
  if (auto s = ParseAddress(address, flag, ep->host_, port); !s.ok()) return s;
  std::string error;
  ep->listen_fd_ = Listen(ep->host_, port, error);
  if (!ep->listen_fd_.Valid() && ep->host_ == "::" && !Ipv6Available()) {  // no IPv6 here
    ep->host_ = "0.0.0.0";
    ep->listen_fd_ = Listen(ep->host_, port, error);
  }
  if (!ep->listen_fd_.Valid()) {
    return absl::UnavailableError(
        Cat("cannot listen on ", address, " (", flag, "): ", error, " (pick another port)"));
  }
  ep->port_ = BoundPort(ep->listen_fd_.Get());
  ep->stop_fd_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!ep->stop_fd_.Valid()) {
    return absl::ResourceExhaustedError(Cat("metrics endpoint: eventfd: ", std::strerror(errno)));
  }
  ep->collect_ = std::move(collect);
  ep->limits_ = limits;
  ep->thread_ = std::thread([raw = ep.get()] { raw->Run(); });
  return ep;
}

HttpEndpoint::~HttpEndpoint() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    ssize_t ignored = ::write(stop_fd_.Get(), &one, sizeof(one));
    (void)ignored;
    thread_.join();
  }
}

void HttpEndpoint::Run() {
  const UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
  epoll_event listen_ev{.events = EPOLLIN, .data = {.u64 = kListenId}};
  epoll_event stop_ev{.events = EPOLLIN, .data = {.u64 = kStopId}};
  ::epoll_ctl(epoll.Get(), EPOLL_CTL_ADD, listen_fd_.Get(), &listen_ev);
  ::epoll_ctl(epoll.Get(), EPOLL_CTL_ADD, stop_fd_.Get(), &stop_ev);
  Connections conns(*this, epoll.Get());
  epoll_event events[64];
  while (true) {
    const int n = ::epoll_wait(epoll.Get(), events, 64, conns.TimeoutMs(Clock::now()));
    const Clock::time_point now = Clock::now();
    for (int i = 0; i < n; ++i) {
      const uint64_t id = events[i].data.u64;
      if (id == kStopId) {
        conns.CloseAll();
        return;
      }
      if (id == kListenId) {
        conns.AcceptAll(now);
      } else {
        conns.OnEvent(id, events[i].events, now);
      }
    }
    conns.CloseExpired(now);
  }
}

}  // namespace rdmadp::metrics
