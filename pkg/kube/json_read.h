// Reading the API server's JSON without trusting its types. nlohmann::json's value() and
// operator[] throw type_error on a field of the wrong type, and an exception escaping a
// worker thread aborts the process: one proxy answering `200 <html>` would crash-loop both
// front ends. Here a field that is absent or of the wrong type reads as absent.
//
// Pure, header-only; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rdmadp::kube {

// The member `key` of `object`, or nullptr (not an object, or no such member).
inline const nlohmann::json* Member(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// The string member `key`, or "" when absent or not a string.
inline std::string Str(const nlohmann::json& object, const char* key) {
  const nlohmann::json* m = Member(object, key);
  return m != nullptr && m->is_string() ? m->get<std::string>() : "";
}

// The object member `key`, or an empty object when absent or not an object.
inline const nlohmann::json& Obj(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json* m = Member(object, key);
  return m != nullptr && m->is_object() ? *m : kEmpty;
}

// The array member `key`, or nullptr when absent or not an array.
inline const nlohmann::json* Arr(const nlohmann::json& object, const char* key) {
  const nlohmann::json* m = Member(object, key);
  return m != nullptr && m->is_array() ? m : nullptr;
}

}  // namespace rdmadp::kube
