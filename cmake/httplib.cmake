# cpp-httplib as the target rdmadp::httplib. Debian ships it as a compiled library with a
# pkg-config file; EPEL 9 (the UBI image) ships the header-only library without one. With
# no pkg-config file, or with -DRDMADP_HTTPLIB_HEADER_ONLY=ON, the header is used alone:
# no TLS, no OpenSSL in the process. test/cmake/httplib_fallback exercises this branch.
option(RDMADP_HTTPLIB_HEADER_ONLY "Use cpp-httplib's header only, ignoring pkg-config" OFF)
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
if(NOT RDMADP_HTTPLIB_HEADER_ONLY)
  pkg_check_modules(HTTPLIB IMPORTED_TARGET GLOBAL cpp-httplib)
endif()
if(HTTPLIB_FOUND AND NOT RDMADP_HTTPLIB_HEADER_ONLY)
  add_library(rdmadp::httplib ALIAS PkgConfig::HTTPLIB)
  message(STATUS "cpp-httplib ${HTTPLIB_VERSION}: library from pkg-config")
else()
  find_path(RDMADP_HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
  add_library(rdmadp_httplib_headers INTERFACE)
  target_include_directories(rdmadp_httplib_headers INTERFACE ${RDMADP_HTTPLIB_INCLUDE_DIR})
  target_link_libraries(rdmadp_httplib_headers INTERFACE Threads::Threads)
  add_library(rdmadp::httplib ALIAS rdmadp_httplib_headers)
  message(STATUS "cpp-httplib: header-only from ${RDMADP_HTTPLIB_INCLUDE_DIR}")
endif()
