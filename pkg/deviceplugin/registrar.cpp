#include "pkg/deviceplugin/registrar.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "pkg/api/deviceplugin.grpc.pb.h"
#include "pkg/rpc/grpc_runtime.h"
#include "pkg/rpc/socket_path.h"
#include "pkg/text/cat.h"

namespace rdmadp::deviceplugin {
namespace {

std::string BaseName(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::shared_ptr<grpc::Channel> UnixChannel(const std::string& path) {
  grpc::ChannelArguments args;
  // The peer is local: after a kubelet or server restart, retry within 100 ms, not 1 s+.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  rpc::DisableBandwidthProbing(args);
  return grpc::CreateCustomChannel("unix://" + path, grpc::InsecureChannelCredentials(), args);
}

KubeletRegistration::KubeletRegistration(RegistrationRequest request, DoneFn done)
    : request_(std::move(request)), done_(std::move(done)), thread_([this] { Run(); }) {}

KubeletRegistration::~KubeletRegistration() {
  {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    if (active_ != nullptr) active_->TryCancel();
  }
  thread_.join();
}

grpc::Status KubeletRegistration::Call(
    std::chrono::milliseconds timeout, bool wait_for_ready,
    const std::function<grpc::Status(grpc::ClientContext*)>& call) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  ctx.set_wait_for_ready(wait_for_ready);
  {
    std::lock_guard lock(mu_);
    if (cancelled_) return {grpc::StatusCode::CANCELLED, "cancelled"};
    active_ = &ctx;
  }
  grpc::Status status = call(&ctx);
  std::lock_guard lock(mu_);
  active_ = nullptr;
  return status;
}

void KubeletRegistration::Report(lifecycle::RegisterOutcome outcome, std::string detail) {
  // Under the lock: once the destructor has set cancelled_, nothing is reported. Any other
  // end (a CANCELLED status from a server shutting down included) is reported, exactly once:
  // an attempt that ends silently would leave its resource waiting for an answer for ever.
  std::lock_guard lock(mu_);
  if (cancelled_) return;
  done_(outcome, std::move(detail));
}

void KubeletRegistration::Run() {
  using lifecycle::RegisterOutcome;
  // 0. A listener on kubelet.sock. A bare connect: nothing reaches the kubelet's handlers.
  // Something that cannot be a socket at all is a configuration problem, named at once
  // (otherwise the Register below would only say "Deadline Exceeded", 5 s later).
  if (std::string problem = rpc::NotASocketProblem(request_.kubelet_socket); !problem.empty()) {
    Report(RegisterOutcome::kFailed, problem);
    return;
  }
  if (request_.probe_kubelet && !rpc::SocketHasListener(request_.kubelet_socket)) {
    Report(RegisterOutcome::kKubeletDown, Cat(request_.kubelet_socket, " has no listener"));
    return;
  }
  // 1. Our own socket answers: the kubelet dials it back before answering Register. Its
  // options go into the request as they are (a 1.24 kubelet takes them from there only).
  v1beta1::DevicePluginOptions options;
  {
    grpc::experimental::ChannelResetConnectionBackoff(request_.own_channel.get());
    auto stub = v1beta1::DevicePlugin::NewStub(request_.own_channel);
    v1beta1::Empty empty;
    grpc::Status s =
        Call(request_.self_check_timeout, /*wait_for_ready=*/true, [&](grpc::ClientContext* ctx) {
          return stub->GetDevicePluginOptions(ctx, empty, &options);
        });
    if (!s.ok()) {
      // CANCELLED here is our server being replaced (the kubelet deleted its socket), not
      // our destructor: Report() tells them apart.
      Report(RegisterOutcome::kFailed,
             Cat("own socket ", request_.own_socket, " does not answer: ", s.error_message()));
      return;
    }
  }
  // 2. Register. The kubelet answers only after dialing us and fetching options.
  grpc::experimental::ChannelResetConnectionBackoff(request_.kubelet_channel.get());
  auto stub = v1beta1::Registration::NewStub(request_.kubelet_channel);
  v1beta1::RegisterRequest req;
  req.set_version("v1beta1");
  req.set_endpoint(BaseName(request_.own_socket));  // relative to the device-plugins dir
  req.set_resource_name(request_.resource_name);
  *req.mutable_options() = options;
  v1beta1::Empty reply;
  // wait_for_ready: a kubelet that just re-created kubelet.sock may still be reconnecting.
  grpc::Status s = Call(request_.register_timeout, /*wait_for_ready=*/true,
                        [&](grpc::ClientContext* ctx) { return stub->Register(ctx, req, &reply); });
  if (s.ok()) {
    Report(RegisterOutcome::kOk, "");
  } else if (s.error_message().find("already connected") != std::string::npos) {
    Report(RegisterOutcome::kAlreadyConnected, s.error_message());
  } else {
    Report(RegisterOutcome::kFailed,
           Cat("Register with ", request_.kubelet_socket, " failed: ", s.error_message(),
               " (check that the kubelet runs and --kubelet-root-dir is its root)"));
  }
}

}  // namespace rdmadp::deviceplugin
