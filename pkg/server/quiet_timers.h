// gRPC's own timers, with its timer thread asleep until the earliest one is due.
//
// Why: gRPC 1.51's I/O manager refills its timer shards in windows of at most 1 s, and its
// timer thread wakes for each refill whether or not a timer is near: 60 wake-ups a minute in
// an idle plugin, all of its idle CPU, and more once the shards' windows come apart (the
// shards get new phases from short timers; README, Performance). The timers an idle plugin
// holds are HTTP/2 keepalives, two hours away.
//
// How: gRPC 1.51 selects its timer implementation through a table of functions
// (grpc_set_timer_impl; internal to gRPC, but exported by libgrpc.so.29). UseQuietTimers()
// installs a table that forwards every call to gRPC's own implementation
// (grpc_generic_timer_vtable), which keeps arming, firing, cancelling and shutting down
// timers, and changes one thing: after a check that found nothing due, the timer thread sleeps
// until the earliest pending deadline (timer_horizon.h) instead of gRPC's next refill. Arming
// a timer earlier than that wakes the thread at once (grpc_kick_poller), as gRPC does for a
// timer earlier than its own next check. When the thread wakes, gRPC's check refills from the
// current time, so no timer is skipped.
//
// Contract: call once, before gRPC initialises (before any gRPC object exists): it fixes the
// I/O manager's platform as gRPC's own start would, then swaps the timer table. The gRPC
// functions are looked up by their names in libgrpc.so.29; with another gRPC, or if one is
// missing, nothing is changed and it returns false.
//
// Threads: the table's functions run on gRPC's threads (any of them); their bookkeeping is
// behind one mutex, held for a few set operations, never while calling into gRPC.
#pragma once

namespace rdmadp::server {

bool UseQuietTimers();

}  // namespace rdmadp::server
