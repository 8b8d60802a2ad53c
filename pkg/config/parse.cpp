// Structure and type checks of the config file. yaml-cpp reads both JSON and YAML; its
// exceptions are caught here and never leave the module.
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "pkg/config/config.h"
#include "pkg/config/raw_config.h"
#include "pkg/fd/files.h"
#include "pkg/text/cat.h"
#include "pkg/text/edit_distance.h"

namespace rdmadp::config {
namespace {

struct Reader {
  bool json;  // JSON input: string fields must be quoted, like Go's encoding/json demands
  Findings& findings;
  size_t value_bytes = 0;  // string values read so far (kMaxValueBytes)
  // The warnings about top-level keys that were not read: a file that fails as a whole
  // repeats them, since a misspelled "configList" is then the likely cause.
  std::vector<std::string> ignored_keys{};  // {}: aggregate-initialized without it
};

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "an object";
    case YAML::NodeType::Scalar:
      if (node.Tag() == "!") return Cat("the string \"", Echo(node.Scalar()), "\"");
      return Cat("the value ", Echo(node.Scalar()));
    default:
      return "nothing";
  }
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (absl::ascii_tolower(a[i]) != absl::ascii_tolower(b[i])) return false;
  }
  return true;
}

// The known key nearest to `key` when it is close enough to be a typo of it (at most 3
// edits; the first of equally near ones), else "".
std::string_view NearestKey(std::string_view key, const std::vector<std::string_view>& known) {
  std::string_view nearest;
  size_t best = 4;
  for (auto k : known) {
    if (const size_t d = EditDistance(k, key); d < best) {
      best = d;
      nearest = k;
    }
  }
  return nearest;
}

// How ForEachKnownKey treats a key that is not in `known`.
enum class UnknownKeys {
  // An error: inside an entry a misspelled selector key would silently widen a pool.
  kError,
  // A warning, and the key is not read: at the top level, where the Go plugin (whose file
  // this is, unchanged) ignores unknown keys, so a key a newer config adds must not stop us.
  kWarn,
};

// Walks a mapping, resolving each key against `known`. Exact keys are silent; keys that
// match only case-insensitively (Go's encoding/json accepts them) are warnings; unknown keys
// are as `unknown` says, naming the nearest known key; duplicate keys are errors.
template <typename Fn>
void ForEachKnownKey(const YAML::Node& map, const std::string& path,
                     const std::vector<std::string_view>& known, UnknownKeys unknown, Reader& r,
                     Fn&& fn) {
  std::vector<std::string_view> seen;
  if (map.size() > kMaxObjectKeys) {
    r.findings.Error(
        path.empty() ? "top level" : path,
        unknown == UnknownKeys::kWarn
            ? Cat("has ", map.size(), " keys; at most ", kMaxObjectKeys,
                  " are read (known keys: ", Join(known, ", "), ")")
            : Cat("has ", map.size(), " keys; an object here has at most ", known.size()));
    return;
  }
  for (const auto& entry : map) {
    if (r.findings.Full()) return;
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    const std::string key_path = path.empty() ? Echo(key) : Cat(path, ".", Echo(key));
    auto exact = std::find(known.begin(), known.end(), key);
    std::string_view canonical;
    if (exact != known.end()) {
      canonical = *exact;
    } else {
      for (auto k : known) {
        if (EqualsIgnoreCase(k, key)) canonical = k;
      }
      if (!canonical.empty()) {
        r.findings.Warn(key_path, Cat("key matched \"", canonical, "\" ignoring case; write \"",
                                      canonical, "\""));
      }
    }
    if (canonical.empty()) {
      const std::string_view nearest = NearestKey(key, known);
      const std::string hint = nearest.empty() ? "" : Cat("; did you mean \"", nearest, "\"?");
      if (unknown == UnknownKeys::kWarn) {
        const size_t before = r.findings.warnings.size();
        r.findings.Warn(key_path,
                        nearest.empty()
                            ? Cat("unknown key (ignored, as the Go plugin ignores it; "
                                  "known keys: ",
                                  Join(known, ", "), ")")
                            : Cat("unknown key", hint, " (ignored, as the Go plugin ignores it)"));
        if (r.findings.warnings.size() > before) {
          r.ignored_keys.push_back(r.findings.warnings.back());
        }
        continue;
      }
      r.findings.Error(key_path,
                       Cat("unknown key", hint, " (known keys: ", Join(known, ", "), ")"));
      continue;
    }
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) {
      r.findings.Error(key_path, "duplicate key");
      continue;
    }
    seen.push_back(canonical);
    fn(canonical, entry.second, path.empty() ? std::string(canonical) : Cat(path, ".", canonical));
  }
}

std::optional<int64_t> ReadInt(const YAML::Node& node, const std::string& path, Reader& r) {
  if (node.IsNull()) return std::nullopt;
  if (node.IsScalar() && node.Tag() != "!") {
    const std::string& s = node.Scalar();
    int64_t value = 0;
    const char* end = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(s.data(), end, value);
    if (ec == std::errc() && ptr == end && !s.empty()) return value;
    if (ec == std::errc::result_out_of_range) {
      r.findings.Error(path, Cat("integer ", s, " is out of range"));
      return std::nullopt;
    }
  }
  r.findings.Error(path, Cat("must be an integer, got ", Describe(node)));
  return std::nullopt;
}

std::optional<bool> ReadBool(const YAML::Node& node, const std::string& path, Reader& r) {
  if (node.IsNull()) return std::nullopt;
  if (node.IsScalar() && node.Tag() != "!") {
    if (node.Scalar() == "true") return true;
    if (node.Scalar() == "false") return false;
  }
  r.findings.Error(path, Cat("must be true or false, got ", Describe(node)));
  return std::nullopt;
}

std::optional<std::string> ReadString(const YAML::Node& node, const std::string& path, Reader& r) {
  if (r.findings.Full()) return std::nullopt;
  if (node.IsScalar() && (node.Tag() == "!" || !r.json)) {
    r.value_bytes += node.Scalar().size();
    if (r.value_bytes > kMaxValueBytes) {
      r.findings.Stop(path, Cat("the config's values add up to more than ", kMaxValueBytes,
                                " bytes (YAML aliases repeat a value at every use); nothing "
                                "after this was read"));
      return std::nullopt;
    }
    return node.Scalar();
  }
  r.findings.Error(path, Cat("must be a string, got ", Describe(node)));
  return std::nullopt;
}

std::vector<std::string> ReadStringList(const YAML::Node& node, const std::string& path,
                                        Reader& r) {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence()) {
    r.findings.Error(path, Cat("must be a list of strings, got ", Describe(node)));
    return out;
  }
  if (node.size() > kMaxListLength) {
    r.findings.Error(path, Cat("has ", node.size(), " entries; at most ", kMaxListLength));
    return out;
  }
  for (size_t i = 0; i < node.size() && !r.findings.Full(); ++i) {
    if (auto s = ReadString(node[i], Cat(path, "[", i, "]"), r)) out.push_back(*s);
  }
  return out;
}

Selectors ReadSelectors(const YAML::Node& node, const std::string& path, Reader& r) {
  Selectors sel;
  if (node.IsNull()) return sel;
  if (!node.IsMap()) {
    r.findings.Error(path, Cat("must be an object, got ", Describe(node)));
    return sel;
  }
  ForEachKnownKey(
      node, path, {"vendors", "deviceIDs", "drivers", "ifNames", "linkTypes", "pciAddresses"},
      UnknownKeys::kError, r, [&](std::string_view key, const YAML::Node& v, const std::string& p) {
        auto list = ReadStringList(v, p, r);
        if (key == "vendors") {
          sel.vendors = std::move(list);
        } else if (key == "deviceIDs") {
          sel.device_ids = std::move(list);
        } else if (key == "drivers") {
          sel.drivers = std::move(list);
        } else if (key == "ifNames") {
          sel.if_names = std::move(list);
        } else if (key == "pciAddresses") {
          sel.pci_addresses = std::move(list);
        } else {
          sel.link_types = std::move(list);
        }
      });
  return sel;
}

RawResource ReadResource(const YAML::Node& node, const std::string& path, Reader& r) {
  RawResource res;
  res.path = path;
  if (!node.IsMap()) {
    r.findings.Error(path, Cat("must be an object, got ", Describe(node)));
    return res;
  }
  ForEachKnownKey(
      node, path,
      {"resourceName", "resourcePrefix", "rdmaHcaMax", "selectors", "devices", "frontend",
       "deviceModel", "envHints", "skipUnusable", "memlock", "pciDeviceEnv", "unusedGraceSeconds",
       "trafficClass", "gidIndex"},
      UnknownKeys::kError, r, [&](std::string_view key, const YAML::Node& v, const std::string& p) {
        if (key == "resourceName") res.resource_name = ReadString(v, p, r);
        if (key == "resourcePrefix") res.resource_prefix = ReadString(v, p, r);
        if (key == "rdmaHcaMax") {
          res.rdma_hca_max = ReadInt(v, p, r);
          res.rdma_hca_max_present = true;
        }
        if (key == "selectors") {
          res.selectors = ReadSelectors(v, p, r);
          res.selectors_given = v.IsMap() && v.size() > 0;
          res.selectors_present = true;
        }
        if (key == "devices") res.devices = ReadStringList(v, p, r);
        if (key == "frontend") res.frontend = ReadString(v, p, r);
        if (key == "deviceModel") res.device_model = ReadString(v, p, r);
        if (key == "envHints") res.env_hints = ReadStringList(v, p, r);
        if (key == "skipUnusable") res.skip_unusable = ReadBool(v, p, r);
        if (key == "pciDeviceEnv") res.pci_device_env = ReadBool(v, p, r);
        if (key == "unusedGraceSeconds") res.unused_grace_seconds = ReadInt(v, p, r);
        if (key == "trafficClass" || key == "gidIndex") {
          auto& field = key == "trafficClass" ? res.traffic_class : res.gid_index;
          if (v.IsScalar() && v.Scalar().size() <= 16) {
            field = v.Scalar();
          } else {
            r.findings.Error(p, Cat("must be \"auto\" or a number 0..255, got ", Describe(v)));
          }
        }
        if (key == "memlock") {
          // A quantity may be written as a number too (64 = 64 bytes).
          if (v.IsScalar() && v.Scalar().size() <= 64) {
            res.memlock = v.Scalar();
          } else {
            r.findings.Error(p, Cat("must be \"unlimited\" or a quantity such as "
                                    "\"64Gi\", got ",
                                    Describe(v)));
          }
        }
      });
  return res;
}

}  // namespace

// The entry a finding belongs to: N for "config: configList[N]<. [ :>...", else none.
std::optional<size_t> EntryOf(std::string_view error) {
  constexpr std::string_view kPrefix = "config: configList[";
  if (!error.starts_with(kPrefix)) return std::nullopt;
  error.remove_prefix(kPrefix.size());
  size_t n = 0;
  const auto [end, ec] = std::from_chars(error.data(), error.data() + error.size(), n);
  if (ec != std::errc() || end == error.data() || end == error.data() + error.size() ||
      *end != ']') {
    return std::nullopt;
  }
  return n;
}

namespace {

RawConfig ReadTop(const YAML::Node& root, Reader& r) {
  RawConfig raw;
  if (root.IsNull()) return raw;  // Go decodes `null` to an empty config
  if (!root.IsMap()) {
    r.findings.Error("top level", Cat("must be an object, got ", Describe(root)));
    return raw;
  }
  ForEachKnownKey(root, "", {"periodicUpdateInterval", "configList"}, UnknownKeys::kWarn, r,
                  [&](std::string_view key, const YAML::Node& v, const std::string& p) {
                    if (key == "periodicUpdateInterval") {
                      raw.periodic_update_interval = ReadInt(v, p, r);
                      return;
                    }
                    if (v.IsNull()) return;
                    if (!v.IsSequence()) {
                      r.findings.Error(p, Cat("must be a list, got ", Describe(v)));
                      return;
                    }
                    if (v.size() > kMaxEntries) {
                      r.findings.Error(p, Cat("has ", v.size(), " entries; at most ", kMaxEntries));
                      return;
                    }
                    for (size_t i = 0; i < v.size() && !r.findings.Full(); ++i) {
                      raw.resources.push_back(ReadResource(v[i], Cat("configList[", i, "]"), r));
                    }
                  });
  return raw;
}

// yaml-cpp gives up on deeply nested flow collections with only "bad file". A config is
// four levels deep at most; anything past kMaxNesting is named here, with its place.
std::string NestingProblem(std::string_view text) {
  int depth = 0;
  size_t line = 1, column = 0;
  char quote = 0;
  bool comment = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      comment = false;
      continue;
    }
    if (comment) continue;
    if (quote != 0) {
      if (c == '\\' && quote == '"') {
        ++i;
        ++column;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      comment = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) {
        return Cat("config: line ", line, " column ", column, ": nested more than ", kMaxNesting,
                   " levels deep; a config needs at most 4");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return "";
}

// yaml-cpp reports a tab in indentation as some other syntax error; the fix is to say "tab".
std::string TabHint(std::string_view text) {
  size_t line = 1;
  for (size_t start = 0; start < text.size(); ++line) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view l = text.substr(start, end - start);
    const size_t indent = l.find_first_not_of(" \t");
    if (l.substr(0, indent == std::string_view::npos ? l.size() : indent).find('\t') !=
        std::string_view::npos) {
      return Cat(" (line ", line, " is indented with a tab; YAML indents with spaces only)");
    }
    start = end + 1;
  }
  return "";
}

// Moves the entries `problems` name into `loaded.skipped`, keeping file order. False, with
// nothing changed, when a problem names no entry or no entry would be left.
bool SkipEntries(LoadedConfig& loaded, const std::vector<std::string>& problems) {
  if (problems.empty()) return true;
  std::map<size_t, std::vector<std::string>> per_entry;
  for (const auto& p : problems) {
    auto entry = EntryOf(p);
    if (!entry) return false;
    per_entry[*entry].push_back(p);
  }
  std::vector<ResourceConfig> kept;
  std::vector<size_t> kept_indices;
  std::vector<SkippedEntry> skipped;
  for (size_t i = 0; i < loaded.config.resources.size(); ++i) {
    const size_t index = loaded.indices[i];
    auto it = per_entry.find(index);
    if (it == per_entry.end()) {
      kept.push_back(loaded.config.resources[i]);
      kept_indices.push_back(index);
    } else {
      skipped.push_back({index, loaded.config.resources[i].resource_name, it->second});
    }
  }
  if (kept.empty()) return false;
  loaded.config.resources = std::move(kept);
  loaded.indices = std::move(kept_indices);
  for (auto& entry : skipped) {
    // A running version kept for a skipped entry and now skipped too: one entry, its lines.
    auto same = std::find_if(loaded.skipped.begin(), loaded.skipped.end(),
                             [&](const SkippedEntry& e) { return e.index == entry.index; });
    if (same == loaded.skipped.end()) {
      loaded.skipped.push_back(std::move(entry));
    } else {
      same->problems.insert(same->problems.end(), entry.problems.begin(), entry.problems.end());
    }
  }
  std::sort(loaded.skipped.begin(), loaded.skipped.end(),
            [](const SkippedEntry& a, const SkippedEntry& b) { return a.index < b.index; });
  return true;
}

// A file that starts as JSON does ('{' or '[') is read as JSON, by the rules the Go plugin
// (encoding/json) and network-operator's webhook read it by: YAML's comments, trailing
// commas and single quotes, which yaml-cpp would take, are refused here rather than there,
// at a rollback or at the webhook. "" when it is JSON; else one line naming the place.
std::string JsonSyntaxProblem(std::string_view text) {
  if (nlohmann::json::accept(text)) return "";
  try {
    const auto parsed = nlohmann::json::parse(text);  // throws where accept() said no
    return parsed.is_discarded() ? "config: not valid JSON" : "";
  } catch (const nlohmann::json::parse_error& e) {
    size_t line = 1;
    size_t column = 1;
    const size_t end = std::min(e.byte > 0 ? e.byte - 1 : 0, text.size());
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string detail = e.what();  // "[json.exception...] parse error at line L, column C: ..."
    if (const size_t colon = detail.find(": "); colon != std::string::npos) {
      detail = detail.substr(colon + 2);
    }
    // Its "; last read: '...'" repeats the file's bytes: the place says where instead.
    detail = detail.substr(0, detail.find("; last read"));
    return Cat("config: line ", line, " column ", column, ": not valid JSON: ", detail,
               " (a file that starts with '{' or '[' is read as JSON, as the Go plugin and "
               "network-operator's webhook read it: no comments, trailing commas or single "
               "quotes; write YAML without the braces)");
  } catch (const nlohmann::json::exception& e) {
    return Cat("config: not valid JSON: ", Echo(e.what()));
  }
}

// A reload's rule (ParseConfig's `running`): an entry skipped now whose resourceName serves
// under the running config, and that no entry left takes, keeps its running version, at its
// place in file order; the skipped entry is marked so.
void KeepRunningVersions(const Config& running, LoadedConfig& loaded) {
  for (auto& entry : loaded.skipped) {
    auto named = [&](const ResourceConfig& rc) { return rc.resource_name == entry.resource_name; };
    const auto it = std::find_if(running.resources.begin(), running.resources.end(), named);
    if (it == running.resources.end() ||
        std::any_of(loaded.config.resources.begin(), loaded.config.resources.end(), named)) {
      continue;
    }
    const auto at = std::lower_bound(loaded.indices.begin(), loaded.indices.end(), entry.index);
    loaded.config.resources.insert(loaded.config.resources.begin() + (at - loaded.indices.begin()),
                                   *it);
    loaded.indices.insert(at, entry.index);
    entry.running_version_kept = true;
  }
}

}  // namespace

absl::StatusOr<LoadedConfig> ParseConfig(std::string_view text, const EntryChecks& checks,
                                         const Config* running) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return absl::InvalidArgumentError("config: file is empty; it needs a configList");
  }
  Findings findings;
  Reader reader{text[first] == '{' || text[first] == '[', findings};
  if (std::string problem = NestingProblem(text); !problem.empty()) {
    return absl::InvalidArgumentError(problem);
  }
  if (reader.json) {
    if (std::string problem = JsonSyntaxProblem(text); !problem.empty()) {
      return absl::InvalidArgumentError(problem);
    }
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        Cat("config: line ", e.mark.line + 1, " column ", e.mark.column + 1, ": not valid ",
            reader.json ? "JSON" : "YAML", ": ", e.msg, reader.json ? "" : TabHint(text)));
  }
  const RawConfig raw = ReadTop(root, reader);
  LoadedConfig loaded;
  loaded.config = Validate(raw, findings);
  if (findings.truncated) {
    findings.errors.push_back(
        Cat("config: over ", kMaxErrors, " problems; the first ones are above: fix those first"));
  }
  // The whole file fails on a problem outside any entry, or when no entry is left; the
  // ignored top-level keys are said then too: `{"configLists": [...]}` fails for want of a
  // configList, and the line that says so is the one naming the misspelled key.
  auto whole_file = [&](std::vector<std::string> errors) {
    for (const auto& w : reader.ignored_keys) errors.push_back(w);
    return absl::InvalidArgumentError(Join(errors, "\n"));
  };
  if (loaded.config.resources.size() != raw.resources.size()) return whole_file(findings.errors);
  for (size_t i = 0; i < raw.resources.size(); ++i) loaded.indices.push_back(i);
  if (!SkipEntries(loaded, findings.errors)) return whole_file(findings.errors);
  if (checks) {
    const auto problems = checks(loaded.config, loaded.indices);
    if (!SkipEntries(loaded, problems)) {
      std::vector<std::string> all;
      for (const auto& entry : loaded.skipped) {
        all.insert(all.end(), entry.problems.begin(), entry.problems.end());
      }
      all.insert(all.end(), problems.begin(), problems.end());
      return whole_file(std::move(all));
    }
  }
  if (running != nullptr) KeepRunningVersions(*running, loaded);
  // Over the entries left (and the running versions kept), so that no entry skipped by an
  // earlier rule claims a name or a slot. Neither can empty the file: the first entry left
  // clashes with nothing before it, and is within the bound on its own.
  const auto kept_skipped = [&](const std::vector<std::string>& problems) {
    for (const auto& p : problems) {
      for (auto& entry : loaded.skipped) {
        if (EntryOf(p) == entry.index) entry.running_version_kept = false;
      }
    }
    SkipEntries(loaded, problems);
  };
  kept_skipped(CrossEntryProblems(loaded.config, loaded.indices));
  kept_skipped(TotalSlotProblems(loaded.config, loaded.indices));
  loaded.warnings = std::move(findings.warnings);
  return loaded;
}

std::string SkippedEntry::Label() const {
  return resource_name.empty() ? Cat("configList[", index, "]")
                               : Cat("configList[", index, "] (", resource_name, ")");
}

absl::StatusOr<LoadedConfig> LoadConfigFile(const std::string& path, const EntryChecks& checks,
                                            const Config* running) {
  // Type and size before reading: the loop thread reads this on every reload, and a FIFO
  // or a huge file must neither block it nor fill memory.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(
          Cat("config: ", path,
              " is a directory; --config-file must name the file in it (the "
              "ConfigMap's key, e.g. ",
              path, "/config.json)"));
    }
    if (!S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(
          Cat("config: ", path,
              " is not a regular file (a FIFO or a device?); --config-file "
              "must name the ConfigMap's file"));
    }
    if (st.st_size > static_cast<off_t>(kMaxConfigBytes)) {
      return absl::InvalidArgumentError(Cat("config: ", path, " is ", st.st_size,
                                            " bytes; a config is at most ", kMaxConfigBytes,
                                            " bytes"));
    }
  }
  // One byte past the limit tells of a file that grew after the stat.
  std::optional<std::string> text = fd::ReadFile(path, kMaxConfigBytes + 1);
  if (!text) {
    return absl::NotFoundError(Cat("config: cannot read ", path, ": ", std::strerror(errno),
                                   " (set --config-file to the mounted ConfigMap file)"));
  }
  if (text->size() > kMaxConfigBytes) {
    return absl::InvalidArgumentError(Cat("config: ", path, " grew past ", kMaxConfigBytes,
                                          " bytes while being read; a config is at most ",
                                          kMaxConfigBytes, " bytes"));
  }
  return ParseConfig(*text, checks, running);
}

}  // namespace rdmadp::config
