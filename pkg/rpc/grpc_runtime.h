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
//    the mutexes gRPC creates, and turns an ordering gRPC never deadlocks on into a crash.
// Both are public switches (an environment variable gRPC documents, an Abseil API); nothing
// here reaches into gRPC's internals, which keep their own event engine and timers.
//
// Contract: call once from main(), before any gRPC object exists and before other threads
// start (setenv is not thread-safe).
//
// Threads: the calling thread only, before others exist.
#pragma once

namespace grpc {
class ChannelArguments;
class ServerBuilder;
}  // namespace grpc

namespace rdmadp::rpc {

void PrepareGrpcRuntime();

// HTTP/2 bandwidth probing off, on every server and channel this process makes.
//
// Why: after receiving data, gRPC's HTTP/2 transport pings to estimate the connection's
// bandwidth-delay product and arms a timer (100 ms, growing to seconds) for the next probe.
// gRPC 1.51's timer list is split into shards (2 per core, up to 32) that its timer thread
// refills once a second each; those short timers shorten the refill window of the shards they
// land in, and once the load stops each such shard keeps its own phase: an idle process that
// once served calls then wakes at up to that many distinct times a second instead of once
// (seen: 120 wake-ups a minute after the Allocate load, 60 before). The probe sizes flow-control
// windows for bulk transfers; our messages are a few hundred bytes over a local socket.
//
// Threads: any; they only set arguments on the object given.
void DisableBandwidthProbing(grpc::ServerBuilder& builder);
void DisableBandwidthProbing(grpc::ChannelArguments& args);

}  // namespace rdmadp::rpc
