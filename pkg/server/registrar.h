// Registration of one resource with the kubelet over <root>/device-plugins/kubelet.sock.
// One attempt runs on its own thread: first our own socket must answer
// GetDevicePluginOptions (so the kubelet's dial-back inside Register succeeds), then
// Register is called with a deadline. The outcome is reported once through `done`, on the
// attempt's thread. Destroying the object cancels the RPC in flight and joins the thread;
// `done` is not called after destruction begins.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <grpcpp/client_context.h>

#include "absl/status/status.h"

namespace rdmadp::server {

struct RegistrationRequest {
  std::string own_socket;      // absolute path of our socket
  std::string kubelet_socket;  // absolute path of kubelet.sock
  std::string resource_name;   // <prefix>/<name>
  std::chrono::milliseconds self_check_timeout{2000};
  std::chrono::milliseconds register_timeout{10000};
};

class KubeletRegistration {
 public:
  KubeletRegistration(RegistrationRequest request, std::function<void(absl::Status)> done);
  ~KubeletRegistration();

  KubeletRegistration(const KubeletRegistration&) = delete;
  KubeletRegistration& operator=(const KubeletRegistration&) = delete;

 private:
  void Run();
  // Runs `call` with a fresh context unless cancelled; the context is cancellable meanwhile.
  grpc::Status Call(std::chrono::milliseconds timeout, bool wait_for_ready,
                    const std::function<grpc::Status(grpc::ClientContext*)>& call);

  const RegistrationRequest request_;
  const std::function<void(absl::Status)> done_;
  std::mutex mu_;
  grpc::ClientContext* active_ = nullptr;
  bool cancelled_ = false;
  std::thread thread_;
};

}  // namespace rdmadp::server
