// Stands in for EPEL's header-only cpp-httplib in the fallback test.
#pragma once
inline constexpr bool kStubHeaderOnlyHttplib = true;
