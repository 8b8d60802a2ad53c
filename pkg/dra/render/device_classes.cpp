#include "pkg/dra/render/device_classes.h"

#include <map>

#include "pkg/dra/slices/resource_slices.h"
#include "pkg/text/cat.h"

namespace rdmadp::dra {
namespace {

using nlohmann::json;

// One device of the class. No capacity request: on a shared device (perHca, perPool) the
// device's requestPolicy default takes one share; a request naming capacity "shares" would
// make kube-scheduler skip every device without it (requestsContainNonExistCapacity in
// staging/src/k8s.io/dynamic-resource-allocation/structured), so the same template would
// never allocate from slots devices. One template works for every model.
json HcaRequest(const std::string& name, const std::string& device_class) {
  return {{"name", name}, {"exactly", {{"deviceClassName", device_class}, {"count", 1}}}};
}

json ClaimTemplate(const std::string& name, const std::string& ns, json devices) {
  json metadata = {{"name", name}};
  if (!ns.empty()) metadata["namespace"] = ns;
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata", std::move(metadata)},
          {"spec", {{"spec", {{"devices", std::move(devices)}}}}}};
}

// A CEL string literal: the names are validated DNS names, but quote defensively.
std::string CelString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string DeviceClassName(const config::ResourceConfig& resource, const std::string& driver) {
  return DnsLabel(resource.resource_name) + "." + driver;
}

std::string ClassSelector(const config::ResourceConfig& resource, const std::string& driver) {
  return "device.driver == " + CelString(driver) + " && device.attributes[" + CelString(driver) +
         "].resourceName == " + CelString(resource.FullName());
}

std::vector<std::string> ClassNameProblems(const config::Config& config,
                                           const std::string& driver) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> seen;  // class name -> the resource that has it
  for (const auto& rc : config.resources) {
    if (rc.frontend != config::Frontend::kDra) continue;
    const std::string name = DeviceClassName(rc, driver);
    auto [it, fresh] = seen.emplace(name, rc.resource_name);
    if (!fresh) {
      problems.push_back("resourceName \"" + rc.resource_name + "\" and \"" + it->second +
                         "\" both make DeviceClass " + name +
                         ": rename one (DRA names allow only a-z, 0-9 and '-')");
    }
  }
  return problems;
}

std::vector<std::string> ExtendedResourceProblems(const config::Config& config,
                                                  const std::vector<size_t>& indices) {
  std::vector<std::string> problems;
  for (size_t i = 0; i < config.resources.size(); ++i) {
    const config::ResourceConfig& rc = config.resources[i];
    if (rc.frontend != config::Frontend::kDra) continue;
    if (rc.device_model != DeviceModel::kPerHca && rc.device_model != DeviceModel::kAuto) continue;
    problems.push_back(
        Cat("configList[", i < indices.size() ? indices[i] : i, "].deviceModel: \"",
            config::DeviceModelName(rc.device_model), "\"",
            rc.device_model == DeviceModel::kAuto ? " (perHca where the API server shares a device)"
                                                  : "",
            " cannot serve --extended-resource-name: a pod's `limits: ", rc.FullName(),
            ": 1` would get one HCA, where the device plugin gives every HCA of the pool; set "
            "\"deviceModel\": \"perPool\" (Kubernetes 1.36+) or \"slots\""));
  }
  return problems;
}

std::vector<json> RenderDeviceClasses(const config::Config& config, const ClassOptions& options) {
  std::vector<json> out;
  for (const auto& rc : config.resources) {
    if (rc.frontend != config::Frontend::kDra) continue;  // no device of it is published
    const std::string cls = DeviceClassName(rc, options.driver);
    json spec = {{"selectors",
                  json::array({{{"cel", {{"expression", ClassSelector(rc, options.driver)}}}}})}};
    if (options.extended_resource) spec["extendedResourceName"] = rc.FullName();
    out.push_back({{"apiVersion", "resource.k8s.io/v1"},
                   {"kind", "DeviceClass"},
                   {"metadata", {{"name", cls}}},
                   {"spec", std::move(spec)}});
    const std::string base = cls.substr(0, cls.find('.'));
    out.push_back(ClaimTemplate(base + "-share", options.claim_namespace,
                                {{"requests", json::array({HcaRequest("hca", cls)})}}));
    if (!options.gpu_device_class.empty()) {
      json gpu = {{"name", "gpu"},
                  {"exactly", {{"deviceClassName", options.gpu_device_class}, {"count", 1}}}};
      out.push_back(ClaimTemplate(
          base + "-with-gpu", options.claim_namespace,
          {{"requests", json::array({gpu, HcaRequest("hca", cls)})},
           {"constraints",
            json::array({{{"requests", json::array({"gpu", "hca"})},
                          {"matchAttribute", "resource.kubernetes.io/pcieRoot"}}})}}));
    }
  }
  return out;
}

std::vector<json> RenderAdmissionPolicy(const std::string& driver,
                                        const std::string& service_account) {
  const std::string name = "k8s-rdma-shared-dp-own-node-slices";
  json policy = {
      {"apiVersion", "admissionregistration.k8s.io/v1"},
      {"kind", "ValidatingAdmissionPolicy"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"failurePolicy", "Fail"},
        {"matchConstraints",
         {{"resourceRules", json::array({{{"apiGroups", {"resource.k8s.io"}},
                                          {"apiVersions", {"*"}},
                                          {"operations", {"CREATE", "UPDATE", "DELETE"}},
                                          {"resources", {"resourceslices"}}}})}}},
        // The service account in whatever namespace it is deployed to: a literal namespace
        // would silently match nobody once kustomize moved it.
        {"matchConditions",
         json::array({{{"name", "is-the-plugin"},
                       {"expression",
                        "request.userInfo.username.startsWith(\"system:serviceaccount:\") && "
                        "request.userInfo.username.endsWith(" +
                            CelString(":" + service_account) + ")"}}})},
        {"variables",
         json::array({{{"name", "nodeOfUser"},
                       {"expression",
                        "request.userInfo.extra[?\"authentication.kubernetes.io/node-name\"]"
                        "[0].orValue(\"\")"}},
                      {{"name", "slice"},
                       {"expression", "request.operation == \"DELETE\" ? oldObject : object"}}})},
        {"validations",
         json::array(
             {{{"expression", "variables.nodeOfUser != \"\""},
               {"message",
                "the plugin's token names no node: run it as the DaemonSet does (a pod's "
                "projected service-account token, Kubernetes 1.32+)"}},
              {{"expression",
                "variables.slice.spec.?nodeName.orValue(\"\") == variables.nodeOfUser"},
               {"messageExpression",
                "\"the plugin on node \" + variables.nodeOfUser + \" may write only its own "
                "node's ResourceSlices\""}},
              {{"expression", "variables.slice.spec.driver == " + CelString(driver)},
               {"message",
                "the plugin may write only its own driver's ResourceSlices (this "
                "policy names driver " +
                    driver +
                    ": with another --dra-driver-name, apply the policy that "
                    "`render --dra-driver-name=...` prints)"}}})}}}};
  json binding = {{"apiVersion", "admissionregistration.k8s.io/v1"},
                  {"kind", "ValidatingAdmissionPolicyBinding"},
                  {"metadata", {{"name", name}}},
                  {"spec", {{"policyName", name}, {"validationActions", {"Deny"}}}}};
  return {std::move(policy), std::move(binding)};
}

}  // namespace rdmadp::dra
