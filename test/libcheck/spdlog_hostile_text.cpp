// What spdlog writes for a message that quotes hostile text (an Allocate id a client chose).
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

int main() {
  auto logger = spdlog::stderr_logger_mt("rdmadp");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l: %v", spdlog::pattern_time_type::utc);
  logger->warn("Allocate: unknown device id \"{}\"",
               "x\"\n2026-11-29T00:00:00.000Z error: forged line");
  logger->warn("Allocate: unknown device id \"{}\"", std::string("a\x1b[2Jb"));
}
