// The DRA front end's registration: its sockets (the DraServer) and the state machine that
// decides when to serve them, the kubelet-directory events that concern them, and shutdown.
// Loop thread only, asserted where the loop enters (OnKubeletEvent, Drive, Stop); the
// server's threads post their events back through the loop.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "pkg/dra/front_end.h"
#include "pkg/dra/prepare/prepare.h"
#include "pkg/fd/files.h"
#include "pkg/frontend/kubelet_facts.h"
#include "pkg/lifecycle/registration_executor.h"
#include "pkg/log/log.h"
#include "pkg/rpc/socket_path.h"
#include "pkg/text/cat.h"

namespace rdmadp::dra {

using std::chrono::milliseconds;

void DraFrontEnd::OnKubeletEvent(const frontend::KubeletEvent& event) {
  loop::AssertOnLoop(host_.Loop());
  using Kind = frontend::KubeletEvent::Kind;
  if (event.kind == Kind::kDirsAppeared) {
    // A removal before the directory's watch existed is found by looking (as below).
    if (server_ && !fd::PathExists(server_->registration_path())) {
      Drive(lifecycle::Event::OwnSocketDeleted());
    }
    Drive(lifecycle::Event::SocketDirAppeared());
  } else if (event.kind == Kind::kFileDeleted && server_ &&
             event.dir == host_.Dirs().PluginsRegistry() &&
             event.file == fd::BaseName(server_->registration_path()) &&
             !fd::PathExists(server_->registration_path())) {
    // Our registration socket went (the kubelet's cleanup, an operator): re-served once, as
    // a device-plugin socket is; the plugin watcher then registers it again.
    Drive(lifecycle::Event::OwnSocketDeleted());
  }
}

void DraFrontEnd::Stop() {
  loop::AssertOnLoop(host_.Loop());
  if (fsm_) Drive(lifecycle::Event::Stop());
  publisher_.reset();            // the slices stay: a restarted instance takes them over
  shared_->set_status(nullptr);  // the writer ends once no Prepare holds it
  api_retry_.reset();
  heartbeat_.reset();
  timer_.reset();
  server_.reset();
  fsm_.reset();
  active_ = false;
  created_ = false;
}

// The driver's world, as its state machine sees it. The kubelet's plugin watcher registers
// a DRA driver: no Register is ever started or cancelled here.
class DraFrontEnd::Executor final : public lifecycle::RegistrationExecutor {
 public:
  explicit Executor(DraFrontEnd& front_end) : front_end_(front_end), host_(front_end.host_) {}

  lifecycle::Facts Observe(const lifecycle::Event& /*event*/) override {
    return {.now = host_.Loop().Now(),
            .kubelet_socket = frontend::SocketIdOf(host_.Dirs().KubeletSocket())};
  }
  std::optional<lifecycle::Event> Serve(uint64_t server) override {
    return front_end_.Serve(server);
  }
  void DropServer() override { front_end_.server_.reset(); }
  void Register(uint64_t /*attempt*/, bool /*fresh*/) override {}
  void CancelRegister() override {}
  void ArmTimer(uint64_t token, milliseconds delay) override {
    front_end_.timer_->Arm(token, delay);
  }
  void DisarmTimer() override { front_end_.timer_->Disarm(); }
  void Log(lifecycle::Action::Level level, const std::string& message) override {
    if (level == lifecycle::Action::Level::kWarn) {
      host_.ReportProblem(
          log::Level::kWarn, "registration", message,
          {.resource = front_end_.options_.driver, .hca = {}, .event = "registration"});
    } else {
      log::Write(level == lifecycle::Action::Level::kInfo ? log::Level::kInfo : log::Level::kDebug,
                 message);
    }
  }
  void Transition(const lifecycle::Event& event, lifecycle::Phase before,
                  lifecycle::Phase after) override {
    if (!log::Enabled(log::Level::kDebug)) return;
    log::Debug(Cat("DRA driver: ", lifecycle::Describe(event), " in ", lifecycle::PhaseName(before),
                   " -> ", lifecycle::PhaseName(after)));
  }

 private:
  DraFrontEnd& front_end_;
  frontend::Host& host_;
};

void DraFrontEnd::Drive(const lifecycle::Event& event) {
  loop::AssertOnLoop(host_.Loop());
  if (!fsm_) return;
  Executor executor(*this);
  lifecycle::Run(*fsm_, executor, event);
}

lifecycle::Event DraFrontEnd::Serve(uint64_t server_token) {
  server_.reset();
  const std::string plugins = host_.Dirs().Plugins();
  if (!fd::PathExists(host_.Dirs().PluginsRegistry()) || !fd::PathExists(plugins)) {
    // Watched (the kubelet root, or its nearest ancestor): the directory's appearance is
    // the trigger, at once; only an unwatchable root falls back to the retry timer.
    const bool watched = host_.WatchKubeletDirs();
    return lifecycle::Event::ServeFailed(
        server_token, watched,
        Cat(host_.Dirs().PluginsRegistry(), " or ", plugins,
            " does not exist yet (is the kubelet running, and is --kubelet-root-dir right?)"));
  }
  const std::string dir = Cat(plugins, "/", options_.driver);
  if (::mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST) {
    return lifecycle::Event::ServeFailed(server_token, false,
                                         Cat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  // <prefix><8 hex><suffix>: what an earlier instance of this driver left behind.
  auto named = [](std::string prefix, std::string suffix) -> rpc::InstanceOfFn {
    return [prefix = std::move(prefix), suffix = std::move(suffix)](const std::string& file) {
      if (!file.starts_with(prefix) || !file.ends_with(suffix) ||
          file.size() != prefix.size() + 8 + suffix.size()) {
        return std::optional<std::string>();
      }
      return std::optional<std::string>(file.substr(prefix.size(), 8));
    };
  };
  rpc::RemoveDeadSockets(dir, host_.InstanceId(), named("dra-", ".sock"));
  rpc::RemoveDeadSockets(host_.Dirs().PluginsRegistry(), host_.InstanceId(),
                         named(options_.driver + "-", "-reg.sock"));
  DraServerOptions o;
  o.driver = options_.driver;
  o.endpoint_path = Cat(dir, "/dra-", host_.InstanceId(), ".sock");
  o.registration_path = Cat(host_.Dirs().PluginsRegistry(), "/", options_.driver, "-",
                            host_.InstanceId(), "-reg.sock");
  auto post = [this](lifecycle::Event e) {
    host_.Loop().Post([this, e = std::move(e)] {
      if (host_.Stopping()) return;
      host_.CatchUpKubeletWatch();  // what the kubelet did before it said this comes first
      Drive(e);
    });
  };
  o.watcher.on_get_info = [post, server_token] { post(lifecycle::Event::GetInfo(server_token)); };
  o.watcher.on_status = [post, server_token](bool ok, const std::string& error) {
    post(lifecycle::Event::Notify(server_token, ok, error, frontend::WallNowNs()));
  };
  // This server's teardown: no claim GET may start after it, and running ones end.
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  o.cancel = [shared = shared_, cancelled] {
    *cancelled = true;
    for (int i = 0; i < kDraWorkers; ++i) {
      if (auto client = shared->Claims(i)) client->Cancel();
    }
  };
  const MetadataDirs metadata{options_.driver, dir, options_.cdi_spec_dir};
  o.prepare = [shared = shared_, cancelled, metadata](const auto& req, int worker, auto deadline) {
    const auto start = std::chrono::steady_clock::now();
    const auto status = shared->status();
    auto on_prepared = [&status](PreparedClaim claim) {
      if (status) status->Prepared(std::move(claim));
    };
    auto resp = Prepare(req, shared->view(), shared->Claims(worker).get(), deadline, *cancelled,
                        metadata, on_prepared);
    uint64_t failed = 0;
    for (const auto& [uid, claim] : resp.claims()) failed += claim.error().empty() ? 0 : 1;
    shared->prepares += static_cast<uint64_t>(req.claims_size());
    shared->prepare_failures += failed;
    shared->prepare_calls += 1;
    shared->prepare_nanos +=
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - start)
                                  .count());
    return resp;
  };
  o.unprepare = [shared = shared_, metadata](const auto& req) {
    shared->unprepares += static_cast<uint64_t>(req.claims_size());
    if (const auto status = shared->status()) {
      for (const auto& c : req.claims()) status->Unprepared(c.uid());
    }
    return Unprepare(req, metadata);
  };
  auto started = DraServer::Start(std::move(o), std::make_shared<const std::string>());
  if (!started.ok()) {
    return lifecycle::Event::ServeFailed(server_token, false,
                                         std::string(started.status().message()));
  }
  server_ = std::move(*started);
  log::Info(Cat("DRA driver ", options_.driver, ": serving on ", server_->endpoint_path(),
                ", registration ", server_->registration_path()));
  PublishHealth();
  return lifecycle::Event::ServeOk(server_token);
}

}  // namespace rdmadp::dra
