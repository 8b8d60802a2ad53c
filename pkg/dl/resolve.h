// Looking up a function in a library opened with dlopen(), typed by the pointer it fills.
// Used for the libraries the plugin loads only when a node needs them (libcurl for DRA,
// libibverbs where uverbs devices exist).
#pragma once

#include <dlfcn.h>

namespace rdmadp::dl {

// Sets `out` to `name` in `lib`; false if the symbol is missing (dlerror() says why).
template <typename Fn>
bool Resolve(void* lib, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(::dlsym(lib, name));
  return out != nullptr;
}

}  // namespace rdmadp::dl
