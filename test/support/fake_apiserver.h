// Runs test/manifests/fake_apiserver.mjs (a fake kube-apiserver over real TLS; see that
// file) as a child process and drives it through its admin API. The state a test waits for
// is awaited on the server (Await), never by sleeping.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "test/support/temp_dir.h"

namespace rdmadp::testing {

class FakeApiServer {
 public:
  // Starts the server with its CA and token under a new temporary directory, behaving as
  // kube-apiserver `release` ("1.34".."1.37") with its default gates. "" = the release in
  // $FAKE_KUBE_RELEASE, else the newest; $FAKE_KUBE_GATES ("Gate=true,...") overrides
  // gates as kube-apiserver's --feature-gates does (scripts/slow-tests.sh runs the DRA
  // suites on every release this way).
  explicit FakeApiServer(int bookmark_ms = 0, const std::string& release = "");
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  int api_port() const { return api_port_; }
  pid_t pid() const { return pid_; }  // the server process (fleet_bench reads its peak RSS)
  std::string server() const;         // "https://127.0.0.1:<port>"
  std::string ca_file() const { return dir_.path() + "/ca.crt"; }
  std::string token_file() const { return dir_.path() + "/token"; }
  // The flags that point a plugin process at this server.
  std::vector<std::string> PluginFlags() const;

  // Admin calls; each returns the answer's JSON (null on a transport failure).
  nlohmann::json Admin(const std::string& path, const nlohmann::json& body = nullptr);
  // Waits until the JavaScript expression `until` over (stats, slices) holds on the server;
  // returns {ok, stats, slices}.
  nlohmann::json Await(const std::string& until,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20));
  nlohmann::json Stats() { return Admin("/stats"); }
  nlohmann::json Slices() { return Admin("/slices"); }
  // What the kubelet does when a DRA driver's registration goes (DraKubelet's WipeFn): deletes
  // node `node`'s ResourceSlices of `driver` ("": of every driver).
  void WipeNodeSlices(const std::string& node, const std::string& driver) {
    nlohmann::json selector = {{"spec.nodeName", node}};
    if (!driver.empty()) selector["spec.driver"] = driver;
    Admin("/wipe", {{"fieldSelector", selector}});
  }
  // Authorizes every API request from now on as kube-apiserver's RBAC would the DaemonSet's
  // service account with the ClusterRoles of images/components/dra/rbac.yaml, its driver
  // name replaced by `driver`, its token carrying node `node` (fake_apiserver.mjs, /rbac);
  // refusals are in stats.forbidden. `components`: more of images/components/ whose
  // rbac.yaml the DaemonSet is deployed with ("dra-remove-stale-resources").
  void AuthorizeAsTheDraDaemonSet(const std::string& driver, const std::string& node,
                                  const std::vector<std::string>& components = {});
  // Writes a new token to the token file and makes the server accept only it.
  void RotateToken(const std::string& token);

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  int api_port_ = 0;
  int admin_port_ = 0;
};

}  // namespace rdmadp::testing
