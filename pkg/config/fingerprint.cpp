// The config in force as one number, for rdma_shared_dp_config_hash.
#include <cstdint>
#include <string>

#include "pkg/config/config.h"
#include "pkg/text/cat.h"
#include "pkg/text/hash.h"

namespace rdmadp::config {
namespace {

// Each value length-prefixed, so that no two configs give one text ("ab","c" vs "a","bc").
void Field(std::string& out, std::string_view value) { Append(out, value.size(), ':', value, ';'); }

void List(std::string& out, const std::vector<std::string>& values) {
  Field(out, std::to_string(values.size()));
  for (const auto& v : values) Field(out, v);
}

}  // namespace

uint64_t Fingerprint(const Config& config) {
  std::string text;
  Field(text, std::to_string(config.periodic_update_interval_seconds));
  for (const ResourceConfig& rc : config.resources) {
    Field(text, rc.resource_prefix);
    Field(text, rc.resource_name);
    Field(text, std::to_string(rc.rdma_hca_max));
    const Selectors& s = rc.selectors;
    for (const auto* list :
         {&s.vendors, &s.device_ids, &s.drivers, &s.if_names, &s.link_types, &s.pci_addresses}) {
      List(text, *list);
    }
    Field(text, FrontendName(rc.frontend));
    Field(text, DeviceModelName(rc.device_model));
    Field(text, std::to_string(rc.env_hints.size()));
    for (EnvHint h : rc.env_hints) Field(text, EnvHintName(h));
    Field(text, rc.skip_unusable ? "1" : "0");
    Field(text, rc.memlock ? MemlockArg(*rc.memlock) : "");
    Field(text, rc.pci_device_env ? "1" : "0");
    Field(text, rc.unused_grace_seconds ? std::to_string(*rc.unused_grace_seconds) : "");
    Field(text, rc.traffic_class ? RoceValueText(*rc.traffic_class) : "");
    Field(text, rc.gid_index ? RoceValueText(*rc.gid_index) : "");
  }
  // FNV-1a, 64 bits, kept to 48: a Prometheus sample is a double, exact to 2^53.
  return Fnv1a(text) & ((uint64_t{1} << 48) - 1);
}

}  // namespace rdmadp::config
