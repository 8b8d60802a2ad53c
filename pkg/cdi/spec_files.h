// Writing and removing this plugin's CDI spec files. Touches only the exact file names it
// is given (SpecFileName), never a glob. Loop thread.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace rdmadp::cdi {

// Writes `content` to dir/name atomically: a new uniquely named temp file in the same
// directory (mkostemp: O_EXCL, never follows a planted link), fsync, rename.
// Readers (container runtimes) see the old spec or the new one, never half of one.
absl::Status WriteSpecAtomically(const std::string& dir, const std::string& name,
                                 const std::string& content);

// Removes dir/name; a missing file is fine.
absl::Status RemoveSpec(const std::string& dir, const std::string& name);

}  // namespace rdmadp::cdi
