// The API client against a peer that misbehaves (docs/reliability.md): answers and watch
// lines past their limits, token files that are not a token. Each case failed before its fix
// (out of memory, quadratic CPU, a blocked thread or a crash); now each is one clear error
// and the next request works.
#include "pkg/kube/rest_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "test/support/fake_apiserver.h"
#include "test/support/temp_dir.h"

namespace rdmadp::kube {
namespace {

using testing::FakeApiServer;
using ::testing::HasSubstr;

class Client : public ::testing::Test {
 protected:
  std::unique_ptr<RestClient> Make(const std::string& token_file = "") {
    auto c = RestClient::Create({api_.server(), api_.ca_file(),
                                 token_file.empty() ? api_.token_file() : token_file, "test"});
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(*c) : nullptr;
  }
  absl::Status CreateWithToken(const std::string& token_file) {
    return RestClient::Create({api_.server(), api_.ca_file(), token_file, "test"}).status();
  }
  FakeApiServer api_;
  testing::TempDir dir_;
};

// A CA of its own, unrelated to the fake API server's; its path.
std::string OtherCa(const std::string& dir) {
  const std::string ca = dir + "/other-ca.crt";
  const std::string cmd =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other "
      "-keyout " +
      dir + "/k.pem -out " + ca + " >/dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return ca;
}

TEST_F(Client, AnAnswerPastTheLimitIsNotRead) {
  auto c = Make();
  api_.Admin("/fault", {{"method", "GET"}, {"match", "/nodes/"}, {"bytes", 40 << 20}});
  auto r = c->Call("GET", "/api/v1/nodes/n1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("larger than 33554432 bytes"));
  auto next = c->Call("GET", "/api/v1/nodes/n1");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->code, 200);
}

// A watch line that never ends was searched for its newline from the start at every chunk
// (quadratic CPU) and kept whole (unbounded memory).
TEST_F(Client, AWatchLineThatNeverEndsEndsTheWatch) {
  auto c = Make();
  api_.Admin("/fault", {{"method", "GET"}, {"match", "watch=true"}, {"endless", true}});
  int lines = 0;
  auto r = c->Stream("/apis/resource.k8s.io/v1/resourceslices?watch=true",
                     [&](std::string_view) { return ++lines > 0; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("a line longer than 4194304 bytes"));
  EXPECT_EQ(lines, 0);
}

TEST_F(Client, TokenFilesThatAreNotATokenAreRefusedAtOnce) {
  const std::string fifo = dir_.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // opened for reading, it would block for ever
  EXPECT_THAT(std::string(CreateWithToken(fifo).message()), HasSubstr("is not a regular file"));
  EXPECT_THAT(std::string(CreateWithToken(dir_.path()).message()), HasSubstr("is a directory"));
  const std::string zero = dir_.path() + "/zero";
  std::filesystem::create_symlink("/dev/zero", zero);
  EXPECT_THAT(std::string(CreateWithToken(zero).message()), HasSubstr("is not a regular file"));
  const std::string big = dir_.path() + "/big";
  std::ofstream(big) << std::string(100 << 10, 'a');
  EXPECT_THAT(std::string(CreateWithToken(big).message()),
              HasSubstr("is 102400 bytes; a token is at most 65536"));
  const std::string empty = dir_.path() + "/empty";
  std::ofstream(empty) << "  \n";
  EXPECT_THAT(std::string(CreateWithToken(empty).message()), HasSubstr("is empty"));
}

// At eee2a98 an endless error answer was read to its end (19.9 CPU-s in 45 s for a 500 that
// never ended; here 40 MiB): an error is one Status object, kept up to kMaxErrorBytes, and
// the rest is never read (docs/reliability.md, "Capacity and data"). The answer is still the
// server's 500.
TEST_F(Client, AnErrorAnswerIsReadOnlyUpToItsCap) {
  auto c = Make();
  api_.Admin("/fault",
             {{"method", "GET"}, {"match", "/nodes/"}, {"code", 500}, {"bytes", 40 << 20}});
  auto r = c->Call("GET", "/api/v1/nodes/n1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->code, 500);
  EXPECT_EQ(r->body.size(), kMaxErrorBytes);
  auto next = c->Call("GET", "/api/v1/nodes/n1");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->code, 200);
}

// At eee2a98 a FIFO as --kube-ca-file blocked libcurl's open, and SIGTERM did not end the
// process within 30 s. The CA file is checked like the token file: at creation, and before
// every request (a file replaced later): docs/reliability.md, "Capacity and data".
TEST_F(Client, ACaFileThatIsNotARegularFileIsRefusedAtOnce) {
  const std::string fifo = dir_.path() + "/ca-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto bad = RestClient::Create({api_.server(), fifo, api_.token_file(), "test"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("is not a regular file"));
  const std::string ca = dir_.path() + "/ca.crt";
  std::filesystem::copy_file(api_.ca_file(), ca);
  auto c = RestClient::Create({api_.server(), ca, api_.token_file(), "test"});
  ASSERT_TRUE(c.ok()) << c.status();
  std::filesystem::remove(ca);
  ASSERT_EQ(::mkfifo(ca.c_str(), 0600), 0);
  auto r = (*c)->Call("GET", "/api/v1/nodes/n1");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("is not a regular file"));
  auto w = (*c)->Stream("/apis/resource.k8s.io/v1/resourceslices?watch=true",
                        [](std::string_view) { return true; });
  ASSERT_FALSE(w.ok());
}

// A loop that resets its cancel before each call erased a destructor's Cancel() that came
// between its "stopping?" check and the reset, and shutdown waited out a 5-10 minute watch.
// Shutdown() is a cancel no ResetCancel() undoes (docs/reliability.md, "Capacity and data").
TEST_F(Client, AShutdownIsNotUndoneByAResetCancel) {
  // A watch that would hang: the server stays silent; the idle limit (2 s) only bounds a
  // regression's cost, the request log is what the test reads.
  auto made = RestClient::Create(
      {api_.server(), api_.ca_file(), api_.token_file(), "test", std::chrono::seconds(2)});
  ASSERT_TRUE(made.ok()) << made.status();
  RestClient& c = **made;
  c.Cancel();
  c.ResetCancel();
  auto open = c.Call("GET", "/api/v1/nodes/n1");
  ASSERT_TRUE(open.ok()) << "a plain cancel is undone: " << open.status();
  api_.Admin("/black-hole-watches", {{"on", true}});
  c.Shutdown();
  c.ResetCancel();
  (void)c.Stream("/apis/resource.k8s.io/v1/resourceslices?watch=true",
                 [](std::string_view) { return true; });
  (void)c.Call("GET", "/api/v1/nodes/n1");
  int after_shutdown = 0;
  const nlohmann::json log = api_.Admin("/requests");  // kept: the loop reads into it
  for (const auto& r : log["requests"]) {
    after_shutdown += r["url"].get<std::string>().find("watch=true") != std::string::npos;
  }
  EXPECT_EQ(after_shutdown, 0) << "a request went out after Shutdown()";
  const auto nodes = api_.Admin("/requests")["requests"].size();
  EXPECT_EQ(nodes, 1u) << "only the GET before Shutdown()";
}

// Every TLS failure read "SSL peer certificate or SSH remote key was not OK": the message
// now says why, and which CA file was used.
TEST_F(Client, AnUnknownCaIsNamedWithTheCaFile) {
  const std::string other_ca = OtherCa(dir_.path());
  auto c = RestClient::Create({api_.server(), other_ca, api_.token_file(), "test"});
  ASSERT_TRUE(c.ok()) << c.status();
  auto r = (*c)->Call("GET", "/api/v1/nodes/n1");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("certificate"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("(CA file " + other_ca + ")"));
}

// libcurl also trusted its compiled-in CA directory (/etc/ssl/certs on Debian), so the
// bearer token went to any server a system CA signed (docs/reliability.md, "Capacity and
// data"). Here the API server's own certificate becomes a "system CA" (bind-mounted over
// that directory in a private mount namespace of one thread) while the client's CA file
// names another CA: the request must fail, and the token must not reach the server.
TEST_F(Client, OnlyTheCaFileIsTrustedNotTheSystemCaDirectory) {
  if (::geteuid() != 0 || !std::filesystem::is_directory("/etc/ssl/certs")) {
    GTEST_SKIP() << "needs root and /etc/ssl/certs (a private mount namespace)";
  }
  const std::string other_ca = OtherCa(dir_.path());
  const std::string certs = dir_.path() + "/certs";
  std::filesystem::create_directory(certs);
  const std::string hash_cmd =
      "openssl x509 -hash -noout -in " + api_.ca_file() + " > " + dir_.path() + "/hash";
  ASSERT_EQ(std::system(hash_cmd.c_str()), 0);
  std::string hash;
  std::ifstream(dir_.path() + "/hash") >> hash;
  std::filesystem::copy_file(api_.ca_file(), certs + "/" + hash + ".0");
  const int unauthorized_before = api_.Stats()["unauthorized"].get<int>();
  const int requests_before = api_.Stats()["requests"].get<int>();

  std::string setup_error, answer;
  bool trusted_by_system_dir = false;
  std::thread t([&] {  // the namespace is this thread's alone and ends with it
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount(certs.c_str(), "/etc/ssl/certs", nullptr, MS_BIND, nullptr) != 0) {
      setup_error = std::strerror(errno);
      return;
    }
    trusted_by_system_dir = std::filesystem::exists("/etc/ssl/certs/" + hash + ".0");
    auto c = RestClient::Create({api_.server(), other_ca, api_.token_file(), "test"});
    if (!c.ok()) {
      setup_error = std::string(c.status().message());
      return;
    }
    auto r = (*c)->Call("GET", "/api/v1/nodes/n1");
    answer = r.ok() ? "HTTP " + std::to_string(r->code) : std::string(r.status().message());
  });
  t.join();
  if (setup_error.find("Operation not permitted") != std::string::npos) {
    GTEST_SKIP() << "no CAP_SYS_ADMIN for a mount namespace: " << setup_error;
  }
  ASSERT_EQ(setup_error, "");
  ASSERT_TRUE(trusted_by_system_dir) << "the bind mount did not take";
  EXPECT_THAT(answer, HasSubstr("certificate")) << "the system CA directory was trusted";
  EXPECT_EQ(api_.Stats()["requests"].get<int>(), requests_before) << "the request got through";
  EXPECT_EQ(api_.Stats()["unauthorized"].get<int>(), unauthorized_before);
}

}  // namespace
}  // namespace rdmadp::kube
