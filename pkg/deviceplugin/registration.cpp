// The device-plugin front end: the thin adapter between each resource's registration state
// machine (pkg/lifecycle) and the world. It observes facts, hands in events and carries out
// the actions (serve a socket, start or cancel a Register, arm a timer, log). Loop thread
// only; other threads reach it through PostTo().
#include <optional>

#include "pkg/deviceplugin/front_end_internal.h"
#include "pkg/fd/files.h"
#include "pkg/frontend/kubelet_facts.h"
#include "pkg/lifecycle/registration_executor.h"
#include "pkg/log/log.h"
#include "pkg/rpc/socket_path.h"
#include "pkg/text/cat.h"

namespace rdmadp::deviceplugin {

using frontend::WallNowNs;

std::function<void(lifecycle::Event)> DevicePluginFrontEnd::PostTo(const std::string& name) {
  return [this, name](lifecycle::Event event) {
    host_.Loop().Post([this, name, event = std::move(event)] {
      if (host_.Stopping()) return;
      host_.CatchUpKubeletWatch();  // what the kubelet did before it said this comes first
      if (auto it = resources_.find(name); it != resources_.end()) Drive(*it->second, event);
    });
  };
}

// One resource's world, as its state machine sees it.
class DevicePluginFrontEnd::ResourceExecutor final : public lifecycle::RegistrationExecutor {
 public:
  ResourceExecutor(DevicePluginFrontEnd& front_end, Resource& res)
      : front_end_(front_end), host_(front_end.host_), res_(res) {}

  lifecycle::Facts Observe(const lifecycle::Event& event) override {
    const std::string kubelet_socket = host_.Dirs().KubeletSocket();
    lifecycle::Facts facts{.now = host_.Loop().Now(),
                           .kubelet_socket = frontend::SocketIdOf(kubelet_socket)};
    if (res_.server) facts.streams_opened = res_.server->streams_opened();
    if (event.kind == lifecycle::Event::Kind::kStreamEnded && facts.kubelet_socket.present()) {
      facts.kubelet_listening = rpc::SocketHasListener(kubelet_socket);
    }
    return facts;
  }
  std::optional<lifecycle::Event> Serve(uint64_t server) override {
    return front_end_.ServeSocket(res_, server);
  }
  // A Register in flight is the machine's to cancel (or keep).
  void DropServer() override { DevicePluginFrontEnd::DropServer(res_); }
  void Register(uint64_t attempt, bool fresh) override {
    front_end_.StartRegistration(res_, attempt, fresh);
  }
  void CancelRegister() override { res_.registration.reset(); }
  void ArmTimer(uint64_t token, milliseconds delay) override { res_.timer->Arm(token, delay); }
  void DisarmTimer() override { res_.timer->Disarm(); }
  void Log(lifecycle::Action::Level level, const std::string& message) override {
    const std::string name = res_.config.FullName();  // outlives the fields that view it
    const log::Fields fields{.resource = name, .hca = {}, .event = "registration"};
    switch (level) {
      case lifecycle::Action::Level::kDebug:
        log::Debug(message, fields);
        break;
      case lifecycle::Action::Level::kInfo:
        log::Info(message, fields);
        break;
      case lifecycle::Action::Level::kWarn:
        host_.ReportProblem(log::Level::kWarn, "registration", message, fields);
        break;
    }
  }
  void Transition(const lifecycle::Event& event, lifecycle::Phase before,
                  lifecycle::Phase after) override {
    if (!log::Enabled(log::Level::kDebug)) return;
    log::Debug(Cat(res_.config.FullName(), ": ", lifecycle::Describe(event), " in ",
                   lifecycle::PhaseName(before), " -> ", lifecycle::PhaseName(after)));
  }

 private:
  DevicePluginFrontEnd& front_end_;
  frontend::Host& host_;
  Resource& res_;
};

void DevicePluginFrontEnd::Drive(Resource& res, const lifecycle::Event& event) {
  loop::AssertOnLoop(host_.Loop());
  ResourceExecutor executor(*this, res);
  lifecycle::Run(*res.fsm, executor, event);
}

lifecycle::Event DevicePluginFrontEnd::ServeSocket(Resource& res, uint64_t server_token) {
  DropServer(res);
  if (!fd::PathExists(SocketDir())) {
    const std::string why = Cat(SocketDir(), " does not exist yet; will serve when the kubelet ",
                                "creates it (is --kubelet-root-dir right?)");
    // Without a watch that would see it appear, wait with back-off instead.
    return lifecycle::Event::ServeFailed(server_token, host_.WatchKubeletDirs(), why);
  }
  auto post = PostTo(res.config.resource_name);
  ResourceServerOptions opts;
  opts.socket_path =
      Cat(SocketDir(), "/", rpc::SocketFileName(res.config.resource_name, host_.InstanceId()));
  opts.serve_watcher_registration = WatcherMode();
  opts.on_stream_open = [post, server_token](uint64_t stream) {
    post(lifecycle::Event::StreamOpened(server_token, stream, WallNowNs()));
  };
  opts.on_stream_end = [post, server_token](uint64_t stream, bool newest) {
    post(lifecycle::Event::StreamEnded(server_token, stream, newest));
  };
  opts.watcher.on_get_info = [this, post, server_token] {
    host_.Loop().Post([this] { OnWatcherGetInfo(); });
    post(lifecycle::Event::GetInfo(server_token));
  };
  opts.watcher.on_status = [post, server_token](bool ok, const std::string& error) {
    post(lifecycle::Event::Notify(server_token, ok, error, WallNowNs()));
  };
  opts.on_allocate = [trimmer = &host_.Trimmer()] { trimmer->Activity(); };
  auto started = ResourceServer::Start(std::move(opts), Served(res));
  if (!started.ok()) {
    return lifecycle::Event::ServeFailed(server_token, false,
                                         std::string(started.status().message()));
  }
  res.server = std::move(*started);
  log::Info(Cat(res.config.FullName(), ": serving on ", res.server->socket_path()),
            {.resource = res.config.FullName(), .hca = {}, .event = "serving"});
  return lifecycle::Event::ServeOk(server_token);
}

void DevicePluginFrontEnd::StartRegistration(Resource& res, uint64_t attempt, bool fresh) {
  res.registration.reset();  // the machine cancelled any earlier one already
  if (!res.server) return;
  RegistrationRequest req;
  req.own_socket = res.server->socket_path();
  req.kubelet_socket = host_.Dirs().KubeletSocket();
  if (!kubelet_channel_) kubelet_channel_ = UnixChannel(req.kubelet_socket);
  if (!res.own_channel) res.own_channel = UnixChannel(req.own_socket);
  req.own_channel = res.own_channel;
  req.kubelet_channel = kubelet_channel_;
  req.self_check_timeout = kSelfCheckTimeout;
  req.register_timeout = kRegisterTimeout;
  req.resource_name = res.config.FullName();
  req.probe_kubelet = !fresh;
  auto post = PostTo(res.config.resource_name);
  res.registration = std::make_unique<KubeletRegistration>(
      std::move(req), [post, attempt](lifecycle::RegisterOutcome outcome, std::string detail) {
        post(lifecycle::Event::RegisterDone(attempt, outcome, std::move(detail)));
      });
}

void DevicePluginFrontEnd::OnWatcherGetInfo() {
  if (auto_deciding_) {
    DecideAutoMode(frontend::RegistrationMode::kWatcher,
                   "the kubelet's plugin watcher called GetInfo");
  }
}

void DevicePluginFrontEnd::DecideAutoMode(frontend::RegistrationMode mode, std::string_view why) {
  if (!auto_deciding_) return;
  auto_deciding_ = false;
  auto_timer_.reset();
  log::Info(Cat(
      "auto: ", why, "; using ",
      mode == frontend::RegistrationMode::kWatcher ? "watcher mode" : "kubelet.sock registration"));
  if (mode == mode_) return;
  mode_ = mode;
  RemoveDeadSockets();
  const auto fsm_mode = mode == frontend::RegistrationMode::kWatcher ? lifecycle::Mode::kWatcher
                                                                     : lifecycle::Mode::kKubelet;
  for (auto& [name, res] : resources_) {
    res->own_channel.reset();  // the socket moves to the other directory
    Drive(*res, lifecycle::Event::Start(fsm_mode));
  }
}

}  // namespace rdmadp::deviceplugin
