// Registration of one resource with the kubelet over <root>/device-plugins/kubelet.sock.
// One attempt runs on its own thread: first kubelet.sock must have a listener (a restarting
// kubelet leaves its dead file behind for seconds: then nothing is sent and the outcome is
// kKubeletDown), then our own socket must answer GetDevicePluginOptions (so the kubelet's
// dial-back inside Register succeeds), then Register is called with a deadline. A Register
// rejected with "already connected" (v1.37+, same socket path) is kAlreadyConnected. The
// outcome is reported exactly once through `done`, on the attempt's thread, within
// self_check_timeout + register_timeout (the probe never blocks), however the attempt ends,
// including RPCs a peer cancelled. Only destroying the object suppresses it: that cancels the
// RPC in flight and joins the thread; `done` is not called after destruction begins.
//
// The channels are long-lived and passed in (see UnixChannel): gRPC 1.51 leaks the socket
// of a connection attempt cancelled together with its channel, and a kubelet restart
// cancels attempts routinely. Reused channels also skip a connection setup per attempt.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "pkg/lifecycle/registration_fsm.h"

namespace rdmadp::deviceplugin {

// A channel to a unix socket that reconnects quickly after its peer restarts.
std::shared_ptr<grpc::Channel> UnixChannel(const std::string& path);

struct RegistrationRequest {
  std::string own_socket;                          // absolute path of our socket
  std::string kubelet_socket;                      // absolute path of kubelet.sock
  std::shared_ptr<grpc::Channel> own_channel;      // UnixChannel(own_socket)
  std::shared_ptr<grpc::Channel> kubelet_channel;  // UnixChannel(kubelet_socket)
  std::string resource_name;                       // <prefix>/<name>
  // Check for a listener on kubelet.sock first (see above); off right after the file was
  // created, when the kubelet may sit between bind() and listen().
  bool probe_kubelet = true;
  std::chrono::milliseconds self_check_timeout{2000};
  std::chrono::milliseconds register_timeout{10000};
};

class KubeletRegistration {
 public:
  using DoneFn = std::function<void(lifecycle::RegisterOutcome, std::string detail)>;
  KubeletRegistration(RegistrationRequest request, DoneFn done);
  ~KubeletRegistration();

  KubeletRegistration(const KubeletRegistration&) = delete;
  KubeletRegistration& operator=(const KubeletRegistration&) = delete;

 private:
  void Run();
  void Report(lifecycle::RegisterOutcome outcome, std::string detail);  // unless cancelled
  // Runs `call` with a fresh context unless cancelled; the context is cancellable meanwhile.
  grpc::Status Call(std::chrono::milliseconds timeout, bool wait_for_ready,
                    const std::function<grpc::Status(grpc::ClientContext*)>& call);

  const RegistrationRequest request_;
  const DoneFn done_;
  std::mutex mu_;
  grpc::ClientContext* active_ = nullptr;
  bool cancelled_ = false;
  std::thread thread_;
};

}  // namespace rdmadp::deviceplugin
