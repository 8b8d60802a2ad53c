#include "pkg/kube/curl_lib.h"

#include <dlfcn.h>

#include <string>

#include "pkg/dl/resolve.h"
#include "pkg/text/cat.h"

namespace rdmadp::kube {
namespace {

absl::StatusOr<const CurlLib*> Load() {
  // Never closed: the handles it creates live until the process ends.
  void* lib = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return absl::FailedPreconditionError(Cat("the DRA front end needs libcurl: ", ::dlerror(),
                                             " (install libcurl4, or use frontend: devicePlugin)"));
  }
  static CurlLib curl;
  const bool ok = dl::Resolve(lib, "curl_global_init", curl.global_init) &&
                  dl::Resolve(lib, "curl_easy_init", curl.easy_init) &&
                  dl::Resolve(lib, "curl_easy_cleanup", curl.easy_cleanup) &&
                  dl::Resolve(lib, "curl_easy_reset", curl.easy_reset) &&
                  dl::Resolve(lib, "curl_easy_setopt", curl.easy_setopt) &&
                  dl::Resolve(lib, "curl_easy_perform", curl.easy_perform) &&
                  dl::Resolve(lib, "curl_easy_getinfo", curl.easy_getinfo) &&
                  dl::Resolve(lib, "curl_easy_strerror", curl.easy_strerror) &&
                  dl::Resolve(lib, "curl_slist_append", curl.slist_append) &&
                  dl::Resolve(lib, "curl_slist_free_all", curl.slist_free_all);
  if (!ok) return absl::FailedPreconditionError(Cat("libcurl.so.4 is incomplete: ", ::dlerror()));
  // Not thread-safe in libcurl; here it runs once, under the magic static below.
  if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    return absl::FailedPreconditionError("libcurl failed to initialise (curl_global_init)");
  }
  return &curl;
}

}  // namespace

absl::StatusOr<const CurlLib*> CurlLib::Get() {
  static const absl::StatusOr<const CurlLib*> kLoaded = Load();
  return kLoaded;
}

}  // namespace rdmadp::kube
