// Compiles only against the stub header in include/ (what find_path must pick).
#include <httplib.h>

static_assert(kStubHeaderOnlyHttplib, "not the header-only stub");
int main() { return 0; }
