// Directory listings and small whole-file reads with plain POSIX calls.
//
// std::filesystem and iostreams would serve, but each pulls its own pages of libstdc++ into
// the plugin's resident set (alloc_bench measured ~0.15 MiB for the two); these run at start,
// at rescans and at scrapes. Functions of the file system only: callable from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rdmadp::fd {

// The names in `dir` other than "." and "..", in readdir order; empty when it cannot be read.
std::vector<std::string> ListDir(const std::string& dir);

// The subdirectories of `dir` (not followed through symlinks), in readdir order; nullopt
// with errno set when it cannot be read.
std::optional<std::vector<std::string>> ListSubdirs(const std::string& dir);

// The symbolic links in `dir`, in readdir order; nullopt with errno set when it cannot be
// read.
std::optional<std::vector<std::string>> ListLinks(const std::string& dir);

// The whole file, or at most `max_bytes` of it; nullopt with errno set when it cannot be
// opened or read.
std::optional<std::string> ReadFile(const std::string& path, size_t max_bytes);

// "/a/b" -> "/a", "/a" -> "/", "/" and "a" -> "" (no parent left to try).
std::string ParentDir(const std::string& path);

// "/a/b" -> "b", "b" -> "b".
std::string BaseName(const std::string& path);

// Something (of any type, a dangling symlink too) is at `path`.
bool PathExists(const std::string& path);

}  // namespace rdmadp::fd
