// JSON values as YAML documents, for the `render` command's output (kubectl apply -f).
// Strings are always double-quoted, so "1" stays a string and no value changes type.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rdmadp::dra {

// One "---"-separated document per object.
std::string ToYamlDocuments(const std::vector<nlohmann::json>& objects);

}  // namespace rdmadp::dra
