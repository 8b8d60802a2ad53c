// Waits for a condition on files in a directory, woken by inotify events on that directory
// (creates, deletes, writes), not by sleeping.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace rdmadp::testing {

// Returns true as soon as `pred` holds; re-checks after every event in `dir`.
bool WaitForFiles(const std::string& dir, const std::function<bool()>& pred,
                  std::chrono::milliseconds timeout);

}  // namespace rdmadp::testing
