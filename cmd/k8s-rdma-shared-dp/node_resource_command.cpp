#include "cmd/k8s-rdma-shared-dp/node_resource_command.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/dra/move/stale_node_resource.h"
#include "pkg/dra/slices/slice_writer.h"
#include "pkg/kube/rest_client.h"
#include "pkg/text/cat.h"

namespace rdmadp {
namespace {

int Fail(int code, const std::string& line) {
  std::fprintf(stderr, "remove-stale-resources: %s\n", line.c_str());
  return code;
}

}  // namespace

int RunRemoveStaleResources(const cli::Options& opts) {
  auto loaded = config::LoadConfigFile(opts.config_file);
  if (!loaded.ok()) return Fail(2, std::string(loaded.status().message()));
  std::vector<std::string> names;
  for (const auto& rc : loaded->config.resources) {
    if (rc.frontend == config::Frontend::kDra) names.push_back(rc.FullName());
  }
  if (names.empty()) {
    return Fail(2, Cat(opts.config_file,
                       " has no entry with \"frontend\": \"dra\": no resource moved to DRA"));
  }
  const char* node_env = std::getenv("NODE_NAME");
  const std::string node =
      !opts.node_name.empty() ? opts.node_name : (node_env != nullptr ? node_env : "");
  if (node.empty()) return Fail(2, "no node: set --node-name or NODE_NAME");
  kube::ApiConfig api{opts.kube_api_server, opts.kube_ca_file, opts.kube_token_file,
                      "k8s-rdma-shared-dp remove-stale-resources"};
  if (api.server.empty()) {
    auto in_cluster = kube::InClusterConfig([](const char* n) { return std::getenv(n); },
                                            opts.kube_ca_file, opts.kube_token_file);
    if (!in_cluster.ok()) return Fail(2, std::string(in_cluster.status().message()));
    api.server = in_cluster->server;
  }
  auto client = kube::RestClient::Create(api);
  if (!client.ok()) return Fail(1, std::string(client.status().message()));
  const std::string path = Cat("/api/v1/nodes/", dra::PercentEncode(node));
  auto got = (*client)->Call("GET", path);
  if (!got.ok())
    return Fail(1, Cat("reading node ", node, ": ", std::string(got.status().message())));
  if (got->code != 200) {
    return Fail(
        1, Cat("reading node ", node, ": HTTP ", got->code, ": ", dra::StatusMessage(got->body)));
  }
  const auto node_json = nlohmann::json::parse(got->body, nullptr, false);
  if (!node_json.is_object()) return Fail(1, Cat("reading node ", node, ": not a Node object"));
  std::vector<dra::NodeResource> resources;
  bool blocked = false;
  for (const auto& name : names) {
    resources.push_back(dra::ReadNodeResource(node_json, name));
    const dra::NodeResource& r = resources.back();
    blocked = blocked || r.state == dra::NodeResourceState::kServed ||
              r.state == dra::NodeResourceState::kDraining;
    std::printf("%s\n", dra::DescribeNodeResource(r, node).c_str());
  }
  const nlohmann::json patch = dra::RemoveStalePatch(resources);
  if (patch.empty()) return blocked ? 1 : 0;
  if (opts.dry_run) {
    std::printf("--dry-run: not removed; the JSON patch of nodes/%s/status would be:\n%s\n",
                node.c_str(), patch.dump().c_str());
    return blocked ? 1 : 0;
  }
  auto patched = (*client)->Call("PATCH", path + "/status", patch.dump());
  if (!patched.ok() || patched->code != 200) {
    const std::string why =
        patched.ok() ? Cat("HTTP ", patched->code, ": ", dra::StatusMessage(patched->body))
                     : std::string(patched.status().message());
    return Fail(1, Cat("removing from node ", node, "'s status: ", why,
                       patched.ok() && patched->code == 422
                           ? " (the entries changed since they were read: run it again)"
                       : patched.ok() && patched->code == 403
                           ? " (apply images/components/dra-remove-stale-resources)"
                           : ""));
  }
  for (const auto& r : resources) {
    if (r.state == dra::NodeResourceState::kStale) {
      std::printf("%s: removed from node %s's status\n", r.name.c_str(), node.c_str());
    }
  }
  return blocked ? 1 : 0;
}

}  // namespace rdmadp
