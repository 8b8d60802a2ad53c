#include "pkg/log/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <string>

#include "pkg/text/json.h"

namespace rdmadp::log {
namespace {

std::atomic<Level> g_level{Level::kInfo};
std::atomic<Format> g_format{Format::kText};

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warning";
    case Level::kError:
      return "error";
  }
  return "info";
}

std::string Timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%03dZ", buf, static_cast<int>(millis));
  return out;
}

}  // namespace

void SetLevel(Level level) { g_level.store(level); }
void SetFormat(Format format) { g_format.store(format); }
bool Enabled(Level level) { return level >= g_level.load(std::memory_order_relaxed); }

void Write(Level level, std::string_view message, const Fields& fields) {
  if (!Enabled(level)) return;
  std::string line;
  line.reserve(message.size() + 64);
  if (g_format.load(std::memory_order_relaxed) == Format::kJson) {
    line += R"({"time":")";
    line += Timestamp();
    line += R"(","level":")";
    line += LevelName(level);
    line += R"(","msg":)";
    AppendJsonString(line, message);
    for (const auto& [key, value] :
         {std::pair{"resource", fields.resource}, std::pair{"hca", fields.hca},
          std::pair{"event", fields.event}}) {
      if (value.empty()) continue;
      line += ",\"";
      line += key;
      line += "\":";
      AppendJsonString(line, value);
    }
    line += "}\n";
  } else {
    line += Timestamp();
    line += ' ';
    line += LevelName(level);
    line += ": ";
    // Messages may quote outside text. A line break starts an indented continuation, so no
    // message can fake a log line of its own; other control characters are escaped.
    for (const char c : message) {
      if (c == '\n') {
        line += "\n  ";
      } else if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(c));
        line += buf;
      } else {
        line += c;
      }
    }
    line += '\n';
  }
  // One write per line keeps lines whole even with concurrent writers.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace rdmadp::log
