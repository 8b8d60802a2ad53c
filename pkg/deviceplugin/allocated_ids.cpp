#include "pkg/deviceplugin/allocated_ids.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "pkg/fd/files.h"
#include "pkg/text/cat.h"

namespace rdmadp::deviceplugin {
namespace {

using nlohmann::json;

// The IDs of one entry's DeviceIDs: an array (before 1.20) or NUMA node -> array.
bool AddIds(const json& device_ids, std::vector<std::string>& out) {
  auto add_array = [&](const json& array) {
    if (!array.is_array()) return false;
    for (const auto& id : array) {
      if (!id.is_string()) return false;
      out.push_back(id.get<std::string>());
    }
    return true;
  };
  if (device_ids.is_null()) return true;
  if (device_ids.is_array()) return add_array(device_ids);
  if (!device_ids.is_object()) return false;
  for (const auto& item : device_ids.items()) {
    if (!item.value().is_null() && !add_array(item.value())) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<AllocatedIds> ParseCheckpointAllocations(std::string_view text,
                                                        std::string_view resource) {
  const json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return absl::InvalidArgumentError("is not a JSON object");
  }
  auto data = doc.find("Data");
  if (data == doc.end() || !data->is_object()) {
    return absl::InvalidArgumentError("has no \"Data\" object");
  }
  AllocatedIds out;
  auto entries = data->find("PodDeviceEntries");
  if (entries == data->end() || entries->is_null()) return out;
  if (!entries->is_array()) {
    return absl::InvalidArgumentError("Data.PodDeviceEntries is not an array");
  }
  for (size_t i = 0; i < entries->size(); ++i) {
    const json& e = (*entries)[i];
    auto name = e.is_object() ? e.find("ResourceName") : e.end();
    if (!e.is_object() || name == e.end() || !name->is_string()) {
      return absl::InvalidArgumentError(
          Cat("Data.PodDeviceEntries[", i, "] has no string ResourceName"));
    }
    if (name->get<std::string>() != resource) continue;
    auto ids = e.find("DeviceIDs");
    const size_t before = out.ids.size();
    if (ids != e.end() && !AddIds(*ids, out.ids)) {
      return absl::InvalidArgumentError(
          Cat("Data.PodDeviceEntries[", i, "].DeviceIDs is neither a list nor NUMA lists"));
    }
    auto pod = e.find("PodUID");
    if (out.ids.size() > before && pod != e.end() && pod->is_string()) {
      std::string uid = pod->get<std::string>();
      if (std::find(out.pod_uids.begin(), out.pod_uids.end(), uid) == out.pod_uids.end()) {
        out.pod_uids.push_back(std::move(uid));
      }
    }
  }
  return out;
}

absl::StatusOr<AllocatedIds> ReadCheckpointAllocations(const std::string& path,
                                                       std::string_view resource) {
  std::optional<std::string> text = fd::ReadFile(path, kMaxCheckpointBytes + 1);
  if (!text) {
    if (errno == ENOENT) return AllocatedIds{};
    return absl::UnavailableError(Cat(path, ": ", std::strerror(errno)));
  }
  if (text->size() > kMaxCheckpointBytes) {
    return absl::InvalidArgumentError(Cat(path, ": over ", kMaxCheckpointBytes, " bytes"));
  }
  auto parsed = ParseCheckpointAllocations(*text, resource);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(Cat(path, " ", std::string(parsed.status().message())));
  }
  return parsed;
}

}  // namespace rdmadp::deviceplugin
