// Internal to pkg/config: the file's structure after type checks, before semantic
// validation. parse.cpp fills it; validate.cpp turns it into a Config.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/text/cat.h"
#include "pkg/text/escape.h"

namespace rdmadp::config {

// Bounds that keep a hostile file (a YAML alias bomb: thousands of aliases to one big
// mapping) from costing minutes and gigabytes: a real config is far inside them.
inline constexpr size_t kMaxErrors = 100;
inline constexpr size_t kMaxErrorsPerEntry = 10;
inline constexpr size_t kMaxEntries = 256;      // configList
inline constexpr size_t kMaxListLength = 1024;  // any selector list
// All string values read, added up. YAML aliases repeat a value at every use: a 16 KB file
// of aliases to one long string expanded to 1.2 GiB before this bound (docs/reliability.md,
// "Crash, hang, flood").
inline constexpr size_t kMaxValueBytes = 1 << 20;
// How much of a value an error message repeats.
inline constexpr size_t kMaxEchoBytes = 64;
inline constexpr size_t kMaxObjectKeys = 64;  // any object
inline constexpr int kMaxNesting = 32;        // flow collections ([ {) inside each other

// A value as an error message repeats it: at most kMaxEchoBytes of it.
inline std::string Echo(const std::string& value) {
  if (value.size() <= kMaxEchoBytes) return value;
  return value.substr(0, kMaxEchoBytes) + "... (" + std::to_string(value.size()) + " bytes)";
}

struct Findings {
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  bool truncated = false;
  bool stopped = false;  // Stop(): nothing more is read
  // Readers stop walking once this holds.
  bool Full() const { return stopped || errors.size() >= kMaxErrors; }
  void Stop(const std::string& path, const std::string& problem) {
    Error(path, problem);
    stopped = true;
  }
  void Error(const std::string& path, const std::string& problem) {
    // One entry says at most kMaxErrorsPerEntry problems and a line that there are more:
    // one hostile entry (a thousand bad vendors) must not reach kMaxErrors, which fails the
    // whole file, and so cost the good entries.
    if (const auto entry = EntryOfPath(path)) {
      const size_t n = ++per_entry[*entry];
      if (n > kMaxErrorsPerEntry + 1) return;
      if (n == kMaxErrorsPerEntry + 1) {
        if (!Full()) {
          errors.push_back(Line(Cat("configList[", *entry, "]"),
                                "more problems in this entry are not shown; fix these first"));
        }
        return;
      }
    }
    if (Full()) {
      truncated = true;
      return;
    }
    errors.push_back(Line(path, problem));
  }
  // The configList index `path` is in ("configList[3].selectors" -> 3), if any.
  static std::optional<size_t> EntryOfPath(std::string_view path) {
    constexpr std::string_view kList = "configList[";
    if (!path.starts_with(kList)) return std::nullopt;
    size_t index = 0;
    size_t i = kList.size();
    for (; i < path.size() && i < kList.size() + 6 && path[i] >= '0' && path[i] <= '9'; ++i) {
      index = index * 10 + static_cast<size_t>(path[i] - '0');
    }
    if (i == kList.size() || i >= path.size() || path[i] != ']') return std::nullopt;
    return index;
  }
  std::map<size_t, size_t> per_entry;  // problems said per configList entry
  void Warn(const std::string& path, const std::string& problem) {
    if (warnings.size() >= kMaxErrors) return;
    warnings.push_back(Line(path, problem));
  }
  // One line whatever the file holds: a key or value with a line break or ESC in it is
  // escaped here, so no output (the log, validate, a joined whole-file error) can show a
  // forged line (H11 of the hardening round at 050f44e).
  static std::string Line(const std::string& path, const std::string& problem) {
    return "config: " + EscapeControls(path) + ": " + EscapeControls(problem);
  }
};

struct RawResource {
  std::string path;  // "configList[3]"
  std::optional<std::string> resource_name;
  std::optional<std::string> resource_prefix;
  std::optional<int64_t> rdma_hca_max;
  Selectors selectors;
  // "selectors" has keys, even if none was understood (each unknown one is an error).
  bool selectors_given = false;
  bool selectors_present = false;     // the key is there, even as {} or null
  bool rdma_hca_max_present = false;  // the key is there, even with a value of a wrong type
  std::vector<std::string> devices;
  std::optional<std::string> frontend;
  std::optional<std::string> device_model;
  std::vector<std::string> env_hints;
  std::optional<bool> skip_unusable;
  std::optional<bool> pci_device_env;
  std::optional<std::string> memlock;
  std::optional<int64_t> unused_grace_seconds;
  std::optional<std::string> traffic_class;  // a scalar as written: "auto" or a number
  std::optional<std::string> gid_index;
};

struct RawConfig {
  std::optional<int64_t> periodic_update_interval;  // absent or null: default
  std::vector<RawResource> resources;
};

// Accepts "15b3", "15B3", "0x15b3"; returns "15b3", or "" when it is not a PCI ID (the
// selectors' vendors and deviceIDs; go_compat.cpp tells which forms the Go plugin misses).
std::string NormalizePciId(std::string_view v);

// Semantic checks and defaults; appends to `findings`: each entry's own rules (the rules
// between entries and the total of slots are CrossEntryProblems' and TotalSlotProblems').
Config Validate(const RawConfig& raw, Findings& findings);

// The rules between entries (a name given twice, or through both front ends; two DRA
// entries naming one pool; two device-plugin entries setting one PCIDEVICE_ variable) over
// `config`'s entries in file order: one line for each later entry that clashes with an
// earlier one, naming it. `indices`: configList index of each resource.
std::vector<std::string> CrossEntryProblems(const Config& config,
                                            const std::vector<size_t>& indices);

// The whole-file bound on slots (kMaxTotalRdmaHcaMax) over the entries that serve, in file
// order: one line for each entry that would take the total past it, naming it
// (`config: configList[N].rdmaHcaMax: ...`). `indices`: configList index of each resource.
std::vector<std::string> TotalSlotProblems(const Config& config,
                                           const std::vector<size_t>& indices);

}  // namespace rdmadp::config
