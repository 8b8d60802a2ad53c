// A fresh directory under /tmp, removed with everything in it on destruction.
#pragma once

#include <string>

namespace rdmadp::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace rdmadp::testing
