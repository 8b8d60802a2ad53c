// Process-wide logger: one line per event on stderr, written with a single write(2)
// so lines from gRPC threads and the event loop never interleave.
// Thread-safe. Level and format are set once by main before threads start.
#pragma once

#include <string_view>

namespace rdmadp::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class Format { kText, kJson };

void SetLevel(Level level);
void SetFormat(Format format);
bool Enabled(Level level);

void Write(Level level, std::string_view message);
inline void Debug(std::string_view m) { Write(Level::kDebug, m); }
inline void Info(std::string_view m) { Write(Level::kInfo, m); }
inline void Warn(std::string_view m) { Write(Level::kWarn, m); }
inline void Error(std::string_view m) { Write(Level::kError, m); }

}  // namespace rdmadp::log
