#include "test/support/go_like_plugin.h"

#include <filesystem>
#include <utility>

#include "pkg/api/pluginregistration.grpc.pb.h"
#include "pkg/text/cat.h"

namespace rdmadp::testing {
namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

// How often an open ListAndWatch asks its context whether the kubelet ended the stream.
constexpr milliseconds kCancelLook{20};

// <kubelet root>/<plugins_registry | device-plugins>/<name>.sock, <name> without the prefix.
std::string SocketPath(const GoLikeOptions& options) {
  const std::string& resource = options.resource_name;
  const auto slash = resource.rfind('/');
  const std::string name = slash == std::string::npos ? resource : resource.substr(slash + 1);
  const char* dir =
      options.mode == GoRegistration::kWatcher ? "/plugins_registry/" : "/device-plugins/";
  return Cat(options.kubelet_root, dir, name, ".sock");
}

}  // namespace

class GoLikePlugin::DevicePluginService final : public v1beta1::DevicePlugin::Service {
 public:
  explicit DevicePluginService(GoLikePlugin* plugin) : plugin_(plugin) {}

  grpc::Status GetDevicePluginOptions(grpc::ServerContext* /*context*/,
                                      const v1beta1::Empty* /*request*/,
                                      v1beta1::DevicePluginOptions* /*response*/) override {
    plugin_->Update([](GoLikeState& s) { ++s.options_calls; });
    return grpc::Status::OK;  // every option false, as the Go plugin answers
  }

  grpc::Status ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty* /*request*/,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override {
    return plugin_->ListAndWatch(context, writer);
  }

  grpc::Status Allocate(grpc::ServerContext* /*context*/, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* response) override {
    for (int i = 0; i < request->container_requests_size(); ++i) {
      response->add_container_responses();
    }
    plugin_->Update([](GoLikeState& s) { ++s.allocate_calls; });
    return grpc::Status::OK;
  }

  grpc::Status PreStartContainer(grpc::ServerContext* /*context*/,
                                 const v1beta1::PreStartContainerRequest* /*request*/,
                                 v1beta1::PreStartContainerResponse* /*response*/) override {
    return grpc::Status::OK;
  }

 private:
  GoLikePlugin* const plugin_;
};

class GoLikePlugin::RegistrationService final : public pluginregistration::Registration::Service {
 public:
  explicit RegistrationService(GoLikePlugin* plugin) : plugin_(plugin) {}

  grpc::Status GetInfo(grpc::ServerContext* /*context*/,
                       const pluginregistration::InfoRequest* /*request*/,
                       pluginregistration::PluginInfo* info) override {
    info->set_type("DevicePlugin");
    info->set_name(plugin_->options_.resource_name);
    info->set_endpoint(plugin_->socket_path_);  // the same socket serves the device plugin
    info->add_supported_versions("v1alpha1");
    info->add_supported_versions("v1beta1");
    plugin_->Update([](GoLikeState& s) { ++s.get_info_calls; });
    return grpc::Status::OK;
  }

  grpc::Status NotifyRegistrationStatus(
      grpc::ServerContext* /*context*/, const pluginregistration::RegistrationStatus* status,
      pluginregistration::RegistrationStatusResponse* /*response*/) override {
    const bool ok = status->plugin_registered();
    const std::string error = status->error();
    plugin_->Update([&](GoLikeState& s) {
      if (ok) {
        ++s.notified_ok;
        ++s.registrations;
      } else {
        ++s.notified_failed;
        s.errors.push_back(error);
      }
    });
    return grpc::Status::OK;
  }

 private:
  GoLikePlugin* const plugin_;
};

GoLikePlugin::GoLikePlugin(GoLikeOptions options)
    : options_(std::move(options)), socket_path_(SocketPath(options_)) {}

GoLikePlugin::~GoLikePlugin() { Stop(); }

void GoLikePlugin::Update(const std::function<void(GoLikeState&)>& change) {
  std::lock_guard lock(mu_);
  change(state_);
  cv_.notify_all();
}

absl::Status GoLikePlugin::Start() {
  std::error_code ec;
  fs::create_directories(fs::path(socket_path_).parent_path(), ec);  // hostPath DirectoryOrCreate
  fs::remove(socket_path_, ec);  // the Go plugin's Start: cleanup() first
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  device_plugin_ = std::make_unique<DevicePluginService>(this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path_, grpc::InsecureServerCredentials());
  builder.RegisterService(device_plugin_.get());
  if (options_.mode == GoRegistration::kWatcher) {
    registration_ = std::make_unique<RegistrationService>(this);
    builder.RegisterService(registration_.get());
  }
  server_ = builder.BuildAndStart();
  if (!server_) {
    return absl::UnavailableError(Cat("go-like plugin: cannot serve ", socket_path_));
  }
  Update([](GoLikeState& s) { s.serving = true; });
  // Watcher mode: the kubelet's plugin watcher finds the socket; nothing more to do, ever.
  if (options_.mode == GoRegistration::kWatcher) return absl::OkStatus();
  return RegisterWithKubelet();
}

absl::Status GoLikePlugin::RegisterWithKubelet() {
  grpc::ChannelArguments args;
  // A fresh connection, as grpc-go dials one (no shared subchannel, no inherited back-off).
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto channel = grpc::CreateCustomChannel(
      Cat("unix://", options_.kubelet_root, "/device-plugins/kubelet.sock"),
      grpc::InsecureChannelCredentials(), args);
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest request;
  request.set_version("v1beta1");
  request.set_endpoint(fs::path(socket_path_).filename().string());
  request.set_resource_name(options_.resource_name);
  grpc::ClientContext context;
  // The kubelet answers after dialling back (up to 10 s on 1.25+); the Go plugin sets no
  // deadline at all.
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(15));
  v1beta1::Empty reply;
  Update([](GoLikeState& s) { ++s.register_calls; });
  const grpc::Status status = stub->Register(&context, request, &reply);
  Update([&](GoLikeState& s) {
    if (status.ok()) {
      ++s.registrations;
    } else {
      s.errors.push_back(status.error_message());
    }
  });
  if (status.ok()) return absl::OkStatus();
  return absl::UnavailableError(Cat("go-like plugin: Register failed: ", status.error_message()));
}

grpc::Status GoLikePlugin::ListAndWatch(grpc::ServerContext* context,
                                        grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) {
  v1beta1::ListAndWatchResponse response;
  for (int i = 0; i < options_.devices; ++i) {
    v1beta1::Device* device = response.add_devices();
    device->set_id(Cat(i));
    device->set_health("Healthy");
  }
  Update([](GoLikeState& s) {
    ++s.streams_started;
    ++s.streams_open;
  });
  const bool sent = writer->Write(response);
  std::unique_lock lock(mu_);
  // Held until the kubelet ends it or Stop(); either way the handler only returns.
  while (sent && !stopping_ && !context->IsCancelled()) cv_.wait_for(lock, kCancelLook);
  --state_.streams_open;
  if (!stopping_) ++state_.streams_ended;
  cv_.notify_all();
  return grpc::Status::OK;
}

void GoLikePlugin::Stop() {
  if (!server_) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;  // open ListAndWatch handlers return
    cv_.notify_all();
  }
  // Every stream ends and the listener closes; Shutdown returns once every handler has.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_.reset();
  std::error_code ec;
  fs::remove(socket_path_, ec);  // the Go plugin's cleanup(); gRPC may have unlinked it already
  Update([](GoLikeState& s) { s.serving = false; });
}

GoLikeState GoLikePlugin::State() const {
  std::lock_guard lock(mu_);
  return state_;
}

bool GoLikePlugin::WaitFor(const std::function<bool(const GoLikeState&)>& pred,
                           milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return pred(state_); });
}

}  // namespace rdmadp::testing
