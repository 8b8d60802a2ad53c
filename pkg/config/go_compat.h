// `k8s-rdma-shared-dp validate --go-compatible`: would the Go plugin (Mellanox/
// k8s-rdma-shared-dev-plugin) start on this config file and read it as we do, and would
// NVIDIA network-operator's admission webhook let it into a policy? An operator runs it
// before a rollback to the Go plugin. Pure: text in, lines out.
//
// The rules are restated, not copied, from (docs/go-compat-notes.md lists each one):
//  - k8s-rdma-shared-dev-plugin pkg/types/types.go (the fields and their Go types) and
//    pkg/resources/resources_manager.go (ReadConfig, which decodes with Go's
//    encoding/json.Unmarshal, and ValidateConfigs);
//  - Go's encoding/json (decode.go, scanner.go, fold.go): strict syntax, keys matched
//    ignoring case, a later duplicate decoded over an earlier one, int fields that take
//    digits only;
//  - network-operator webhook-schemas/rdma_shared_device_plugin.json (the JSON schema) and
//    api/v1alpha1/validator/nicpolicy_webhook.go (validateRdmaSharedDevicePlugin: the
//    resourceName and resourcePrefix patterns).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rdmadp::config {

// Every reason the Go plugin would refuse `text` or read it differently from this plugin,
// and every reason the webhook would refuse it; empty when the file is safe for both.
//
// One line per problem: `go-compatible: <where>: <problem>: <who refuses or ignores it>`.
// <where> is a field path as written in the file (configList[1].selectors.pciAddresses),
// "line N column M" for a problem of the text itself, or "top level". The Go plugin's own
// validation (ValidateConfigs) runs on what it decoded, so its lines come last and name
// fields by their canonical spelling. A syntax error ends the check: nothing after it is
// read, as neither Go decoder reads past it. At most kMaxErrors (raw_config.h) lines and
// one more saying how many were left out. Echoed values are cut at kMaxEchoBytes, with
// control characters and bytes that are not UTF-8 escaped. Throws nothing but bad_alloc.
std::vector<std::string> GoCompatProblems(std::string_view text);

}  // namespace rdmadp::config
