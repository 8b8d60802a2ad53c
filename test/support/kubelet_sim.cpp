#include "test/support/kubelet_sim.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "absl/status/status.h"
#include "pkg/api/pluginregistration.grpc.pb.h"
#include "pkg/config/k8s_names.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/text/cat.h"

namespace rdmadp::testing {
namespace fs = std::filesystem;

struct KubeletSimulator::Client {
  std::string endpoint;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub;
  grpc::ClientContext stream_ctx;
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

KubeletSimulator::KubeletSimulator(std::string root_dir) : root_(std::move(root_dir)) {}

KubeletSimulator::~KubeletSimulator() { Stop(); }

absl::Status KubeletSimulator::Start() {
  fs::create_directories(device_plugin_dir());
  std::error_code ec;
  fs::remove(kubelet_socket(), ec);
  service_ = std::make_unique<RegistrationService>(this);
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort("unix:" + kubelet_socket(), grpc::InsecureServerCredentials(), &bound);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_ || bound == 0) return absl::UnavailableError("kubelet sim: cannot listen");
  if (watcher_enabled_) {
    fs::create_directories(plugins_registry_dir());
    watcher_stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
    watcher_ = std::thread([this] { WatchRegistry(); });
  }
  std::lock_guard lock(mu_);
  Note("kubelet started");
  return absl::OkStatus();
}

void KubeletSimulator::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (watcher_.joinable()) {
    const uint64_t one = 1;
    ssize_t ignored = ::write(watcher_stop_fd_, &one, sizeof(one));
    (void)ignored;
    watcher_.join();
    ::close(watcher_stop_fd_);
    watcher_stop_fd_ = -1;
    std::lock_guard lock(mu_);
    watched_.clear();
  }
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_.reset();
  }
  std::vector<std::thread> consumers;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, client] : clients_) client->stream_ctx.TryCancel();
    clients_.clear();
    consumers.swap(consumers_);
  }
  for (auto& t : consumers) t.join();
  std::error_code ec;
  fs::remove(kubelet_socket(), ec);
  std::lock_guard lock(mu_);
  stopping_ = false;
}

absl::Status KubeletSimulator::Restart() {
  Stop();
  {
    std::lock_guard lock(mu_);
    Note("kubelet restarting");
  }
  // CleanupPluginDirectory: every socket except the checkpoint goes.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(device_plugin_dir(), ec)) {
    if (entry.is_socket()) fs::remove(entry.path(), ec);
  }
  return Start();
}

void KubeletSimulator::Note(const std::string& event) {
  state_.events.push_back(event);
  cv_.notify_all();
}

void KubeletSimulator::SetRegisterDelay(std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  register_delay_ = delay;
}

grpc::Status KubeletSimulator::HandleRegister(const v1beta1::RegisterRequest& request) {
  const std::string& name = request.resource_name();
  {
    std::unique_lock lock(mu_);
    Note("register received " + name);
    if (register_delay_.count() > 0) {
      cv_.wait_for(lock, register_delay_, [this] { return stopping_; });
      if (stopping_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "kubelet stopping");
    }
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
  const std::string error = Connect(name, Cat(device_plugin_dir(), "/", request.endpoint()));
  if (!error.empty()) return reject(error);
  return grpc::Status::OK;
}

std::string KubeletSimulator::Connect(const std::string& name, const std::string& endpoint) {
  auto client = std::make_shared<Client>();
  client->endpoint = endpoint;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(4 * 1024 * 1024);  // grpc-go's default, as the kubelet
  // grpc-go dials a fresh connection per registration; gRPC C++ would otherwise share a
  // process-wide subchannel, with the reconnect back-off of an earlier, broken connection.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  client->channel = grpc::CreateCustomChannel("unix://" + client->endpoint,
                                              grpc::InsecureChannelCredentials(), args);
  if (!client->channel->WaitForConnected(std::chrono::system_clock::now() +
                                         std::chrono::seconds(10))) {
    return Cat("failed to dial device plugin: context deadline exceeded (", client->endpoint, ")");
  }
  client->stub = v1beta1::DevicePlugin::NewStub(client->channel);
  v1beta1::DevicePluginOptions options;
  {
    grpc::ClientContext ctx;
    v1beta1::Empty empty;
    grpc::Status s = client->stub->GetDevicePluginOptions(&ctx, empty, &options);
    if (!s.ok()) return "failed to get device plugin options: " + s.error_message();
  }
  std::lock_guard lock(mu_);
  if (auto old = clients_.find(name); old != clients_.end()) {
    old->second->stream_ctx.TryCancel();  // newest registration wins
  }
  clients_[name] = client;
  SimResource& res = state_.resources[name];
  res.endpoint = client->endpoint;
  res.registrations++;
  res.has_options = true;
  res.options = options;
  // The stream starts before Register is answered, as in kubelets since ~1.26.
  consumers_.emplace_back([this, client, name] { Consume(client, name); });
  Note("registered " + name + " at " + client->endpoint);
  return "";
}

void KubeletSimulator::RejectNextWatcherRegistrations(int n) {
  std::lock_guard lock(mu_);
  reject_watcher_ = n;
}

void KubeletSimulator::RegisterWatched(const std::string& socket_path) {
  auto channel = grpc::CreateChannel("unix://" + socket_path, grpc::InsecureChannelCredentials());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    return;
  }
  auto reg = pluginregistration::Registration::NewStub(channel);
  pluginregistration::PluginInfo info;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    if (!reg->GetInfo(&ctx, pluginregistration::InfoRequest(), &info).ok()) return;
  }
  auto notify = [&](bool ok, const std::string& error) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    pluginregistration::RegistrationStatus status;
    status.set_plugin_registered(ok);
    status.set_error(error);
    pluginregistration::RegistrationStatusResponse resp;
    reg->NotifyRegistrationStatus(&ctx, status, &resp);
    std::lock_guard lock(mu_);
    if (!ok) state_.rejected.push_back(error);
    Note(Cat("watcher notified ", info.name(), ": ", ok ? "registered" : error));
  };
  if (info.type() != "DevicePlugin") {
    return notify(false,
                  "RegisterPlugin error -- no handler registered for plugin type: " + info.type());
  }
  bool has_version = false;
  for (const auto& v : info.supported_versions()) has_version = has_version || v == "v1beta1";
  if (!has_version) {
    return notify(false,
                  "plugin validation failed: manager version, v1beta1, is not among "
                  "plugin supported versions");
  }
  if (!config::ExtendedResourceNameProblem(info.name()).empty()) {
    return notify(false, Cat("plugin validation failed: invalid name of device plugin socket: "
                             "the ResourceName \"",
                             info.name(), "\" is invalid"));
  }
  bool reject = false;
  {
    std::lock_guard lock(mu_);
    watched_[socket_path] = info.name();
    if (reject_watcher_ > 0) {
      --reject_watcher_;
      reject = true;
    }
  }
  if (reject) {
    return notify(false, "RegisterPlugin error -- plugin registration failed (forced by test)");
  }
  const std::string endpoint = info.endpoint().empty() ? socket_path : info.endpoint();
  const std::string error = Connect(info.name(), endpoint);
  notify(error.empty(), error.empty() ? "" : "RegisterPlugin error -- " + error);
}

void KubeletSimulator::WatchRegistry() {
  UniqueFd in(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  ::inotify_add_watch(in.Get(), plugins_registry_dir().c_str(),
                      IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM);
  auto consider = [&](const std::string& name) {
    if (name.empty() || name[0] == '.') return;
    const std::string path = plugins_registry_dir() + "/" + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return;
    RegisterWatched(path);
  };
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(plugins_registry_dir(), ec)) {
    consider(e.path().filename());
  }
  while (true) {
    pollfd fds[2] = {{in.Get(), POLLIN, 0}, {watcher_stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    alignas(inotify_event) char buf[4096];
    ssize_t n;
    while ((n = ::read(in.Get(), buf, sizeof(buf))) > 0) {
      for (char* p = buf; p < buf + n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(p);
        p += sizeof(inotify_event) + ev->len;
        const std::string name = ev->len > 0 ? ev->name : "";
        if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
          consider(name);
        } else {
          // Deleted: deregister, which ends the plugin's stream like the kubelet does.
          std::lock_guard lock(mu_);
          auto it = watched_.find(plugins_registry_dir() + "/" + name);
          if (it == watched_.end()) continue;
          if (auto c = clients_.find(it->second); c != clients_.end()) {
            if (c->second->endpoint == it->first) c->second->stream_ctx.TryCancel();
          }
          Note("deregistered " + it->second);
          watched_.erase(it);
        }
      }
    }
  }
}

void KubeletSimulator::Consume(std::shared_ptr<Client> client, std::string resource) {
  v1beta1::Empty empty;
  auto reader = client->stub->ListAndWatch(&client->stream_ctx, empty);
  {
    std::lock_guard lock(mu_);
    if (clients_.count(resource) && clients_[resource] == client) {
      state_.resources[resource].stream_open = true;
    }
  }
  v1beta1::ListAndWatchResponse msg;
  while (reader->Read(&msg)) {
    std::lock_guard lock(mu_);
    if (clients_.count(resource) == 0 || clients_[resource] != client) continue;
    SimResource& res = state_.resources[resource];
    res.snapshots.push_back(msg);
    res.capacity = msg.devices_size();
    res.allocatable = 0;
    for (const auto& d : msg.devices()) res.allocatable += d.health() == "Healthy" ? 1 : 0;
    Note(
        Cat("snapshot ", resource, ": capacity ", res.capacity, ", allocatable ", res.allocatable));
  }
  grpc::Status status = reader->Finish();
  std::lock_guard lock(mu_);
  auto it = clients_.find(resource);
  if (it != clients_.end() && it->second == client) {
    SimResource& res = state_.resources[resource];
    res.stream_open = false;
    res.streams_ended++;
    res.allocatable = 0;  // every device of the resource becomes unhealthy
    clients_.erase(it);
    Note(Cat("stream ended ", resource, ": ", status.error_message()));
  }
}

bool KubeletSimulator::WaitFor(const std::function<bool(const SimState&)>& pred,
                               std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return pred(state_); });
}

bool KubeletSimulator::WaitRegistered(const std::vector<std::string>& resources, int times,
                                      std::chrono::milliseconds timeout) {
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
  return state_;
}

absl::StatusOr<v1beta1::AllocateResponse> KubeletSimulator::Allocate(
    const std::string& resource, const std::vector<std::string>& ids) {
  std::shared_ptr<Client> client;
  {
    std::lock_guard lock(mu_);
    auto it = clients_.find(resource);
    if (it == clients_.end()) {
      return absl::FailedPreconditionError("cannot allocate unregistered device " + resource);
    }
    client = it->second;
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

void KubeletSimulator::CancelStream(const std::string& resource) {
  std::lock_guard lock(mu_);
  if (auto it = clients_.find(resource); it != clients_.end()) it->second->stream_ctx.TryCancel();
}

}  // namespace rdmadp::testing
