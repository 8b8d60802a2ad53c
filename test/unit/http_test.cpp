// The metrics endpoint's HTTP (docs/observability.md): the pure head parser, then the server
// over real TCP with the hostile clients the port sees on a node (it is open on every node
// IP): huge declared bodies, oversized heads, slow heads, idle floods.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "pkg/fd/unique_fd.h"
#include "pkg/metrics/http_endpoint.h"
#include "pkg/metrics/http_request.h"

namespace rdmadp::metrics {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using State = HeadParse::State;

TEST(HttpHead, ParsesAGetAndStopsAtItsBlankLine) {
  const std::string head = "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n";
  const HeadParse p = ParseHead(head + "GET /next");
  ASSERT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.consumed, head.size());
  EXPECT_EQ(p.request.method, "GET");
  EXPECT_EQ(p.request.path, "/metrics");
  EXPECT_TRUE(p.request.keep_alive);
  EXPECT_FALSE(p.request.has_body);
}

TEST(HttpHead, IncompleteUntilTheBlankLineAndBareLfIsAccepted) {
  EXPECT_EQ(ParseHead("GET /healthz HTTP/1.1\r\nHost: a\r\n").state, State::kIncomplete);
  EXPECT_EQ(ParseHead("").state, State::kIncomplete);
  const HeadParse p = ParseHead("\r\nGET /healthz HTTP/1.1\nHost: a\n\n");
  ASSERT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.request.path, "/healthz");
}

TEST(HttpHead, ConnectionHandling) {
  EXPECT_FALSE(ParseHead("GET / HTTP/1.0\r\n\r\n").request.keep_alive);
  EXPECT_TRUE(ParseHead("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").request.keep_alive);
  EXPECT_FALSE(ParseHead("GET / HTTP/1.1\r\nconnection: foo, close\r\n\r\n").request.keep_alive);
}

TEST(HttpHead, BodiesAreNoticedNeverWaitedFor) {
  EXPECT_TRUE(ParseHead("POST / HTTP/1.1\r\nContent-Length: 2147483648\r\n\r\n").request.has_body);
  EXPECT_TRUE(ParseHead("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").request.has_body);
  EXPECT_FALSE(ParseHead("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").request.has_body);
  for (const char* bad : {"Content-Length: -1", "Content-Length: 1x",
                          "Content-Length:", "Content-Length: 99999999999999999999999"}) {
    const HeadParse p = ParseHead(std::string("GET / HTTP/1.1\r\n") + bad + "\r\n\r\n");
    EXPECT_EQ(p.state, State::kError) << bad;
    EXPECT_EQ(p.status, 400) << bad;
  }
  EXPECT_EQ(ParseHead("GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n").status,
            400);
}

TEST(HttpHead, LimitsAndMalformedInput) {
  const std::string big = "GET / HTTP/1.1\r\nX: " + std::string(kMaxHeadBytes, 'a');
  HeadParse p = ParseHead(big);
  EXPECT_EQ(p.state, State::kError);
  EXPECT_EQ(p.status, 431);
  EXPECT_EQ(p.reason, "request head over 8192 bytes");
  std::string many = "GET / HTTP/1.1\r\n";
  for (size_t i = 0; i <= kMaxHeaders; ++i) many += "X: y\r\n";
  EXPECT_EQ(ParseHead(many + "\r\n").status, 431);
  EXPECT_EQ(ParseHead("GET /\r\n\r\n").status, 400);
  EXPECT_EQ(ParseHead("GET  / HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(ParseHead("GET metrics HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(ParseHead("G(T / HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(ParseHead("GET / HTTP/2.0\r\n\r\n").status, 505);
  EXPECT_EQ(ParseHead("GET / HTTP/1.1\r\nX: a\r\n  folded\r\n\r\n").status, 400);
  EXPECT_EQ(ParseHead("GET / HTTP/1.1\r\nno colon\r\n\r\n").status, 400);
}

TEST(HttpHead, ScreenAndSerialize) {
  HttpRequest post{.method = "POST", .path = "/metrics"};
  auto r = Screen(post);
  ASSERT_TRUE(r);
  EXPECT_EQ(Serialize(*r, false),
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 29\r\nAllow: GET, HEAD\r\nConnection: close\r\n\r\n"
            "only GET and HEAD are served\n");
  HttpRequest get_with_body{.method = "GET", .path = "/", .has_body = true};
  ASSERT_TRUE(Screen(get_with_body));
  EXPECT_EQ(Screen(get_with_body)->status, 413);
  EXPECT_FALSE(Screen(HttpRequest{.method = "HEAD", .path = "/"}));
  HttpResponse ok{.body = "ok\n"};
  EXPECT_EQ(
      Serialize(ok, true),
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\n\r\n");
}

// ---- the server over TCP ----

class HttpServer : public ::testing::Test {
 protected:
  void Start(HttpLimits limits = {}) {
    auto started = HttpEndpoint::Start(
        "127.0.0.1:0", [] { return std::optional<View>(View{}); }, "--metrics-address", limits);
    ASSERT_TRUE(started.ok()) << started.status();
    ep = std::move(*started);
  }
  UniqueFd Connect() {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(ep->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd.Get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
  }
  static void Send(const UniqueFd& fd, const std::string& data) {
    ASSERT_EQ(::send(fd.Get(), data.data(), data.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(data.size()));
  }
  // Everything until the server closes. A hang guard only: fails after 60 s of silence.
  static std::string ReadToEof(const UniqueFd& fd) {
    std::string out;
    char buf[4096];
    while (true) {
      pollfd p{fd.Get(), POLLIN, 0};
      if (::poll(&p, 1, 60000) != 1) {
        ADD_FAILURE() << "the server neither answered nor closed";
        return out;
      }
      const ssize_t n = ::read(fd.Get(), buf, sizeof(buf));
      if (n <= 0) return out;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  // Reads until `count` whole responses (by Content-Length) have arrived.
  static std::vector<std::string> ReadResponses(const UniqueFd& fd, size_t count) {
    std::vector<std::string> responses;
    std::string in;
    char buf[4096];
    while (responses.size() < count) {
      const size_t end = in.find("\r\n\r\n");
      if (end != std::string::npos) {
        const size_t cl = in.find("Content-Length: ");
        const size_t length = std::stoul(in.substr(cl + 16));
        if (in.size() >= end + 4 + length) {
          responses.push_back(in.substr(0, end + 4 + length));
          in.erase(0, end + 4 + length);
          continue;
        }
      }
      pollfd p{fd.Get(), POLLIN, 0};
      if (::poll(&p, 1, 60000) != 1) break;
      const ssize_t n = ::read(fd.Get(), buf, sizeof(buf));
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
    }
    return responses;
  }
  std::unique_ptr<HttpEndpoint> ep;
};

TEST_F(HttpServer, RoutesKeepAliveAndPipelining) {
  Start();
  UniqueFd c = Connect();
  Send(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  auto first = ReadResponses(c, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_THAT(first[0], StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(first[0], testing::EndsWith("\r\n\r\nok\n"));
  // Same connection, two pipelined requests in one write.
  Send(c, "GET /readyz HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\n");
  auto more = ReadResponses(c, 2);
  ASSERT_EQ(more.size(), 2u);
  EXPECT_THAT(more[0], StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(more[0], testing::EndsWith("\r\n\r\nready\n"));
  EXPECT_THAT(more[1], StartsWith("HTTP/1.1 404 Not Found\r\n"));
  // HEAD: the GET's headers, no body (so nothing follows them before the server closes).
  Send(c, "HEAD /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(ReadToEof(c),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\n"
            "Connection: close\r\n\r\n");
  UniqueFd m = Connect();
  Send(m, "GET /metrics HTTP/1.0\r\n\r\n");
  const std::string page = ReadToEof(m);  // HTTP/1.0: closed after the answer
  EXPECT_THAT(page, HasSubstr("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  EXPECT_THAT(page, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(page, HasSubstr("# TYPE rdma_shared_dp_build_info gauge"));
}

TEST_F(HttpServer, ARequestFollowedByShutdownIsStillAnswered) {
  Start();
  UniqueFd c = Connect();
  Send(c, "GET /healthz HTTP/1.1\r\n\r\n");
  ::shutdown(c.Get(), SHUT_WR);
  EXPECT_THAT(ReadToEof(c), StartsWith("HTTP/1.1 200 OK\r\n"));
}

// A POST declaring 2 GiB was read whole before routing (1,069 MB RSS).
TEST_F(HttpServer, AHugeDeclaredBodyIsRefusedWithoutReadingIt) {
  Start();
  UniqueFd c = Connect();
  Send(c, "POST /metrics HTTP/1.1\r\nContent-Length: 2147483648\r\n\r\n");
  Send(c, std::string(64 * 1024, 'x'));  // a first part of the body; the rest never comes
  const std::string answer = ReadToEof(c);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 405 Method Not Allowed\r\n"));
  EXPECT_THAT(answer, HasSubstr("Allow: GET, HEAD\r\n"));
  UniqueFd chunked = Connect();
  Send(chunked, "GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n");
  EXPECT_THAT(ReadToEof(chunked), StartsWith("HTTP/1.1 413 Content Too Large\r\n"));
}

// 210 MB of headers were answered 200 and the memory stayed.
TEST_F(HttpServer, AnOversizedHeadIsRefused) {
  Start();
  UniqueFd c = Connect();
  Send(c, "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(16 * 1024, 'a'));
  EXPECT_THAT(ReadToEof(c), StartsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
}

// A header line every 4 s (under a 5 s per-read timeout) held a worker for ever.
// The head has one deadline in total: the slow client is cut off however it paces itself.
TEST_F(HttpServer, ASlowHeadIsCutOffAtItsDeadline) {
  Start({.head_timeout = milliseconds(300)});
  UniqueFd c = Connect();
  Send(c, "GET /healthz HTTP/1.1\r\n");
  int lines = 0;
  while (true) {
    pollfd p{c.Get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);  // the client's pace: a line every 100 ms
    if (ready == 1) break;                 // the server closed
    ASSERT_LT(++lines, 600) << "a header line every 100 ms kept the connection for a minute";
    if (::send(c.Get(), "X: y\r\n", 6, MSG_NOSIGNAL) != 6) break;
  }
  EXPECT_EQ(ReadToEof(c), "");  // closed without an answer
  EXPECT_EQ(ep->open_connections(), 0u);
}

TEST_F(HttpServer, AnIdleKeepAliveConnectionIsClosed) {
  Start({.idle_timeout = milliseconds(200)});
  UniqueFd c = Connect();
  Send(c, "GET /healthz HTTP/1.1\r\n\r\n");
  ASSERT_EQ(ReadResponses(c, 1).size(), 1u);
  EXPECT_EQ(ReadToEof(c), "");
}

// Two slow connections took both workers and 4/4 probes timed out; 1,000 idle
// connections held 1,000 fds. Now the cap holds, and a new probe evicts the longest waiter.
TEST_F(HttpServer, ProbesAreAnsweredWhileTheConnectionCapIsFull) {
  Start();
  std::vector<UniqueFd> hostile;
  for (int i = 0; i < 100; ++i) {
    hostile.push_back(Connect());
    Send(hostile.back(), "GET /healthz HTTP/1.1\r\nX: ");  // never finished
  }
  UniqueFd probe = Connect();
  Send(probe, "GET /healthz HTTP/1.1\r\n\r\n");
  auto answer = ReadResponses(probe, 1);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_THAT(answer[0], StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_EQ(ep->open_connections(), HttpLimits{}.max_connections);
  EXPECT_EQ(ReadToEof(hostile.front()), "");  // the longest waiter was evicted, unanswered
}

}  // namespace
}  // namespace rdmadp::metrics
