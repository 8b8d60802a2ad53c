// Internal to pkg/config: the file's structure after type checks, before semantic
// validation. parse.cpp fills it; validate.cpp turns it into a Config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pkg/config/config.h"

namespace rdmadp::config {

struct Findings {
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  void Error(const std::string& path, const std::string& problem) {
    errors.push_back("config: " + path + ": " + problem);
  }
  void Warn(const std::string& path, const std::string& problem) {
    warnings.push_back("config: " + path + ": " + problem);
  }
};

struct RawResource {
  std::string path;  // "configList[3]"
  std::optional<std::string> resource_name;
  std::optional<std::string> resource_prefix;
  std::optional<int64_t> rdma_hca_max;
  Selectors selectors;
  std::vector<std::string> devices;
};

struct RawConfig {
  std::optional<int64_t> periodic_update_interval;  // absent or null: default
  std::vector<RawResource> resources;
};

// Semantic checks and defaults; appends to `findings`.
Config Validate(const RawConfig& raw, Findings& findings);

}  // namespace rdmadp::config
