#include "test/support/temp_dir.h"

#include <cstdlib>
#include <filesystem>

namespace rdmadp::testing {

TempDir::TempDir() {
  char tmpl[] = "/tmp/rdmadp-test-XXXXXX";
  const char* made = ::mkdtemp(tmpl);
  path_ = made != nullptr ? made : "/tmp/rdmadp-test-failed";
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace rdmadp::testing
