#include "test/support/temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <string>

namespace rdmadp::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");  // benchmarks use tmpfs, like sysfs
  std::string tmpl =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/rdmadp-test-XXXXXX";
  const char* made = ::mkdtemp(tmpl.data());
  path_ = made != nullptr ? made : "/tmp/rdmadp-test-failed";
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace rdmadp::testing
