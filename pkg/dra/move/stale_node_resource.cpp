#include "pkg/dra/move/stale_node_resource.h"

#include "pkg/kube/json_read.h"
#include "pkg/text/cat.h"

namespace rdmadp::dra {
namespace {

std::string NodeStatusEntry(const nlohmann::json& node, const char* list, const std::string& name) {
  const nlohmann::json& values = kube::Obj(kube::Obj(node, "status"), list);
  auto it = values.find(name);
  return it != values.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

bool IsZeroQuantity(std::string_view q) {
  if (!q.empty() && (q.front() == '+' || q.front() == '-')) q.remove_prefix(1);
  // The number: digits with at most one '.', then a suffix (SI, binary or an exponent).
  size_t i = 0;
  bool digit = false, dot = false;
  for (; i < q.size(); ++i) {
    if (q[i] >= '0' && q[i] <= '9') {
      if (q[i] != '0') return false;
      digit = true;
    } else if (q[i] == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digit) return false;
  const std::string_view suffix = q.substr(i);
  static constexpr std::string_view kSuffixes[] = {"",  "n", "u",  "m",  "k",  "M",  "G",  "T",
                                                   "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  for (std::string_view s : kSuffixes) {
    if (suffix == s) return true;
  }
  if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::string_view exp = suffix.substr(1);
    if (exp.front() == '+' || exp.front() == '-') exp.remove_prefix(1);
    return !exp.empty() && exp.find_first_not_of("0123456789") == std::string_view::npos;
  }
  return false;
}

NodeResource ReadNodeResource(const nlohmann::json& node, const std::string& name) {
  NodeResource r{name, NodeResourceState::kAbsent, NodeStatusEntry(node, "capacity", name),
                 NodeStatusEntry(node, "allocatable", name)};
  if (r.capacity.empty() && r.allocatable.empty()) return r;
  if (!r.allocatable.empty() && !IsZeroQuantity(r.allocatable)) {
    r.state = NodeResourceState::kServed;
  } else if (!r.capacity.empty() && !IsZeroQuantity(r.capacity)) {
    r.state = NodeResourceState::kDraining;
  } else {
    r.state = NodeResourceState::kStale;
  }
  return r;
}

std::string JsonPointerToken(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

nlohmann::json RemoveStalePatch(const std::vector<NodeResource>& resources) {
  nlohmann::json tests = nlohmann::json::array();
  nlohmann::json removes = nlohmann::json::array();
  for (const auto& r : resources) {
    if (r.state != NodeResourceState::kStale) continue;
    const std::string token = JsonPointerToken(r.name);
    for (const auto& [list, value] :
         {std::pair<const char*, const std::string*>{"capacity", &r.capacity},
          {"allocatable", &r.allocatable}}) {
      if (value->empty()) continue;
      const std::string path = Cat("/status/", list, "/", token);
      tests.push_back({{"op", "test"}, {"path", path}, {"value", *value}});
      removes.push_back({{"op", "remove"}, {"path", path}});
    }
  }
  for (auto& r : removes) tests.push_back(std::move(r));
  return tests;
}

std::string DescribeNodeResource(const NodeResource& r, std::string_view node) {
  const std::string shown = Cat("capacity ", r.capacity.empty() ? "none" : r.capacity,
                                ", allocatable ", r.allocatable.empty() ? "none" : r.allocatable);
  switch (r.state) {
    case NodeResourceState::kAbsent:
      return Cat(r.name, ": not in node ", node, "'s status; nothing to remove");
    case NodeResourceState::kServed:
      return Cat(r.name, ": a device plugin still serves it on node ", node, " (", shown,
                 "); not removed: stop serving it there first");
    case NodeResourceState::kDraining:
      return Cat(r.name, ": its device plugin left node ", node, " less than 5 minutes ago (",
                 shown,
                 "); not removed: the kubelet would write it back; run this again after 5 "
                 "minutes");
    case NodeResourceState::kStale:
      return Cat(r.name, ": left at ", shown, " on node ", node,
                 " by a device plugin that is gone");
  }
  return "";
}

}  // namespace rdmadp::dra
