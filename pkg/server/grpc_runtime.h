// Process-wide settings for gRPC's runtime, made once at start-up before gRPC starts.
//
// Why: what a gRPC process costs while idle, and what it keeps in memory, depends on switches
// gRPC and Abseil read once, early. PrepareGrpcRuntime() sets those this plugin wants:
//  - client-channel backup polling off (GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS=0, unless
//    the operator set the variable): a poll every 5 s, idle or not;
//  - Abseil's mutex deadlock detector off: Debian builds Abseil without NDEBUG, so every
//    absl::Mutex (gRPC's locks are Abseil's) records which locks each thread holds and keeps a
//    graph of lock orderings in memory Abseil maps itself, and aborts the process on a cycle in
//    that graph. That is a debugging aid: it costs work on every lock, memory that grows with
//    the mutexes gRPC creates, and turns an ordering gRPC never deadlocks on into a crash;
//  - QuietEventEngine instead of gRPC's default event engine (quiet_event_engine.h).
//
// Contract: call once from main(), before any gRPC object exists and before other threads
// start (setenv is not thread-safe). Returns whether the quiet event engine was installed
// (false with a gRPC other than 1.51, which keeps its default engine).
//
// Threads: the calling thread only, before others exist.
#pragma once

namespace rdmadp::server {

bool PrepareGrpcRuntime();

}  // namespace rdmadp::server
