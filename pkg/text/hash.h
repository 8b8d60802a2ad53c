// FNV-1a, 64 bits: a stable hash of text (the config's fingerprint, Event names), the same on
// every build and every run, unlike std::hash. Pure.
#pragma once

#include <cstdint>
#include <string_view>

namespace rdmadp {

inline constexpr uint64_t kFnv1aOffset = 14695981039346656037ULL;

// `s` folded into `hash` (kFnv1aOffset to start), so several parts hash as one text.
inline uint64_t Fnv1a(std::string_view s, uint64_t hash = kFnv1aOffset) {
  for (unsigned char c : s) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace rdmadp
