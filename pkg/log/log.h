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

// What a line is about, as fields a log pipeline can filter on (--log-format=json: keys
// "resource", "hca", "event", present when set). The text format shows the message only,
// which names them already.
struct Fields {
  std::string_view resource;  // rdma/hca_shared_devices_a, or the DRA driver's name
  std::string_view hca;       // a PCI address, or an RDMA device name
  std::string_view event;     // a short bounded word: registration, pool, rescan, cdi, ...
};

void Write(Level level, std::string_view message, const Fields& fields = {});
inline void Debug(std::string_view m, const Fields& f = {}) { Write(Level::kDebug, m, f); }
inline void Info(std::string_view m, const Fields& f = {}) { Write(Level::kInfo, m, f); }
inline void Warn(std::string_view m, const Fields& f = {}) { Write(Level::kWarn, m, f); }
inline void Error(std::string_view m, const Fields& f = {}) { Write(Level::kError, m, f); }

}  // namespace rdmadp::log
