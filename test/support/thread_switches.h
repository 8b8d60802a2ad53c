// How often a process's threads of one name have been switched out (voluntary and not, from
// /proc/<pid>/task/*/status): each wake-up of a sleeping thread ends in one.
// Threads: any; reads /proc only.
#pragma once

#include <sys/types.h>

#include <string>

namespace rdmadp::testing {

// Names are as the kernel keeps them (15 characters: gRPC's "grpc_global_timer" is
// "grpc_global_tim").
long ContextSwitchesOfThreads(pid_t pid, const std::string& name);

}  // namespace rdmadp::testing
