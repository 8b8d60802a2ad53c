#include "pkg/kube/rest_client.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "pkg/kube/curl_lib.h"
#include "pkg/text/cat.h"

namespace rdmadp::kube {

namespace {
inline constexpr long kConnectTimeoutMs = 5000;
inline constexpr long kCallTimeoutMs = 20000;
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
    std::string* body;
    const std::function<bool(std::string_view)>* on_line;  // streaming, else null
    std::string partial;                                   // of a line not yet complete
    long code = 0;
    void* curl;
    const CurlLib* lib;
  };

  static size_t Write(char* data, size_t size, size_t n, void* user) {
    auto* sink = static_cast<Sink*>(user);
    const size_t len = size * n;
    if (sink->on_line == nullptr) {
      sink->body->append(data, len);
      return len;
    }
    if (sink->code == 0) sink->lib->easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &sink->code);
    if (sink->code != 200) {  // an error answer: one Status object, handed over at the end
      sink->partial.append(data, len);
      return len;
    }
    sink->partial.append(data, len);
    size_t start = 0;
    for (size_t nl; (nl = sink->partial.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (nl > start &&
          !(*sink->on_line)(std::string_view(sink->partial).substr(start, nl - start))) {
        return 0;  // stop: libcurl ends the transfer (CURLE_WRITE_ERROR)
      }
    }
    sink->partial.erase(0, start);
    return len;
  }

  static size_t Header(char* data, size_t size, size_t n, void* user) {
    const size_t len = size * n;
    std::string_view line(data, len);
    constexpr std::string_view kRetry = "retry-after:";
    if (line.size() > kRetry.size() &&
        absl::AsciiStrToLower(std::string(line.substr(0, kRetry.size()))) == kRetry) {
      const std::string_view rest = line.substr(kRetry.size());
      const std::string value(
          absl::StripAsciiWhitespace(absl::string_view(rest.data(), rest.size())));
      *static_cast<int*>(user) =
          std::isdigit(static_cast<unsigned char>(value[0])) != 0 ? std::atoi(value.c_str()) : 1;
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
  return client;
}

RestClient::RestClient(ApiConfig config) : config_(std::move(config)) {}

RestClient::~RestClient() {
  if (curl_ != nullptr) (*CurlLib::Get())->easy_cleanup(curl_);
}

void RestClient::Cancel() {
  cancelled_ = true;
  std::lock_guard lock(socket_mu_);
  if (socket_ >= 0) ::shutdown(socket_, SHUT_RDWR);  // wakes libcurl's poll() at once
}

absl::StatusOr<std::string> RestClient::Token(bool force) {
  struct stat st {};
  if (::stat(config_.token_file.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        Cat("service-account token ", config_.token_file, ": ", std::strerror(errno),
            " (is automountServiceAccountToken off for the DaemonSet?)"));
  }
  const FileId id{st.st_ino, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, st.st_size};
  if (!force && id == token_id_ && !token_.empty()) return token_;
  std::ifstream in(config_.token_file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string raw = text.str();
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
  c.easy_setopt(curl_, CURLOPT_USERAGENT, config_.user_agent.c_str());
  c.easy_setopt(curl_, CURLOPT_HTTPHEADER, headers);
  c.easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
  c.easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
  c.easy_setopt(curl_, CURLOPT_TCP_KEEPALIVE, 1L);
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

absl::StatusOr<HttpResponse> RestClient::CallOnce(std::string_view method, const std::string& path,
                                                  const std::string& body, bool force_token) {
  const CurlLib& c = **CurlLib::Get();
  auto token = Token(force_token);
  if (!token.ok()) return token.status();
  curl_slist* headers = nullptr;
  const std::string auth = "Authorization: Bearer " + *token;
  headers = c.slist_append(headers, auth.c_str());
  headers = c.slist_append(headers, "Accept: application/json");
  if (!body.empty()) headers = c.slist_append(headers, "Content-Type: application/json");
  const std::string m(method);
  Prepare(m, path, body, *token, headers);
  HttpResponse response;
  CurlCallbacks::Sink sink{&response.body, nullptr, {}, 0, curl_, &c};
  c.easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &CurlCallbacks::Write);
  c.easy_setopt(curl_, CURLOPT_WRITEDATA, &sink);
  c.easy_setopt(curl_, CURLOPT_HEADERFUNCTION, &CurlCallbacks::Header);
  c.easy_setopt(curl_, CURLOPT_HEADERDATA, &response.retry_after_seconds);
  c.easy_setopt(curl_, CURLOPT_TIMEOUT_MS, kCallTimeoutMs);
  const CURLcode rc = c.easy_perform(curl_);
  c.slist_free_all(headers);
  if (rc != CURLE_OK) {
    return absl::UnavailableError(
        Cat(m, " ", config_.server, path.substr(0, path.find('?')), ": ", c.easy_strerror(rc)));
  }
  c.easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &response.code);
  return response;
}

absl::StatusOr<HttpResponse> RestClient::Call(std::string_view method, const std::string& path,
                                              const std::string& body) {
  auto response = CallOnce(method, path, body, false);
  if (response.ok() && response->code == 401) {
    // A rotated token: the file may have been replaced in place (same stat) or the server
    // stopped accepting the old one first. Read it again and retry once.
    response = CallOnce(method, path, body, true);
  }
  return response;
}

absl::StatusOr<long> RestClient::Stream(const std::string& path,
                                        const std::function<bool(std::string_view)>& on_line) {
  const CurlLib& c = **CurlLib::Get();
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto token = Token(attempt > 0);
    if (!token.ok()) return token.status();
    curl_slist* headers = nullptr;
    const std::string auth = "Authorization: Bearer " + *token;
    headers = c.slist_append(headers, auth.c_str());
    headers = c.slist_append(headers, "Accept: application/json");
    Prepare("GET", path, "", *token, headers);
    std::string unused;
    CurlCallbacks::Sink sink{&unused, &on_line, {}, 0, curl_, &c};
    c.easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &CurlCallbacks::Write);
    c.easy_setopt(curl_, CURLOPT_WRITEDATA, &sink);
    const CURLcode rc = c.easy_perform(curl_);
    c.slist_free_all(headers);
    long code = sink.code;
    if (code == 0) c.easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &code);
    if (code == 401 && attempt == 0) continue;
    if (code != 200 && code != 0) {
      on_line(sink.partial);
      return code;
    }
    if (rc == CURLE_OK || rc == CURLE_WRITE_ERROR || cancelled_) return code;
    // A stream the server or the network cut after it started is a normal end.
    if (code == 200 && (rc == CURLE_RECV_ERROR || rc == CURLE_PARTIAL_FILE)) return code;
    return absl::UnavailableError(
        Cat("watch ", config_.server, path.substr(0, path.find('?')), ": ", c.easy_strerror(rc)));
  }
  return 401L;
}

}  // namespace rdmadp::kube
