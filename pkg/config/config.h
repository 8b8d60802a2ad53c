// The plugin's configuration: the Go plugin's schema (periodicUpdateInterval, configList[]),
// read from JSON or YAML. Parsing and validation are pure (text in, value or errors out).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rdmadp::config {

// Largest rdmaHcaMax accepted: one ListAndWatch message lists one Device per slot and the
// kubelet rejects messages over 4 MiB. 100,000 slots with a 4-node topology serialise to
// about 3.6 MB (see pool/snapshot.cpp, which also guards the limit at runtime).
inline constexpr int64_t kMaxRdmaHcaMax = 100000;
// One year: keeps interval arithmetic far from overflow.
inline constexpr int64_t kMaxPeriodicUpdateIntervalSeconds = 365LL * 24 * 3600;
inline constexpr int64_t kDefaultPeriodicUpdateIntervalSeconds = 60;
inline constexpr std::string_view kDefaultResourcePrefix = "rdma";

struct Selectors {
  std::vector<std::string> vendors;     // 4 lowercase hex digits
  std::vector<std::string> device_ids;  // 4 lowercase hex digits
  std::vector<std::string> drivers;
  std::vector<std::string> if_names;
  std::vector<std::string> link_types;  // iproute2 names: ether, infiniband, ...

  bool Empty() const {
    return vendors.empty() && device_ids.empty() && drivers.empty() && if_names.empty() &&
           link_types.empty();
  }
  bool operator==(const Selectors&) const = default;
};

struct ResourceConfig {
  std::string resource_name;
  std::string resource_prefix{kDefaultResourcePrefix};
  int64_t rdma_hca_max = 0;
  Selectors selectors;

  // `<prefix>/<name>`, the name the kubelet and pods see.
  std::string FullName() const { return resource_prefix + "/" + resource_name; }
  bool operator==(const ResourceConfig&) const = default;
};

struct Config {
  int64_t periodic_update_interval_seconds = kDefaultPeriodicUpdateIntervalSeconds;  // 0 = off
  std::vector<ResourceConfig> resources;
  bool operator==(const Config&) const = default;
};

struct LoadedConfig {
  Config config;
  // Non-fatal findings (deprecated keys, case-insensitive key matches), one line each.
  std::vector<std::string> warnings;
};

// Parses and validates config text. On failure the status message holds one line per
// problem, each `config: <field path>: <problem>`; every problem is reported, not just the first.
absl::StatusOr<LoadedConfig> ParseConfig(std::string_view text);

// Reads `path` and calls ParseConfig. A read failure is one line naming the path.
absl::StatusOr<LoadedConfig> LoadConfigFile(const std::string& path);

// The kernel keeps a unix socket path in 108 bytes (107 characters). Our sockets are
// `<dir>/.<resourceName>-<8 hex>.sock` while they are being published (see
// server/resource_server.h). One line per resource whose path would not fit under one of
// `socket_dirs`, naming the field, the length and the limit; empty when all fit.
std::vector<std::string> SocketPathProblems(const Config& config,
                                            const std::vector<std::string>& socket_dirs);
inline constexpr size_t kMaxUnixSocketPath = 107;

}  // namespace rdmadp::config
