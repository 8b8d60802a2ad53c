// Manager: the thin adapter between each resource's registration state machine
// (pkg/lifecycle) and the world: it observes facts, hands in events and carries out the
// actions (serve a socket, start or cancel a Register, arm a timer, log). Loop thread only;
// other threads reach it through PostTo().
#include <sys/stat.h>

#include <ctime>

#include "pkg/log/log.h"
#include "pkg/manager/manager_internal.h"
#include "pkg/server/socket_path.h"

namespace rdmadp::manager {

lifecycle::Facts Manager::CurrentFacts(const Resource& res) const {
  lifecycle::Facts facts{.now = lifecycle::Clock::now(), .kubelet_socket = {}};
  if (res.server) facts.streams_opened = res.server->streams_opened();
  facts.kubelet_socket = SocketIdOf(KubeletSocket());
  return facts;
}

std::function<void(lifecycle::Event)> Manager::PostTo(const std::string& name) {
  return [this, name](lifecycle::Event event) {
    loop_->Post([this, name, event = std::move(event)] {
      if (stopping_) return;
      if (auto it = resources_.find(name); it != resources_.end()) Drive(*it->second, event);
    });
  };
}

void Manager::Drive(Resource& res, const lifecycle::Event& event) {
  using Kind = lifecycle::Action::Kind;
  lifecycle::Facts facts = CurrentFacts(res);
  if (event.kind == lifecycle::Event::Kind::kStreamEnded && facts.kubelet_socket.present()) {
    facts.kubelet_listening = server::SocketHasListener(KubeletSocket());
  }
  const lifecycle::Phase before = res.fsm->phase();
  const std::vector<lifecycle::Action> actions = res.fsm->Handle(event, facts);
  if (log::Enabled(log::Level::kDebug)) {
    log::Debug(Cat(res.config.FullName(), ": ", lifecycle::Describe(event), " in ",
                   lifecycle::PhaseName(before), " -> ", lifecycle::PhaseName(res.fsm->phase())));
  }
  for (const lifecycle::Action& action : actions) {
    switch (action.kind) {
      case Kind::kServe:
        Drive(res, ServeSocket(res, action.token));
        break;
      case Kind::kDropServer:  // a Register in flight is the machine's to cancel (or keep)
        DropServer(res);
        break;
      case Kind::kRegister:
        StartRegistration(res, action.token, action.fresh);
        break;
      case Kind::kCancelRegister:
        res.registration.reset();
        break;
      case Kind::kArmTimer:
        res.timer_token = action.token;
        // "At once" still goes through the loop: no recursion, and other events interleave.
        res.timer->ArmOnce(std::max(action.delay, milliseconds(1)));
        break;
      case Kind::kDisarmTimer:
        res.timer->Disarm();
        res.timer_token = 0;
        break;
      case Kind::kLog:
        switch (action.level) {
          case lifecycle::Action::Level::kDebug:
            log::Debug(action.message);
            break;
          case lifecycle::Action::Level::kInfo:
            log::Info(action.message);
            break;
          case lifecycle::Action::Level::kWarn:
            ReportProblem(log::Level::kWarn, "registration", action.message);
            break;
        }
        break;
    }
  }
}

lifecycle::Event Manager::ServeSocket(Resource& res, uint64_t server_token) {
  DropServer(res);
  if (!PathExists(SocketDir())) {
    const std::string why = Cat(SocketDir(), " does not exist yet; will serve when the kubelet ",
                                "creates it (is --kubelet-root-dir right?)");
    // Without a watch that would see it appear, wait with back-off instead.
    const bool watched = root_dir_watch_ >= 0 || ancestor_watch_ >= 0;
    return lifecycle::Event::ServeFailed(server_token, watched, why);
  }
  auto post = PostTo(res.config.resource_name);
  server::ResourceServerOptions opts;
  opts.socket_path =
      Cat(SocketDir(), "/", server::SocketFileName(res.config.resource_name, instance_id_));
  opts.serve_watcher_registration = WatcherMode();
  opts.on_stream_open = [post, server_token](uint64_t stream) {
    post(lifecycle::Event::StreamOpened(server_token, stream, WallNowNs()));
  };
  opts.on_stream_end = [post, server_token](uint64_t stream, bool newest) {
    post(lifecycle::Event::StreamEnded(server_token, stream, newest));
  };
  opts.watcher.on_get_info = [this, post, server_token] {
    loop_->Post([this] { OnWatcherGetInfo(); });
    post(lifecycle::Event::GetInfo(server_token));
  };
  opts.watcher.on_status = [post, server_token](bool ok, const std::string& error) {
    post(lifecycle::Event::Notify(server_token, ok, error, WallNowNs()));
  };
  opts.on_allocate = [trimmer = heap_trimmer_.get()] { trimmer->Activity(); };
  auto started = server::ResourceServer::Start(std::move(opts), Served(res));
  if (!started.ok()) {
    return lifecycle::Event::ServeFailed(server_token, false,
                                         std::string(started.status().message()));
  }
  res.server = std::move(*started);
  log::Info(Cat(res.config.FullName(), ": serving on ", res.server->socket_path()));
  return lifecycle::Event::ServeOk(server_token);
}

void Manager::StartRegistration(Resource& res, uint64_t attempt, bool fresh) {
  res.registration.reset();  // the machine cancelled any earlier one already
  if (!res.server) return;
  server::RegistrationRequest req;
  req.own_socket = res.server->socket_path();
  req.kubelet_socket = KubeletSocket();
  if (!kubelet_channel_) kubelet_channel_ = server::UnixChannel(KubeletSocket());
  if (!res.own_channel) res.own_channel = server::UnixChannel(req.own_socket);
  req.own_channel = res.own_channel;
  req.kubelet_channel = kubelet_channel_;
  req.self_check_timeout = kSelfCheckTimeout;
  req.register_timeout = kRegisterTimeout;
  req.resource_name = res.config.FullName();
  req.probe_kubelet = !fresh;
  auto post = PostTo(res.config.resource_name);
  res.registration = std::make_unique<server::KubeletRegistration>(
      std::move(req), [post, attempt](lifecycle::RegisterOutcome outcome, std::string detail) {
        post(lifecycle::Event::RegisterDone(attempt, outcome, std::move(detail)));
      });
}

}  // namespace rdmadp::manager
