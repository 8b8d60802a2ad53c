// Writing and removing this plugin's CDI spec files. Touches only the exact file names it
// is given (SpecFileName), never a glob. File-system calls only: any thread (the loop's
// for the pools' specs, the DRA workers' for claims' metadata).
#pragma once

#include <string>

#include "absl/status/status.h"

namespace rdmadp::cdi {

// Writes `content` to dir/name atomically: a new uniquely named temp file in the same
// directory (mkostemp: O_EXCL, never follows a planted link), fsync, rename.
// Readers (container runtimes) see the old spec or the new one, never half of one.
absl::Status WriteSpecAtomically(const std::string& dir, const std::string& name,
                                 const std::string& content);

// The same for any file, `durable` false leaving out the fsync (for files rewritten whenever
// they are needed, as a DRA claim's metadata is at every Prepare). Errors name the path.
absl::Status WriteFileAtomically(const std::string& dir, const std::string& name,
                                 const std::string& content, bool durable);

// Removes dir/name; a missing file is fine.
absl::Status RemoveSpec(const std::string& dir, const std::string& name);

}  // namespace rdmadp::cdi
