// Installing the memlock hook (cmd/rdmadp-memlock-hook) on the host, where container
// runtimes run CDI hooks from: the plugin copies the one shipped beside its own binary to a
// host path mounted into its pod at the same path (--memlock-hook-path), so the CDI specs
// can name it. Threads: the caller's (start-up, before any spec is written).
#pragma once

#include <string>

#include "absl/status/status.h"

namespace rdmadp::cdi {

// `<directory of /proc/self/exe>/rdmadp-memlock-hook`: where the image and the build put it.
std::string BundledMemlockHook();

// Makes `dest` a copy of `source`, mode 0755, owned by root: nothing is written when it
// already is one (a restarted pod; a symlink is never taken for one), else a uniquely named
// temporary file beside it is renamed over it, so a runtime starting a container meanwhile
// runs the old hook or the new one, never half of one, and two instances of the plugin never
// share a temporary file. Errors are one line naming the path and what failed.
// `source` must be a regular file that is an ELF executable (\x7fELF): anything else (a
// FIFO, never waited on; an empty file; a script) is refused. `dest` must be absolute, and
// every component from / down to its directory a real directory (a symbolic link is
// refused), root's, and not writable by group or others: the runtime runs the hook as root,
// and any other writer could swap a directory on the path and with it the hook. A parent
// (not the hook's own directory) writable by others is accepted when it is sticky, as /tmp
// is. A missing directory of `dest` is an error (its mount is missing).
absl::Status InstallMemlockHook(const std::string& source, const std::string& dest);

// InstallMemlockHook's rule for `dest`'s directories alone (absolute, each component a real
// directory of root's that others cannot write, sticky parents aside): what `validate` checks
// without installing anything.
absl::Status HookDirectoryProblem(const std::string& dest);

// Why a container runtime could not run the hook at `hook` ("" when it could): none is
// installed (""), the file is gone, is not a root-owned regular file others cannot write,
// is not executable, or sits on a noexec mount (exec fails with EACCES). A stat and a
// statvfs: cheap enough for every scrape, so a hook deleted after start shows at once.
std::string MemlockHookProblem(const std::string& hook);

}  // namespace rdmadp::cdi
