#include "test/support/fake_apiserver.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#define CPPHTTPLIB_NO_EXCEPTIONS
#include <httplib.h>

extern char** environ;

namespace rdmadp::testing {
namespace {

std::string ReadLine(int fd, std::chrono::milliseconds timeout) {
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (line.empty() || line.back() != '\n') {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char c = 0;
    if (::read(fd, &c, 1) != 1) break;
    line += c;
  }
  return line;
}

}  // namespace

FakeApiServer::FakeApiServer(int bookmark_ms, const std::string& release) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  const std::string script = std::string(RDMADP_SOURCE_DIR) + "/test/manifests/fake_apiserver.mjs";
  std::vector<std::string> args = {RDMADP_NODE_BINARY, script, dir_.path()};
  if (bookmark_ms > 0) {
    args.push_back("--bookmark-ms");
    args.push_back(std::to_string(bookmark_ms));
  }
  const char* from_env = std::getenv("FAKE_KUBE_RELEASE");
  const std::string chosen = !release.empty() ? release : from_env != nullptr ? from_env : "";
  if (!chosen.empty()) {
    args.push_back("--release");
    args.push_back(chosen);
  }
  if (const char* gates = std::getenv("FAKE_KUBE_GATES"); gates != nullptr && *gates != '\0') {
    args.push_back("--gates");
    args.push_back(gates);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  if (posix_spawn(&pid_, args[0].c_str(), &actions, &attr, argv.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  const std::string line = ReadLine(out[0], std::chrono::seconds(30));
  ::close(out[0]);
  auto ports = nlohmann::json::parse(line, nullptr, false);
  if (pid_ < 0 || !ports.is_object()) {
    throw std::runtime_error("fake apiserver did not start: \"" + line + "\"");
  }
  api_port_ = ports["apiPort"].get<int>();
  admin_port_ = ports["adminPort"].get<int>();
}

FakeApiServer::~FakeApiServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::string FakeApiServer::server() const {
  return "https://127.0.0.1:" + std::to_string(api_port_);
}

std::vector<std::string> FakeApiServer::PluginFlags() const {
  return {"--kube-api-server=" + server(), "--kube-ca-file=" + ca_file(),
          "--kube-token-file=" + token_file()};
}

nlohmann::json FakeApiServer::Admin(const std::string& path, const nlohmann::json& body) {
  httplib::Client client("127.0.0.1", admin_port_);
  client.set_read_timeout(120, 0);
  auto r = body.is_null() ? client.Get(path.c_str())
                          : client.Post(path.c_str(), body.dump(), "application/json");
  if (!r) {
    std::fprintf(stderr, "fake apiserver: admin %s: %s\n", path.c_str(),
                 httplib::to_string(r.error()).c_str());
    return nullptr;
  }
  return nlohmann::json::parse(r->body, nullptr, false);
}

nlohmann::json FakeApiServer::Await(const std::string& until, std::chrono::milliseconds timeout) {
  return Admin("/await", {{"until", until}, {"timeoutMs", timeout.count()}});
}

void FakeApiServer::RotateToken(const std::string& token) {
  {
    const std::string tmp = token_file() + ".new";
    std::ofstream(tmp) << token;
    ::rename(tmp.c_str(), token_file().c_str());  // as the kubelet swaps a projected volume
  }
  Admin("/token", {{"token", token}});
}

void FakeApiServer::AuthorizeAsTheDraDaemonSet(const std::string& driver, const std::string& node,
                                               const std::vector<std::string>& components) {
  const std::string images = std::string(RDMADP_SOURCE_DIR) + "/images/components/";
  std::string file = images + "dra/rbac.yaml";
  if (!components.empty()) {
    // One manifest of every component's RBAC, as kustomize would put them together.
    const std::string joined = dir_.path() + "/rbac.yaml";
    std::ofstream out(joined);
    out << std::ifstream(images + "dra/rbac.yaml").rdbuf();
    for (const auto& c : components) {
      out << "\n---\n" << std::ifstream(images + c + "/rbac.yaml").rdbuf();
    }
    file = joined;
  }
  const nlohmann::json on = Admin("/rbac", {{"file", file}, {"driver", driver}, {"node", node}});
  if (!on.is_object() || !on.value("on", false)) {
    std::fprintf(stderr, "fake apiserver: /rbac failed: %s\n", on.dump().c_str());
    std::abort();
  }
}

}  // namespace rdmadp::testing
