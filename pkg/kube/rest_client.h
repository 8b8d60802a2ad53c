// A minimal Kubernetes REST client in C++ (no client-go): JSON over HTTPS with the pod's
// service-account token, as every in-cluster client authenticates.
//
//  - In-cluster config: KUBERNETES_SERVICE_HOST / _PORT, the service account's CA and
//    token files (paths overridable for tests and out-of-cluster runs).
//  - The token is re-read whenever its file changes (the kubelet rotates projected tokens
//    about hourly) and after a 401, which is then retried once with the new token.
//  - Transport failures (nothing listening, TLS) are errors; every HTTP answer, 4xx and 5xx
//    included, is a response: the caller decides (409 relist, 410 relist, 429 back off).
//
// Threads: one client per thread at a time (it owns one libcurl handle and its connection);
// only Cancel() may be called from another thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pkg/kube/api_transport.h"

namespace rdmadp::kube {

// What a peer can make us hold (kCallTimeout: api_transport.h).
inline constexpr size_t kMaxBodyBytes = 32u << 20;
inline constexpr size_t kMaxLineBytes = 4u << 20;
inline constexpr size_t kMaxErrorBytes = 64u << 10;
inline constexpr size_t kMaxTokenBytes = 64u << 10;

inline constexpr std::string_view kServiceAccountDir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

struct ApiConfig {
  std::string server;  // "https://10.96.0.1:443"
  std::string ca_file;
  std::string token_file;
  std::string user_agent = "k8s-rdma-shared-dp";
  // A watch that carries nothing for this long is dead (a half-open connection: a peer that
  // answers keepalives with a reset, or a black hole). The server sends a bookmark about
  // once a minute (apiserver's cacher); tests shorten it.
  std::chrono::seconds watch_idle{90};
};

// The in-cluster config from the environment (`getenv`) and the two file paths. One line
// naming what is missing when it is not in a pod.
absl::StatusOr<ApiConfig> InClusterConfig(const std::function<const char*(const char*)>& getenv,
                                          std::string ca_file, std::string token_file);

// The ApiTransport over HTTPS.
class RestClient final : public ApiTransport {
 public:
  static absl::StatusOr<std::unique_ptr<RestClient>> Create(ApiConfig config);
  ~RestClient() override;
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  // One request to `path` ("/apis/...?..."), `body` sent as JSON when not empty, ended
  // after `timeout` (20 s by default).
  absl::StatusOr<HttpResponse> Call(std::string_view method, const std::string& path,
                                    const std::string& body = "",
                                    std::chrono::milliseconds timeout = kCallTimeout) override;
  // A streaming GET (a watch): `on_line` gets each complete line as it arrives and returns
  // false to end the stream. Returns the HTTP code once the stream ends (the server closed
  // it, `on_line` said stop, or Cancel()); a non-200 answer's body goes to `on_line` whole.
  // `on_open` (optional) runs once the server has answered 200, before any line: a watch
  // with nothing to report yet is already a working connection.
  absl::StatusOr<long> Stream(const std::string& path,
                              const std::function<bool(std::string_view line)>& on_line,
                              const std::function<void()>& on_open = nullptr) override;
  // Any thread: ends the running Stream() (or the next one) promptly.
  void Cancel() override;
  // Undoes a Cancel() for the next call, never a Shutdown().
  void ResetCancel() override {
    cancelled_.store(false);
    if (shut_down_.load()) cancelled_.store(true);  // a Shutdown() racing this one stays
  }
  // Any thread: Cancel() for good. A loop that resets its cancel before each call cannot
  // lose this one, whatever the order (a destructor's cancel between a loop's "stopping?"
  // check and its ResetCancel used to be erased, and shutdown waited out a 5-10 min watch).
  void Shutdown() override;
  // The Retry-After (seconds, 0 if none) of the last Stream() answer that was not 200.
  int stream_retry_after_seconds() const override { return stream_retry_after_seconds_; }

  uint64_t token_reads() const { return token_reads_; }

 private:
  explicit RestClient(ApiConfig config);
  // The CA file is a regular file (libcurl's blocking open must never meet a FIFO).
  absl::Status CheckCaFile() const;
  // The token, re-read when its file changed or `force`.
  absl::StatusOr<std::string> Token(bool force);
  // Sets up the handle for one transfer of `method` `path`.
  void Prepare(std::string_view method, const std::string& path, const std::string& body,
               const std::string& token, void* headers);
  // Token, CA check, auth and JSON headers, then Prepare(); the caller frees the curl_slist*.
  absl::StatusOr<void*> PrepareRequest(std::string_view method, const std::string& path,
                                       const std::string& body, bool force_token);
  absl::StatusOr<HttpResponse> CallOnce(std::string_view method, const std::string& path,
                                        const std::string& body, bool force_token,
                                        std::chrono::milliseconds timeout);
  // One line for a failed transfer: libcurl's detail, and the CA file for TLS failures.
  std::string Describe(int curl_code) const;

  const ApiConfig config_;
  void* curl_ = nullptr;  // CURL*
  char error_[256] = {};  // CURL_ERROR_SIZE: libcurl's detail of the last failed transfer
  std::string token_;
  struct FileId {
    ino_t inode = 0;
    int64_t mtime_ns = 0;
    off_t size = 0;
    bool operator==(const FileId&) const = default;
  } token_id_;
  uint64_t token_reads_ = 0;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> shut_down_{false};
  int stream_retry_after_seconds_ = 0;
  std::mutex socket_mu_;
  int socket_ = -1;  // of the running transfer, for Cancel()

  friend struct CurlCallbacks;
};

}  // namespace rdmadp::kube
