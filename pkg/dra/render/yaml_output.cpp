#include "pkg/dra/render/yaml_output.h"

#include <yaml-cpp/yaml.h>

namespace rdmadp::dra {
namespace {

void Emit(YAML::Emitter& out, const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [key, item] : v.items()) {
        out << YAML::Key << key << YAML::Value;
        Emit(out, item);
      }
      out << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& item : v) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case nlohmann::json::value_t::string:
      out << YAML::DoubleQuoted << v.get<std::string>();
      break;
    case nlohmann::json::value_t::boolean:
      out << (v.get<bool>() ? "true" : "false");
      break;
    case nlohmann::json::value_t::null:
      out << YAML::Null;
      break;
    default:  // numbers
      out << v.dump();
      break;
  }
}

}  // namespace

std::string ToYamlDocuments(const std::vector<nlohmann::json>& objects) {
  std::string text;
  for (const auto& object : objects) {
    YAML::Emitter out;
    Emit(out, object);
    text += "---\n";
    text += out.c_str();
    text += "\n";
  }
  return text;
}

}  // namespace rdmadp::dra
