#include "pkg/kube/rest_client.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "pkg/kube/curl_lib.h"
#include "pkg/kube/http_lines.h"
#include "pkg/text/cat.h"

namespace rdmadp::kube {

namespace {
static_assert(CURL_ERROR_SIZE == 256, "RestClient::error_ holds CURL_ERROR_SIZE bytes");
inline constexpr long kConnectTimeoutMs = 5000;
// A day: callers cap it further; this only keeps the number in range.
inline constexpr int kMaxRetryAfterSeconds = 86400;
// TCP keepalive on every connection: a peer that answers probes with a reset is noticed
// within ~15 s instead of the kernel's two hours.
inline constexpr long kKeepIdleSeconds = 10;
inline constexpr long kKeepIntervalSeconds = 5;
}  // namespace

absl::StatusOr<ApiConfig> InClusterConfig(const std::function<const char*(const char*)>& getenv,
                                          std::string ca_file, std::string token_file) {
  const char* host = getenv("KUBERNETES_SERVICE_HOST");
  const char* port = getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    return absl::FailedPreconditionError(
        "the DRA front end needs the API server: KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT are not set (run it in a pod, or set them)");
  }
  const std::string h = host;
  ApiConfig config;
  config.server = h.find(':') != std::string::npos ? Cat("https://[", h, "]:", port)
                                                   : Cat("https://", h, ":", port);
  config.ca_file = std::move(ca_file);
  config.token_file = std::move(token_file);
  return config;
}

// libcurl's C callbacks, with access to the client.
struct CurlCallbacks {
  struct Sink {
    std::string* body = nullptr;
    const std::function<bool(std::string_view)>* on_line = nullptr;  // streaming, else null
    LineSplitter lines{kMaxLineBytes};  // a 200 stream, cut into events
    std::string error;                  // a non-200 answer: one Status object, capped
    long code = 0;
    void* curl = nullptr;
    const CurlLib* lib = nullptr;
    bool too_large = false;     // an answer or a line went past its limit: transfer ended
    bool error_capped = false;  // an error answer reached kMaxErrorBytes: transfer ended
  };

  static size_t Write(char* data, size_t size, size_t n, void* user) {
    auto* sink = static_cast<Sink*>(user);
    const size_t len = size * n;
    if (sink->code == 0) sink->lib->easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &sink->code);
    if (sink->on_line == nullptr) {
      if (sink->code >= 300 && sink->body->size() + len > kMaxErrorBytes) {
        // An error answer is one Status object: what fits is kept and the rest never read
        // (an endless 500 body used to be read to its end, or to kMaxBodyBytes).
        sink->body->append(data, kMaxErrorBytes - std::min(kMaxErrorBytes, sink->body->size()));
        sink->error_capped = true;
        return 0;  // libcurl ends the transfer (CURLE_WRITE_ERROR)
      }
      if (sink->body->size() + len > kMaxBodyBytes) {
        sink->too_large = true;
        return 0;  // libcurl ends the transfer (CURLE_WRITE_ERROR)
      }
      sink->body->append(data, len);
      return len;
    }
    if (sink->code != 200) {  // an error answer: one Status object, handed over at the end
      const size_t room = kMaxErrorBytes - std::min(kMaxErrorBytes, sink->error.size());
      sink->error.append(data, std::min(len, room));
      if (len <= room) return len;
      sink->error_capped = true;  // the rest is never read
      return 0;
    }
    switch (sink->lines.Feed(std::string_view(data, len), *sink->on_line)) {
      case LineSplitter::Result::kMore:
        return len;
      case LineSplitter::Result::kStopped:
        return 0;  // libcurl ends the transfer (CURLE_WRITE_ERROR)
      case LineSplitter::Result::kTooLong:
        sink->too_large = true;
        return 0;
    }
    return 0;
  }

  static size_t Header(char* data, size_t size, size_t n, void* user) {
    const size_t len = size * n;
    std::string_view line(data, len);
    constexpr std::string_view kRetry = "retry-after:";
    if (line.size() > kRetry.size() &&
        absl::AsciiStrToLower(std::string(line.substr(0, kRetry.size()))) == kRetry) {
      const std::string_view rest = line.substr(kRetry.size());
      *static_cast<int*>(user) = ParseRetryAfter(rest, kMaxRetryAfterSeconds);
    }
    return len;
  }

  // A stream's status line: "HTTP/1.1 200 OK" calls the caller's on_open, once.
  struct StatusWatch {
    const std::function<void()>* on_open;
    bool seen = false;
    int retry_after_seconds = 0;
  };
  static size_t StreamHeader(char* data, size_t size, size_t n, void* user) {
    const size_t len = size * n;
    auto* w = static_cast<StatusWatch*>(user);
    const std::string_view line(data, len);
    Header(data, size, n, &w->retry_after_seconds);
    if (!w->seen && line.starts_with("HTTP/")) {
      const auto space = line.find(' ');
      if (space != std::string_view::npos && line.substr(space + 1).starts_with("200")) {
        w->seen = true;
        if (w->on_open != nullptr && *w->on_open) (*w->on_open)();
      }
    }
    return len;
  }

  static curl_socket_t Open(void* user, curlsocktype, curl_sockaddr* addr) {
    auto* client = static_cast<RestClient*>(user);
    const int fd = ::socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
    std::lock_guard lock(client->socket_mu_);
    client->socket_ = fd;
    if (client->cancelled_) ::shutdown(fd, SHUT_RDWR);
    return fd;
  }

  static int Close(void* user, curl_socket_t fd) {
    auto* client = static_cast<RestClient*>(user);
    std::lock_guard lock(client->socket_mu_);
    if (client->socket_ == fd) client->socket_ = -1;
    return ::close(fd);
  }

  // Called about once a second by libcurl during a transfer: a safety net for Cancel().
  static int Progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return static_cast<RestClient*>(user)->cancelled_ ? 1 : 0;
  }
};

absl::StatusOr<std::unique_ptr<RestClient>> RestClient::Create(ApiConfig config) {
  auto lib = CurlLib::Get();
  if (!lib.ok()) return lib.status();
  std::unique_ptr<RestClient> client(new RestClient(std::move(config)));
  client->curl_ = (*lib)->easy_init();
  if (client->curl_ == nullptr) return absl::InternalError("libcurl: curl_easy_init failed");
  auto token = client->Token(true);
  if (!token.ok()) return token.status();
  if (auto ca = client->CheckCaFile(); !ca.ok()) return ca;
  return client;
}

RestClient::RestClient(ApiConfig config) : config_(std::move(config)) {}

RestClient::~RestClient() {
  if (curl_ != nullptr) (*CurlLib::Get())->easy_cleanup(curl_);
}

void RestClient::Shutdown() {
  shut_down_ = true;
  Cancel();
}

void RestClient::Cancel() {
  cancelled_ = true;
  std::lock_guard lock(socket_mu_);
  if (socket_ >= 0) ::shutdown(socket_, SHUT_RDWR);  // wakes libcurl's poll() at once
}

absl::Status RestClient::CheckCaFile() const {
  // libcurl opens the CA file at every new connection, blocking: a FIFO there would hang the
  // caller (and shutdown, which joins it). Only a regular file is handed over.
  struct stat st {};
  if (::stat(config_.ca_file.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        Cat("CA file ", config_.ca_file, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        Cat("CA file ", config_.ca_file, " is not a regular file"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> RestClient::Token(bool force) {
  const std::string what = Cat("service-account token ", config_.token_file);
  struct stat st {};
  if (::stat(config_.token_file.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        Cat(what, ": ", std::strerror(errno),
            " (is automountServiceAccountToken off for the DaemonSet?)"));
  }
  // Only a regular file of a token's size is read: a FIFO would block the reader, a
  // device like /dev/zero or a huge file would fill memory.
  if (S_ISDIR(st.st_mode)) return absl::FailedPreconditionError(Cat(what, " is a directory"));
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(Cat(what, " is not a regular file"));
  }
  if (st.st_size > static_cast<off_t>(kMaxTokenBytes)) {
    return absl::FailedPreconditionError(
        Cat(what, " is ", st.st_size, " bytes; a token is at most ", kMaxTokenBytes));
  }
  const FileId id{st.st_ino, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, st.st_size};
  if (!force && id == token_id_ && !token_.empty()) return token_;
  const int fd = ::open(config_.token_file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        Cat(what, ": ", std::strerror(errno),
            errno == EMFILE || errno == ENFILE ? " (the process is out of file descriptors)" : ""));
  }
  std::string raw(kMaxTokenBytes + 1, '\0');
  size_t got = 0;
  struct stat opened {};
  const bool regular = ::fstat(fd, &opened) == 0 && S_ISREG(opened.st_mode);
  while (regular && got < raw.size()) {
    const ssize_t r = ::read(fd, raw.data() + got, raw.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  if (!regular) return absl::FailedPreconditionError(Cat(what, " is not a regular file"));
  if (got > kMaxTokenBytes) {
    return absl::FailedPreconditionError(Cat(what, " is larger than ", kMaxTokenBytes, " bytes"));
  }
  raw.resize(got);
  std::string token(absl::StripAsciiWhitespace(absl::string_view(raw.data(), raw.size())));
  if (token.empty()) {
    return absl::FailedPreconditionError(
        Cat("service-account token ", config_.token_file, " is empty"));
  }
  token_ = std::move(token);
  token_id_ = id;
  ++token_reads_;
  return token_;
}

void RestClient::Prepare(std::string_view method, const std::string& path, const std::string& body,
                         const std::string& /*token*/, void* headers) {
  const CurlLib& c = **CurlLib::Get();
  c.easy_reset(curl_);
  const std::string url = config_.server + path;
  c.easy_setopt(curl_, CURLOPT_URL, url.c_str());
  c.easy_setopt(curl_, CURLOPT_CAINFO, config_.ca_file.c_str());
  // Only the cluster's CA: libcurl also trusts the system's CA directory by default, which
  // would send our token to any server a public CA vouches for.
  c.easy_setopt(curl_, CURLOPT_CAPATH, static_cast<const char*>(nullptr));
  error_[0] = '\0';
  c.easy_setopt(curl_, CURLOPT_ERRORBUFFER, error_);
  c.easy_setopt(curl_, CURLOPT_USERAGENT, config_.user_agent.c_str());
  c.easy_setopt(curl_, CURLOPT_HTTPHEADER, headers);
  c.easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
  c.easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
  c.easy_setopt(curl_, CURLOPT_TCP_KEEPALIVE, 1L);
  c.easy_setopt(curl_, CURLOPT_TCP_KEEPIDLE, kKeepIdleSeconds);
  c.easy_setopt(curl_, CURLOPT_TCP_KEEPINTVL, kKeepIntervalSeconds);
  c.easy_setopt(curl_, CURLOPT_OPENSOCKETFUNCTION, &CurlCallbacks::Open);
  c.easy_setopt(curl_, CURLOPT_OPENSOCKETDATA, this);
  c.easy_setopt(curl_, CURLOPT_CLOSESOCKETFUNCTION, &CurlCallbacks::Close);
  c.easy_setopt(curl_, CURLOPT_CLOSESOCKETDATA, this);
  c.easy_setopt(curl_, CURLOPT_NOPROGRESS, 0L);
  c.easy_setopt(curl_, CURLOPT_XFERINFOFUNCTION, &CurlCallbacks::Progress);
  c.easy_setopt(curl_, CURLOPT_XFERINFODATA, this);
  const std::string m(method);
  if (m == "GET") {
    c.easy_setopt(curl_, CURLOPT_HTTPGET, 1L);
  } else {
    c.easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, m.c_str());
    if (!body.empty()) {
      c.easy_setopt(curl_, CURLOPT_POSTFIELDS, body.c_str());
      c.easy_setopt(curl_, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    }
  }
}

absl::StatusOr<void*> RestClient::PrepareRequest(std::string_view method, const std::string& path,
                                                 const std::string& body, bool force_token) {
  const CurlLib& c = **CurlLib::Get();
  auto token = Token(force_token);
  if (!token.ok()) return token.status();
  if (auto ca = CheckCaFile(); !ca.ok()) return ca;
  // Built only once both checks passed, so a failed one leaves nothing to free. libcurl
  // copies each string but reads the list itself during the transfer: the caller frees it.
  curl_slist* headers = nullptr;
  const std::string auth = "Authorization: Bearer " + *token;
  headers = c.slist_append(headers, auth.c_str());
  headers = c.slist_append(headers, "Accept: application/json");
  if (!body.empty()) {
    // A PATCH is a JSON patch when its body is an array, else server-side apply (whose
    // body, JSON, is YAML): api_transport.h.
    const char* type = "Content-Type: application/json";
    if (method == "PATCH") {
      type = body.front() == '[' ? "Content-Type: application/json-patch+json"
                                 : "Content-Type: application/apply-patch+yaml";
    }
    headers = c.slist_append(headers, type);
  }
  Prepare(method, path, body, *token, headers);
  return static_cast<void*>(headers);
}

absl::StatusOr<HttpResponse> RestClient::CallOnce(std::string_view method, const std::string& path,
                                                  const std::string& body, bool force_token,
                                                  std::chrono::milliseconds timeout) {
  const CurlLib& c = **CurlLib::Get();
  auto prepared = PrepareRequest(method, path, body, force_token);
  if (!prepared.ok()) return prepared.status();
  auto* headers = static_cast<curl_slist*>(*prepared);
  const std::string m(method);
  HttpResponse response;
  CurlCallbacks::Sink sink;
  sink.body = &response.body;
  sink.curl = curl_;
  sink.lib = &c;
  c.easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &CurlCallbacks::Write);
  c.easy_setopt(curl_, CURLOPT_WRITEDATA, &sink);
  c.easy_setopt(curl_, CURLOPT_HEADERFUNCTION, &CurlCallbacks::Header);
  c.easy_setopt(curl_, CURLOPT_HEADERDATA, &response.retry_after_seconds);
  c.easy_setopt(curl_, CURLOPT_TIMEOUT_MS,
                static_cast<long>(std::max<int64_t>(1, timeout.count())));
  const CURLcode rc = c.easy_perform(curl_);
  c.slist_free_all(headers);
  if (sink.too_large) {
    return absl::ResourceExhaustedError(Cat(m, " ", config_.server, path.substr(0, path.find('?')),
                                            ": the answer is larger than ", kMaxBodyBytes,
                                            " bytes; not read"));
  }
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && sink.error_capped)) {
    return absl::UnavailableError(
        Cat(m, " ", config_.server, path.substr(0, path.find('?')), ": ", Describe(rc)));
  }
  c.easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &response.code);
  return response;
}

absl::StatusOr<HttpResponse> RestClient::Call(std::string_view method, const std::string& path,
                                              const std::string& body,
                                              std::chrono::milliseconds timeout) {
  auto response = CallOnce(method, path, body, false, timeout);
  if (response.ok() && response->code == 401) {
    // A rotated token: the file may have been replaced in place (same stat) or the server
    // stopped accepting the old one first. Read it again and retry once.
    response = CallOnce(method, path, body, true, timeout);
  }
  return response;
}

absl::StatusOr<long> RestClient::Stream(const std::string& path,
                                        const std::function<bool(std::string_view)>& on_line,
                                        const std::function<void()>& on_open) {
  const CurlLib& c = **CurlLib::Get();
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto prepared = PrepareRequest("GET", path, "", attempt > 0);
    if (!prepared.ok()) return prepared.status();
    auto* headers = static_cast<curl_slist*>(*prepared);
    std::string unused;
    CurlCallbacks::Sink sink;
    sink.body = &unused;
    sink.on_line = &on_line;
    sink.curl = curl_;
    sink.lib = &c;
    c.easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &CurlCallbacks::Write);
    c.easy_setopt(curl_, CURLOPT_WRITEDATA, &sink);
    CurlCallbacks::StatusWatch status{&on_open};
    c.easy_setopt(curl_, CURLOPT_HEADERFUNCTION, &CurlCallbacks::StreamHeader);
    c.easy_setopt(curl_, CURLOPT_HEADERDATA, &status);
    c.easy_setopt(curl_, CURLOPT_LOW_SPEED_LIMIT, 1L);
    c.easy_setopt(curl_, CURLOPT_LOW_SPEED_TIME, static_cast<long>(config_.watch_idle.count()));
    const CURLcode rc = c.easy_perform(curl_);
    c.slist_free_all(headers);
    if (sink.too_large) {
      return absl::ResourceExhaustedError(
          Cat("watch ", config_.server, path.substr(0, path.find('?')), ": a line longer than ",
              kMaxLineBytes, " bytes; ended the watch"));
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      return absl::DeadlineExceededError(
          Cat("watch ", config_.server, path.substr(0, path.find('?')), ": nothing for ",
              config_.watch_idle.count(), " s (not even a bookmark): the connection is dead"));
    }
    long code = sink.code;
    if (code == 0) c.easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &code);
    if (code == 401 && attempt == 0) continue;
    stream_retry_after_seconds_ = code == 200 ? 0 : status.retry_after_seconds;
    if (code != 200 && code != 0) {
      on_line(sink.error);
      return code;
    }
    if (rc == CURLE_OK || rc == CURLE_WRITE_ERROR || cancelled_) return code;
    // A stream the server or the network cut after it started is a normal end.
    if (code == 200 && (rc == CURLE_RECV_ERROR || rc == CURLE_PARTIAL_FILE)) return code;
    return absl::UnavailableError(
        Cat("watch ", config_.server, path.substr(0, path.find('?')), ": ", Describe(rc)));
  }
  return 401L;
}

std::string RestClient::Describe(int code) const {
  const CurlLib& c = **CurlLib::Get();
  const auto rc = static_cast<CURLcode>(code);
  // libcurl's error buffer names the cause ("SSL certificate problem: certificate has
  // expired", "... unable to get local issuer certificate", "no alternative certificate
  // subject name matches"); easy_strerror only the class.
  std::string detail = error_[0] != '\0' ? std::string(error_) : c.easy_strerror(rc);
  if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
      detail.find("certificate") != std::string::npos) {
    Append(detail, " (CA file ", config_.ca_file, ")");
  }
  return detail;
}

}  // namespace rdmadp::kube
