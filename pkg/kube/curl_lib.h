// libcurl, loaded on first use with dlopen(): only a node with a DRA resource talks HTTPS to
// the API server, and only then does the process map libcurl and its TLS library (OpenSSL).
// The device-plugin front end never pays their memory (docs/performance.md, "What makes it
// fast").
//
// Threads: Get() is safe from any thread (loads once). A CURL handle is used by one thread
// at a time, as libcurl requires.
#pragma once

#include <curl/curl.h>

#include "absl/status/statusor.h"

namespace rdmadp::kube {

struct CurlLib {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_easy_reset) easy_reset = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;

  // The loaded library, or one line saying what is missing and what to install.
  static absl::StatusOr<const CurlLib*> Get();
};

}  // namespace rdmadp::kube
