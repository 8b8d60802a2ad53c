#include "test/support/kubelet_sim.h"

#include <grpcpp/server_posix.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/status/status.h"
#include "pkg/api/pluginregistration.grpc.pb.h"
#include "pkg/config/k8s_names.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/text/cat.h"

namespace rdmadp::testing {
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr milliseconds kReconcilePeriod{1000};  // plugin_manager.go loopSleepDuration
constexpr milliseconds kFirstOpBackoff{500};    // goroutinemap exponential back-off
constexpr milliseconds kMaxOpBackoff{122000};   // 2 min 2 s

std::shared_ptr<grpc::Channel> LocalChannel(const std::string& path) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(4 * 1024 * 1024);  // grpc-go's default, as the kubelet
  // grpc-go dials a fresh connection each time; gRPC C++ would otherwise share a
  // process-wide subchannel, with the reconnect back-off of an earlier, broken connection.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel("unix://" + path, grpc::InsecureChannelCredentials(), args);
}

int64_t MsBetween(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration_cast<milliseconds>(b - a).count();
}

}  // namespace

const char* EraName(KubeletEra era) {
  switch (era) {
    case KubeletEra::kV124:
      return "v1.24";
    case KubeletEra::kV125to136:
      return "v1.25-1.36";
    case KubeletEra::kV137:
      return "v1.37";
  }
  return "?";
}

struct KubeletSimulator::Client {
  std::string name;
  std::string endpoint;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub;
  grpc::ClientContext stream_ctx;
  bool connected = false;  // Connect finished (the kubelet's c.grpc is set)
  bool streaming = false;
  bool ended = false;
};

class KubeletSimulator::RegistrationService final : public v1beta1::Registration::Service {
 public:
  explicit RegistrationService(KubeletSimulator* sim) : sim_(sim) {}
  grpc::Status Register(grpc::ServerContext* /*ctx*/, const v1beta1::RegisterRequest* request,
                        v1beta1::Empty* /*response*/) override {
    return sim_->HandleRegister(*request);
  }

 private:
  KubeletSimulator* const sim_;
};

KubeletSimulator::KubeletSimulator(std::string root_dir, KubeletEra era)
    : root_(std::move(root_dir)), era_(era) {}

KubeletSimulator::~KubeletSimulator() { Stop(); }

bool KubeletSimulator::Stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

void KubeletSimulator::Note(const std::string& event) {
  state_.events.push_back(event);
  cv_.notify_all();
}

void KubeletSimulator::StartThread(std::function<void()> fn) {
  if (stopping_) return;
  threads_.emplace_back(std::move(fn));
}

absl::Status KubeletSimulator::Start() {
  fs::create_directories(device_plugin_dir());
  // CleanupPluginDirectory: every socket goes (ours and the plugins'), the checkpoint stays.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(device_plugin_dir(), ec)) {
    if (entry.is_socket(ec)) fs::remove(entry.path(), ec);
  }
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  for (auto& [type, handler] : handlers_) handler->KubeletStarted();
  service_ = std::make_unique<RegistrationService>(this);
  grpc::ServerBuilder builder;
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) return absl::UnavailableError("kubelet sim: cannot start the gRPC server");
  // net.Listen("unix", ...): socket, bind, listen, as grpc-go's server does.
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, kubelet_socket().c_str(), sizeof(addr.sun_path) - 1);
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 128) != 0) {
    return absl::UnavailableError("kubelet sim: cannot listen on " + kubelet_socket());
  }
  accept_stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  acceptor_ = std::thread([this, server = server_.get()] {
    while (true) {
      pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {accept_stop_fd_, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
      if (fds[1].revents != 0) return;
      const int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (conn >= 0) grpc::AddInsecureChannelFromFd(server, conn);
    }
  });
  {
    std::lock_guard lock(mu_);
    // Checkpointed resources come back as stopped endpoints: capacity, no allocatable.
    for (auto& [name, res] : state_.resources) {
      if (res.capacity > 0) {
        res.zero_since = SteadyClock::now();
        ++res.zero_windows;
      }
    }
    Note(Cat("kubelet started (", EraName(era_), ")"));
  }
  if (watcher_enabled_) {
    fs::create_directories(plugins_registry_dir());
    fs::create_directories(root_ + "/plugins");  // the kubelet makes both at start
    watcher_stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
    {
      std::lock_guard lock(mu_);
      watcher_listed_ = false;
    }
    watcher_ = std::thread([this] { WatcherLoop(); });
    // Start() returns once the watcher has listed plugins_registry: a plugin that creates
    // its socket while the first listing runs is seen twice (the listing and the inotify
    // event; the kubelet's own watcher too), which re-registers it once, a start-up
    // artefact of the test, not of a node where the kubelet long runs before the plugin.
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(5), [this] { return watcher_listed_; });
  }
  return absl::OkStatus();
}

void KubeletSimulator::Kill() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  for (auto& [type, handler] : handlers_) handler->KubeletStopped();
  // A dying process closes everything at once; a plugin reacting to its stream's end must
  // never find the listener still accepting. So: the listener first, then the accepted
  // connections (server shutdown), then the streams.
  if (acceptor_.joinable()) {
    const uint64_t one = 1;
    ssize_t ignored = ::write(accept_stop_fd_, &one, sizeof(one));
    (void)ignored;
    acceptor_.join();
    ::close(accept_stop_fd_);
    accept_stop_fd_ = -1;
  }
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);  // the file stays: connect() now gets ECONNREFUSED
    listen_fd_ = -1;
  }
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_.reset();
  }
  {
    std::lock_guard lock(mu_);
    for (auto& c : clients_) c->stream_ctx.TryCancel();
  }
  if (watcher_.joinable()) {
    const uint64_t one = 1;
    ssize_t ignored = ::write(watcher_stop_fd_, &one, sizeof(one));
    (void)ignored;
    watcher_.join();
    ::close(watcher_stop_fd_);
    watcher_stop_fd_ = -1;
  }
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    for (auto& c : clients_) c->stream_ctx.TryCancel();
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  std::lock_guard lock(mu_);
  const auto now = SteadyClock::now();
  for (auto& [name, res] : state_.resources) {
    if (res.zero_since) res.zero_allocatable_ms += MsBetween(*res.zero_since, now);
    res.zero_since.reset();
    res.allocatable = 0;
    res.stream_open = false;
  }
  clients_.clear();
  current_.clear();
  by_path_.clear();
  desired_.clear();
  actual_.clear();
  running_ops_.clear();
  backoff_.clear();
  Note("kubelet killed");
}

absl::Status KubeletSimulator::Restart(milliseconds downtime) {
  Kill();
  if (downtime.count() > 0) std::this_thread::sleep_for(downtime);  // the outage itself
  return Start();
}

void KubeletSimulator::Stop() {
  Kill();
  std::error_code ec;
  fs::remove(kubelet_socket(), ec);
}

void KubeletSimulator::SetRegisterDelay(milliseconds delay) {
  std::lock_guard lock(mu_);
  register_delay_ = delay;
}

void KubeletSimulator::RejectNextWatcherRegistrations(int n) {
  std::lock_guard lock(mu_);
  reject_watcher_ = n;
}

bool KubeletSimulator::Dial(const std::shared_ptr<grpc::Channel>& channel, milliseconds timeout) {
  const auto deadline = std::chrono::system_clock::now() + timeout;
  while (std::chrono::system_clock::now() < deadline) {
    // Short slices, so that Kill() never waits for a 10 s dial.
    auto slice = std::min(deadline, std::chrono::system_clock::now() + milliseconds(100));
    if (channel->WaitForConnected(slice)) return true;
    if (Stopping()) return false;
  }
  return false;
}

grpc::Status KubeletSimulator::HandleRegister(const v1beta1::RegisterRequest& request) {
  const std::string& name = request.resource_name();
  {
    std::unique_lock lock(mu_);
    ++state_.register_calls;
    ++state_.resources[name].register_calls;
    Note("register received " + name);
    if (register_delay_.count() > 0) {
      cv_.wait_for(lock, register_delay_, [this] { return stopping_; });
    }
    if (stopping_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "kubelet stopping");
  }
  auto reject = [&](const std::string& message) {
    std::lock_guard lock(mu_);
    state_.rejected.push_back(message);
    Note("rejected " + name + ": " + message);
    return grpc::Status(grpc::StatusCode::UNKNOWN, message);
  };
  if (request.version() != "v1beta1") {
    return reject(Cat("requested API version \"", request.version(),
                      "\" is not supported by kubelet. Supported version is [\"v1beta1\"]"));
  }
  if (!config::ExtendedResourceNameProblem(name).empty()) {
    return reject(Cat("the ResourceName \"", name, "\" is invalid"));
  }
  const std::string endpoint = Cat(device_plugin_dir(), "/", request.endpoint());
  if (era_ == KubeletEra::kV124) {
    // go m.addEndpoint(r): answered at once, options from the request.
    std::lock_guard lock(mu_);
    StartThread(
        [this, name, endpoint, options = request.options()] { Connect(name, endpoint, &options); });
    return grpc::Status::OK;
  }
  const std::string error = Connect(name, endpoint, nullptr);
  if (!error.empty()) return reject(error);
  return grpc::Status::OK;
}

std::string KubeletSimulator::Connect(const std::string& name, const std::string& endpoint,
                                      const v1beta1::DevicePluginOptions* request_options) {
  auto client = std::make_shared<Client>();
  client->name = name;
  client->endpoint = endpoint;
  client->channel = LocalChannel(endpoint);
  if (era_ == KubeletEra::kV125to136) {
    std::lock_guard lock(mu_);
    current_[name] = client;  // registerClient comes before Connect
  }
  auto forget = [&] {
    std::lock_guard lock(mu_);
    if (auto it = current_.find(name); it != current_.end() && it->second == client) {
      current_.erase(it);
    }
  };
  if (!Dial(client->channel, milliseconds(10000))) {
    forget();
    return Cat("failed to dial device plugin: context deadline exceeded (", endpoint, ")");
  }
  client->stub = v1beta1::DevicePlugin::NewStub(client->channel);
  v1beta1::DevicePluginOptions options;
  if (request_options != nullptr) {
    options = *request_options;
  } else {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status s = client->stub->GetDevicePluginOptions(&ctx, v1beta1::Empty(), &options);
    if (!s.ok()) {
      forget();
      return "failed to get device plugin options: " + s.error_message();
    }
  }
  std::lock_guard lock(mu_);
  if (stopping_) return "kubelet stopping";
  if (era_ == KubeletEra::kV137) {
    auto& paths = by_path_[name];
    if (paths.count(endpoint) > 0) return "device plugin already connected: " + endpoint;
    paths[endpoint] = client;
  }
  current_[name] = client;  // the old client is not closed, in any era
  client->connected = true;
  clients_.push_back(client);
  SimResource& res = state_.resources[name];
  res.endpoint = endpoint;
  res.registrations++;
  res.has_options = true;
  res.options = options;
  StartThread([this, client] { Consume(client); });
  Note("registered " + name + " at " + endpoint);
  return "";
}

std::shared_ptr<KubeletSimulator::Client> KubeletSimulator::CurrentClient(
    const std::string& name) const {
  auto it = current_.find(name);
  return it == current_.end() ? nullptr : it->second;
}

void KubeletSimulator::SetAllocatable(SimResource& res, int64_t value) {
  const auto now = SteadyClock::now();
  if (res.zero_since && (value > 0 || res.capacity == 0)) {
    res.zero_allocatable_ms += MsBetween(*res.zero_since, now);
    res.zero_since.reset();
  }
  if (value == 0 && res.capacity > 0 && !res.zero_since) {
    res.zero_since = now;
    ++res.zero_windows;
  }
  res.allocatable = value;
}

void KubeletSimulator::MarkUnhealthy(const std::string& name) {
  SimResource& res = state_.resources[name];
  res.stream_open = false;
  SetAllocatable(res, 0);
}

void KubeletSimulator::Disconnect(const std::shared_ptr<Client>& client) {
  if (CurrentClient(client->name) == client) current_.erase(client->name);
  if (auto it = by_path_.find(client->name); it != by_path_.end()) {
    auto p = it->second.find(client->endpoint);
    if (p != it->second.end() && p->second == client) it->second.erase(p);
    if (!it->second.empty() && current_.count(client->name) == 0) {
      current_[client->name] = it->second.begin()->second;  // promoted
    }
  }
  // Disconnect() closes the connection only if Connect() got that far (c.grpc != nil);
  // a client disconnected mid-Connect carries on once its Connect completes.
  if (client->connected) client->stream_ctx.TryCancel();
  if (current_.count(client->name) == 0) MarkUnhealthy(client->name);
  Note("disconnected " + client->name + " at " + client->endpoint);
}

void KubeletSimulator::OnClientEnded(const std::shared_ptr<Client>& client) {
  if (stopping_) return;  // the whole process is going away
  const std::string& name = client->name;
  const bool was_current = CurrentClient(name) == client;
  if (was_current) state_.resources[name].streams_ended++;
  switch (era_) {
    case KubeletEra::kV124:
      // runEndpoint: only the current endpoint's end marks the resource unhealthy.
      if (was_current) {
        current_.erase(name);
        MarkUnhealthy(name);
      }
      break;
    case KubeletEra::kV125to136:
      // runClient: whichever client is current now is disconnected (#121994).
      if (auto current = CurrentClient(name)) Disconnect(current);
      break;
    case KubeletEra::kV137: {
      // Removed by path, even if a newer endpoint took that path meanwhile.
      auto& paths = by_path_[name];
      paths.erase(client->endpoint);
      auto current = CurrentClient(name);
      if (current && current->endpoint == client->endpoint) current_.erase(name);
      if (current_.count(name) == 0) {
        if (paths.empty()) {
          MarkUnhealthy(name);
        } else {
          current_[name] = paths.begin()->second;  // promoted; its device list is not re-read
        }
      }
      break;
    }
  }
  SimResource& res = state_.resources[name];
  auto current = CurrentClient(name);
  res.stream_open = current && current->streaming && !current->ended;
  Note(Cat("stream ended ", name, " at ", client->endpoint));
}

void KubeletSimulator::Consume(std::shared_ptr<Client> client) {
  auto reader = client->stub->ListAndWatch(&client->stream_ctx, v1beta1::Empty());
  {
    std::lock_guard lock(mu_);
    client->streaming = true;
    if (CurrentClient(client->name) == client) state_.resources[client->name].stream_open = true;
  }
  v1beta1::ListAndWatchResponse msg;
  while (reader->Read(&msg)) {
    std::lock_guard lock(mu_);
    // One device view per resource: every live stream writes into it, the last one wins.
    SimResource& res = state_.resources[client->name];
    res.snapshots.push_back(msg);
    res.capacity = msg.devices_size();
    int64_t healthy = 0;
    for (const auto& d : msg.devices()) healthy += d.health() == "Healthy" ? 1 : 0;
    SetAllocatable(res, healthy);
    Note(Cat("snapshot ", client->name, ": capacity ", res.capacity, ", allocatable ",
             res.allocatable));
  }
  grpc::Status status = reader->Finish();
  std::lock_guard lock(mu_);
  client->ended = true;
  OnClientEnded(client);
}

// ---- plugin watcher ----

void KubeletSimulator::WatcherLoop() {
  UniqueFd in(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  ::inotify_add_watch(in.Get(), plugins_registry_dir().c_str(),
                      IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM);
  auto add = [&](const std::string& name, bool created) {  // requires mu_
    if (name.empty() || name[0] == '.') return;
    const std::string path = plugins_registry_dir() + "/" + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return;
    desired_[path] = ++next_uuid_;
    if (created) ++state_.registry_creates;
    Note("watcher saw " + path);
  };
  {
    std::lock_guard lock(mu_);
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(plugins_registry_dir(), ec)) {
      add(e.path().filename(), /*created=*/false);
    }
    Reconcile();  // wait.Until runs the first pass at once
    watcher_listed_ = true;
    cv_.notify_all();
  }
  auto next_pass = SteadyClock::now() + kReconcilePeriod;
  while (true) {
    const auto wait = std::max<int64_t>(0, MsBetween(SteadyClock::now(), next_pass));
    pollfd fds[2] = {{in.Get(), POLLIN, 0}, {watcher_stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(wait)) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    alignas(inotify_event) char buf[4096];
    ssize_t n;
    std::lock_guard lock(mu_);
    while ((n = ::read(in.Get(), buf, sizeof(buf))) > 0) {
      for (char* p = buf; p < buf + n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(p);
        p += sizeof(inotify_event) + ev->len;
        const std::string name = ev->len > 0 ? ev->name : "";
        if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
          add(name, /*created=*/true);
        } else if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
          desired_.erase(plugins_registry_dir() + "/" + name);
        }
      }
    }
    if (SteadyClock::now() >= next_pass) {
      Reconcile();
      next_pass = SteadyClock::now() + kReconcilePeriod;
    }
  }
}

void KubeletSimulator::Reconcile() {
  const auto now = SteadyClock::now();
  auto refused = [&](const std::string& path) {
    if (running_ops_.count(path) > 0) return true;  // goroutinemap: AlreadyExists
    auto b = backoff_.find(path);
    return b != backoff_.end() && now < b->second.until;
  };
  // Unregister first: plugins whose socket is gone or was re-created (new UUID).
  for (const auto& [path, plugin] : actual_) {
    auto d = desired_.find(path);
    if (d != desired_.end() && d->second == plugin.uuid) continue;
    if (refused(path)) continue;
    running_ops_.insert(path);
    StartThread([this, path = path, plugin = plugin] { UnregisterOperation(path, plugin); });
  }
  for (const auto& [path, uuid] : desired_) {
    auto a = actual_.find(path);
    if (a != actual_.end() && a->second.uuid == uuid) continue;
    if (refused(path)) continue;
    running_ops_.insert(path);
    StartThread([this, path = path, uuid = uuid] { RegisterOperation(path, uuid); });
  }
}

void KubeletSimulator::OperationDone(const std::string& path, bool failed) {
  running_ops_.erase(path);
  if (!failed) {
    backoff_.erase(path);
  } else {
    Backoff& b = backoff_[path];
    b.last = b.last.count() == 0 ? kFirstOpBackoff : std::min(b.last * 2, kMaxOpBackoff);
    b.until = SteadyClock::now() + b.last;
  }
  cv_.notify_all();
}

void KubeletSimulator::UnregisterOperation(std::string path, WatchedPlugin plugin) {
  if (auto h = handlers_.find(plugin.type); h != handlers_.end()) {
    h->second->Deregister(plugin.name, plugin.endpoint);
    std::lock_guard lock(mu_);
    if (auto a = actual_.find(path); a != actual_.end() && a->second.uuid == plugin.uuid) {
      actual_.erase(a);
    }
    Note("deregistered " + plugin.name + " at " + path);
    OperationDone(path, false);
    return;
  }
  std::lock_guard lock(mu_);
  std::shared_ptr<Client> target;
  if (era_ == KubeletEra::kV137) {
    auto it = by_path_.find(plugin.name);
    if (it != by_path_.end()) {
      auto p = it->second.find(plugin.endpoint);
      if (p != it->second.end()) target = p->second;
    }
  } else {
    target = CurrentClient(plugin.name);  // DeRegisterPlugin by name
  }
  if (target) {
    if (era_ == KubeletEra::kV124) {
      target->stream_ctx.TryCancel();  // e.stop(): runEndpoint marks it unhealthy
    } else {
      Disconnect(target);
    }
  }
  if (auto a = actual_.find(path); a != actual_.end() && a->second.uuid == plugin.uuid) {
    actual_.erase(a);
  }
  Note("deregistered " + plugin.name + " at " + path);
  OperationDone(path, false);
}

void KubeletSimulator::RegisterOperation(std::string path, uint64_t uuid) {
  auto fail = [&](const std::string& why) {
    std::lock_guard lock(mu_);
    Note("watcher register failed at " + path + ": " + why);
    OperationDone(path, true);
  };
  auto channel = LocalChannel(path);
  if (!Dial(channel, milliseconds(10000))) return fail("dial failed");
  auto reg = pluginregistration::Registration::NewStub(channel);
  pluginregistration::PluginInfo info;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    grpc::Status s = reg->GetInfo(&ctx, pluginregistration::InfoRequest(), &info);
    if (!s.ok()) return fail("GetInfo: " + s.error_message());
  }
  auto notify = [&](bool ok, const std::string& error) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    pluginregistration::RegistrationStatus status;
    status.set_plugin_registered(ok);
    status.set_error(error);
    pluginregistration::RegistrationStatusResponse resp;
    grpc::Status s = reg->NotifyRegistrationStatus(&ctx, status, &resp);
    std::lock_guard lock(mu_);
    if (!ok) state_.rejected.push_back(error);
    if (ok && s.ok()) ++state_.watcher_notifies_ok;
    Note(Cat("watcher notified ", info.name(), ": ", ok ? "registered" : error));
    return s.ok();
  };
  if (auto h = handlers_.find(info.type()); h != handlers_.end()) {
    {
      std::lock_guard lock(mu_);
      actual_[path] = {uuid, info.name(), info.endpoint(), info.type()};
    }
    const std::vector<std::string> versions(info.supported_versions().begin(),
                                            info.supported_versions().end());
    const std::string error = h->second->Register(info.name(), info.endpoint(), versions);
    if (!error.empty()) {
      notify(false, "RegisterPlugin error -- plugin registration failed with err: " + error);
      return fail("RegisterPlugin");
    }
    if (!notify(true, "")) return fail("notify");
    std::lock_guard lock(mu_);
    OperationDone(path, false);
    return;
  }
  if (info.type() != "DevicePlugin") {
    notify(false, "RegisterPlugin error -- no handler registered for plugin type: " + info.type());
    return fail("no handler");
  }
  bool has_version = false;
  for (const auto& v : info.supported_versions()) has_version = has_version || v == "v1beta1";
  std::string invalid;
  if (!has_version) {
    invalid = "manager version, v1beta1, is not among plugin supported versions";
  } else if (!config::ExtendedResourceNameProblem(info.name()).empty()) {
    invalid = Cat("invalid name of device plugin socket: the ResourceName \"", info.name(),
                  "\" is invalid");
  }
  if (!invalid.empty()) {
    notify(false, "RegisterPlugin error -- plugin validation failed with err: " + invalid);
    return fail("validation");
  }
  const std::string endpoint = info.endpoint().empty() ? path : info.endpoint();
  bool forced = false;
  {
    std::lock_guard lock(mu_);
    actual_[path] = {uuid, info.name(), endpoint, info.type()};  // before RegisterPlugin
    if (reject_watcher_ > 0) {
      --reject_watcher_;
      forced = true;
    }
  }
  const std::string error =
      forced ? "forced by test" : Connect(info.name(), endpoint, /*request_options=*/nullptr);
  if (!error.empty()) {
    notify(false, "RegisterPlugin error -- plugin registration failed with err: " + error);
    return fail("RegisterPlugin");  // not retried: the plugin is in the actual state
  }
  if (!notify(true, "")) return fail("notify");
  std::lock_guard lock(mu_);
  OperationDone(path, false);
}

// ---- queries ----

bool KubeletSimulator::WaitFor(const std::function<bool(const SimState&)>& pred,
                               milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return pred(state_); });
}

bool KubeletSimulator::WaitRegistered(const std::vector<std::string>& resources, int times,
                                      milliseconds timeout) {
  return WaitFor(
      [&](const SimState& s) {
        for (const auto& name : resources) {
          auto it = s.resources.find(name);
          if (it == s.resources.end() || it->second.registrations < times ||
              !it->second.stream_open || it->second.snapshots.empty()) {
            return false;
          }
        }
        return true;
      },
      timeout);
}

SimState KubeletSimulator::State() const {
  std::lock_guard lock(mu_);
  SimState copy = state_;
  const auto now = SteadyClock::now();
  for (auto& [name, res] : copy.resources) {  // an open window counts up to now
    if (res.zero_since) res.zero_allocatable_ms += MsBetween(*res.zero_since, now);
  }
  return copy;
}

absl::StatusOr<v1beta1::AllocateResponse> KubeletSimulator::Allocate(
    const std::string& resource, const std::vector<std::string>& ids) {
  std::shared_ptr<Client> client;
  {
    std::lock_guard lock(mu_);
    client = CurrentClient(resource);
    if (!client || !client->streaming || client->ended) {
      return absl::FailedPreconditionError("cannot allocate unregistered device " + resource);
    }
  }
  v1beta1::AllocateRequest request;
  auto* container = request.add_container_requests();
  for (const auto& id : ids) container->add_devices_ids(id);
  v1beta1::AllocateResponse response;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status s = client->stub->Allocate(&ctx, request, &response);
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  }
  if (response.container_responses_size() < 1) {
    return absl::InternalError("no containers return in allocation response");
  }
  return response;
}

absl::StatusOr<v1beta1::PreferredAllocationResponse> KubeletSimulator::GetPreferredAllocation(
    const std::string& resource, const std::vector<std::string>& available,
    const std::vector<std::string>& must_include, int size) {
  std::shared_ptr<Client> client;
  {
    std::lock_guard lock(mu_);
    client = CurrentClient(resource);
    if (!client || !client->connected) {
      return absl::FailedPreconditionError("no endpoint for " + resource);
    }
  }
  // The kubelet's endpoint.getPreferredAllocation: one container request.
  v1beta1::PreferredAllocationRequest request;
  auto* container = request.add_container_requests();
  for (const auto& id : available) container->add_available_deviceids(id);
  for (const auto& id : must_include) container->add_must_include_deviceids(id);
  container->set_allocation_size(size);
  v1beta1::PreferredAllocationResponse response;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status s = client->stub->GetPreferredAllocation(&ctx, request, &response);
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  }
  return response;
}

void KubeletSimulator::CancelStream(const std::string& resource) {
  std::lock_guard lock(mu_);
  if (auto c = CurrentClient(resource)) c->stream_ctx.TryCancel();
}

}  // namespace rdmadp::testing
