// The registration state machine, driven with a fake clock: one case per way the plugin
// used to fight the kubelet (docs/kubelet-versions.md), each asserting exact counts.
#include <gtest/gtest.h>

#include "test/unit/fsm_driver.h"

namespace rdmadp::lifecycle {
namespace {

using test_support::Driver;

using std::chrono::milliseconds;

const SocketId kNewKubelet{.inode = 11, .ctime_ns = 2};

// A CLOCK_REALTIME stamp or a ctime, in ns, `ms` after the test's epoch.
constexpr int64_t AtMs(int64_t ms) { return ms * 1'000'000; }

TEST(RetryPolicy, FirstAtOnceThenDoublingToTheCap) {
  RetryPolicy p;
  std::vector<long> got;
  for (int i = 0; i < 9; ++i) got.push_back(static_cast<long>(p.Next().count()));
  EXPECT_EQ(got, (std::vector<long>{0, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000}));
  p.Reset();
  EXPECT_EQ(p.Next().count(), 0);
}

TEST(RegistrationFsm, KubeletModeServesThenRegistersOnce) {
  Driver d;
  EXPECT_EQ(d.serves, 1);
  EXPECT_EQ(d.registers, 1);
  EXPECT_EQ(d.fsm.phase(), Phase::kRegistering);
  d.Do(Event::StreamOpened(d.server, 1));  // v1.25+: the stream starts before the answer
  d.RegisterAnswers(RegisterOutcome::kOk);
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_EQ(d.fsm.registrations(), 1u);
  EXPECT_EQ(d.timer, 0u);
}

TEST(RegistrationFsm, ARegistrationWithoutAStreamIsWatchedAndRetried) {
  Driver d;
  d.RegisterAnswers(RegisterOutcome::kOk);  // v1.24: answered first, the stream follows
  EXPECT_EQ(d.timer_delay, kStreamWait);
  d.Do(Event::StreamOpened(d.server, 1));
  EXPECT_EQ(d.timer, 0u) << "the stream arrived: watchdog disarmed";
  // v1.25-1.36: disconnected between Connect and the first stream; we never see a stream.
  d.KubeletRestarts(kNewKubelet);
  d.RegisterAnswers(RegisterOutcome::kOk);
  ASSERT_TRUE(d.FireTimer());
  EXPECT_EQ(d.fsm.phase(), Phase::kRetryWait);
  ASSERT_TRUE(d.FireTimer());
  EXPECT_EQ(d.registers, 3);
  EXPECT_NE(d.log.find("did not arrive within"), std::string::npos);
}

TEST(RegistrationFsm, WatcherRegistrationWithoutAStreamRecreatesOnce) {
  Driver d(Mode::kWatcher);
  d.Do(Event::GetInfo(d.server));
  d.Do(Event::Notify(d.server, true));
  ASSERT_TRUE(d.FireTimer());
  EXPECT_EQ(d.serves, 2);
  EXPECT_FALSE(d.FireTimer());
}

// A DRA driver: no stream follows its registration, and none is waited for. A rejection
// still re-creates the socket, damped.
TEST(RegistrationFsm, WatcherWithoutStreamsStaysRegistered) {
  Driver d(Mode::kWatcher, /*expect_stream=*/false);
  d.Do(Event::GetInfo(d.server));
  d.Do(Event::Notify(d.server, true));
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_FALSE(d.FireTimer()) << "no stream watchdog";
  EXPECT_EQ(d.serves, 1);
  d.Do(Event::GetInfo(d.server));  // a restarted kubelet's watcher walks the registry again
  d.Do(Event::Notify(d.server, true));
  EXPECT_EQ(d.fsm.registrations(), 2u);
  EXPECT_EQ(d.serves, 1);
  d.Do(Event::Notify(d.server, false, "driver name taken"));
  EXPECT_EQ(d.drops, 1);
  ASSERT_TRUE(d.FireTimer());
  EXPECT_EQ(d.serves, 2);
}

// An attempt whose answer never comes (an RPC that ended without a report, seen as a
// resource stuck in Registering after a kubelet restart) is cancelled and retried once,
// including one kept across a re-serve; the lost attempt's late answer changes nothing.
TEST(RegistrationFsm, AnUnansweredRegisterIsCancelledAndRetriedOnce) {
  Driver d;
  const uint64_t silent = d.attempt;
  EXPECT_EQ(d.timer_delay, kRegisterAnswerDeadline);
  d.Do(Event::OwnSocketDeleted());  // the kubelet's cleanup: re-served, the attempt kept
  EXPECT_EQ(d.serves, 2);
  EXPECT_EQ(d.cancels, 0);
  EXPECT_EQ(d.fsm.phase(), Phase::kRegistering);
  ASSERT_TRUE(d.FireTimer());  // the watchdog, re-armed by the re-serve
  EXPECT_EQ(d.cancels, 1);
  EXPECT_EQ(d.fsm.registration_failures(), 1u);
  EXPECT_NE(d.log.find("no answer to the registration within 15000 ms"), std::string::npos);
  EXPECT_EQ(d.fsm.phase(), Phase::kRetryWait);
  EXPECT_EQ(d.timer_delay, milliseconds(0));                // the first retry at once
  d.Do(Event::RegisterDone(silent, RegisterOutcome::kOk));  // too late: dropped
  EXPECT_FALSE(d.fsm.registered());
  ASSERT_TRUE(d.FireTimer());
  EXPECT_EQ(d.registers, 2);
  d.Do(Event::StreamOpened(d.server, 1));
  d.RegisterAnswers(RegisterOutcome::kOk);
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_EQ(d.fsm.registrations(), 1u);
  EXPECT_FALSE(d.FireTimer());
}

// Loop finding (watcher mode, SIGSTOP across a kubelet restart): Notify(true) came before
// the stream's open event; the process stopped; on resume the 2 s stream timer and the
// queued open were ready at once and the timer ran first: "no stream", socket re-created.
// The server's latest stream id tells the machine an open event is on its way.
TEST(RegistrationFsm, AStreamOpenQueuedBehindTheTimerIsWaitedFor) {
  Driver d(Mode::kWatcher);
  d.Do(Event::GetInfo(d.server));
  d.Do(Event::Notify(d.server, true));  // before the stream's open event
  ASSERT_NE(d.timer, 0u);
  d.facts.streams_opened = 1;  // the server opened it; the event is still queued
  ASSERT_TRUE(d.FireTimer());
  EXPECT_EQ(d.serves, 1) << "not re-created";
  d.Do(Event::StreamOpened(d.server, 1));
  EXPECT_EQ(d.timer, 0u) << "the stream arrived: watchdog disarmed";
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_EQ(d.fsm.socket_recreations(), 0u);
}

// Loop finding (watcher mode, SIGSTOP across a kubelet restart, v1.25-1.36): on resume the
// old kubelet's Notify(true) was handled with the new kubelet.sock in view, so the old
// stream's end looked like "the running kubelet dropped us": an immediate re-creation. A
// stream accepted before the current kubelet.sock existed belongs to the old kubelet.
TEST(RegistrationFsm, TheOldKubeletsLateEventsDoNotLookLikeTheNewOnesDrop) {
  Driver d(Mode::kWatcher);
  d.Do(Event::GetInfo(d.server));
  d.Do(Event::StreamOpened(d.server, 1, /*wall_ns=*/AtMs(50)));
  d.facts.kubelet_socket = SocketId{.inode = 11, .ctime_ns = AtMs(200)};  // the new kubelet
  d.facts.kubelet_listening = true;
  d.Do(Event::Notify(d.server, true));  // sent by the old one, handled only now
  d.Do(Event::StreamEnded(d.server, 1, true));
  EXPECT_EQ(d.fsm.phase(), Phase::kStreamGrace) << "wait for the new kubelet's watcher";
  EXPECT_EQ(d.serves, 1);
  d.Do(Event::GetInfo(d.server));  // the new kubelet's watcher walks the registry
  d.Do(Event::StreamOpened(d.server, 2, /*wall_ns=*/AtMs(300)));
  d.Do(Event::Notify(d.server, true));
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_EQ(d.fsm.socket_recreations(), 0u);
}

// The same, seen in CI (lifecycle_e2e SlowPluginInWatcherMode…, v1.25-1.36): the old
// kubelet's stream was accepted only on resume, so its stamp is newer than the new
// kubelet.sock. The Notify was answered before the stop (the old kubelet got its answer):
// its stamp says which kubelet registered us, and that one is gone.
TEST(RegistrationFsm, AStreamStampedOnResumeIsNotTheNewKubeletsWhenItsNotifyIsOlder) {
  Driver d(Mode::kWatcher);
  d.Do(Event::GetInfo(d.server));
  d.facts.kubelet_socket = SocketId{.inode = 11, .ctime_ns = AtMs(200)};  // the new kubelet
  d.facts.kubelet_listening = true;
  d.Do(Event::Notify(d.server, true, "", /*wall_ns=*/AtMs(50)));  // answered before the stop
  d.Do(Event::StreamOpened(d.server, 1, /*wall_ns=*/AtMs(250)));  // accepted on resume
  d.Do(Event::StreamEnded(d.server, 1, true));
  EXPECT_EQ(d.fsm.phase(), Phase::kStreamGrace) << "wait for the new kubelet's watcher";
  EXPECT_EQ(d.drops, 0);
  d.Do(Event::GetInfo(d.server));
  d.Do(Event::StreamOpened(d.server, 2, /*wall_ns=*/AtMs(300)));
  d.Do(Event::Notify(d.server, true, "", /*wall_ns=*/AtMs(310)));
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_EQ(d.fsm.socket_recreations(), 0u);
  // Now the running kubelet's own drop (#121994) is recognised as such: re-created at once.
  d.Do(Event::StreamEnded(d.server, 2, true));
  EXPECT_EQ(d.drops, 1);
  EXPECT_EQ(d.fsm.phase(), Phase::kServeBackoff);
}

// Seen in a ctest -j2 run (lifecycle_e2e SlowPluginInWatcherMode…/v137): the old kubelet's
// Notify and stream were stamped just before the plugin was stopped and the new kubelet.sock
// was created within the same clock tick. The kernel stamps ctime from its coarse clock (a
// tick behind CLOCK_REALTIME), so the stamps read 3 ms *after* the ctime: both looked like
// the new kubelet's, and the old stream's end re-created the socket.
TEST(RegistrationFsm, StampsWithinAClockTickOfTheNewSocketAreTheOldKubelets) {
  Driver d(Mode::kWatcher);
  d.Do(Event::GetInfo(d.server));
  d.Do(Event::StreamOpened(d.server, 1, /*wall_ns=*/AtMs(203)));
  // Stopped here; on resume the loop handles the Notify with the new kubelet.sock in view.
  d.facts.kubelet_socket = SocketId{.inode = 11, .ctime_ns = AtMs(200)};  // the new kubelet
  d.facts.kubelet_listening = true;
  d.Do(Event::Notify(d.server, true, "", /*wall_ns=*/AtMs(203)));
  EXPECT_TRUE(d.fsm.registered());
  d.Do(Event::KubeletSocketCreated());
  d.Do(Event::StreamEnded(d.server, 1, true));
  EXPECT_EQ(d.fsm.phase(), Phase::kStreamGrace) << "wait for the new kubelet's watcher";
  EXPECT_EQ(d.drops, 0);
  d.Do(Event::GetInfo(d.server));
  d.Do(Event::StreamOpened(d.server, 2, /*wall_ns=*/AtMs(1200)));
  d.Do(Event::Notify(d.server, true, "", /*wall_ns=*/AtMs(1210)));
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_EQ(d.fsm.socket_recreations(), 0u);
}

// A retry timer armed during the outage fired after the new kubelet had registered us,
// giving a second Register.
TEST(RegistrationFsm, RestartWithADeadKubeletSockRegistersExactlyOnce) {
  Driver d;
  d.RegisterAnswers(RegisterOutcome::kOk);
  d.Do(Event::StreamOpened(d.server, 1));
  d.Advance(milliseconds(60000));
  d.Do(Event::StreamEnded(d.server, 1, true));  // the kubelet died; its file stays
  ASSERT_TRUE(d.FireTimer());                   // at once: one probe
  EXPECT_EQ(d.registers, 2);
  d.RegisterAnswers(RegisterOutcome::kKubeletDown, "kubelet.sock has no listener");
  EXPECT_EQ(d.fsm.phase(), Phase::kNoKubelet);
  // The safety-net probes find the dead file again and again: no Register reaches anyone.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(d.FireTimer());
    d.RegisterAnswers(RegisterOutcome::kKubeletDown, "kubelet.sock has no listener");
  }
  EXPECT_EQ(d.timer_delay, milliseconds(8000));  // damped
  const int before = d.registers;
  d.KubeletRestarts(kNewKubelet);
  EXPECT_EQ(d.registers, before + 1);
  EXPECT_EQ(d.timer_delay, kRegisterAnswerDeadline) << "only the answer watchdog is armed";
  d.Do(Event::StreamOpened(d.server, 2));
  d.RegisterAnswers(RegisterOutcome::kOk);
  EXPECT_TRUE(d.fsm.registered());
  // The same kubelet.sock reported again (a second inotify batch): nothing.
  d.Do(Event::KubeletSocketCreated());
  EXPECT_EQ(d.registers, before + 1);
  EXPECT_FALSE(d.FireTimer());
}

// Found by the lifecycle loop: an attempt aimed at the old kubelet.sock dials by path, so it
// may already have reached the new kubelet when the new file is reported; cancelling it
// and registering again sent two Registers. The attempt's answer decides instead.
TEST(RegistrationFsm, NewKubeletSockDuringAnAttemptWaitsForItsAnswer) {
  Driver d;
  d.KubeletRestarts(kNewKubelet);
  EXPECT_EQ(d.registers, 1) << "no second Register while one is in flight";
  EXPECT_EQ(d.cancels, 0);
  d.Do(Event::StreamOpened(d.server, 1));
  d.RegisterAnswers(RegisterOutcome::kOk);  // it reached the new kubelet
  EXPECT_TRUE(d.fsm.registered());
  d.Do(Event::KubeletSocketCreated());  // the same new file reported again: nothing
  EXPECT_EQ(d.registers, 1);
}

// Found by the soak under TSan (every step ~10x slower): the old kubelet answered our
// Register and died; its stream ended, our socket was re-created for the new kubelet and the
// new kubelet.sock was noted, all before the late answer was handled. The answer was taken
// for the new kubelet's and its lost stream for a loss: a retry damped to 30 s, and the new
// kubelet never heard of us in that time.
TEST(RegistrationFsm, TheOldKubeletsLateAnswerDoesNotStandForTheNewOne) {
  Driver d;
  d.Do(Event::StreamOpened(d.server, 1, /*wall_ns=*/AtMs(50)));  // the old kubelet, for our attempt
  d.Do(Event::StreamEnded(d.server, 1, true));                   // ... which died
  d.Do(Event::OwnSocketDeleted());                               // the new kubelet's cleanup
  d.KubeletRestarts(SocketId{.inode = 11, .ctime_ns = AtMs(200)});
  EXPECT_EQ(d.registers, 1);
  d.RegisterAnswers(RegisterOutcome::kOk);  // the old kubelet's answer, handled late
  EXPECT_EQ(d.registers, 2) << d.log;
  EXPECT_EQ(d.fsm.phase(), Phase::kRegistering);
  EXPECT_EQ(d.timer_delay, kRegisterAnswerDeadline) << "at once, not a damped retry";
  d.Do(Event::StreamOpened(d.server, 1, /*wall_ns=*/AtMs(300)));  // the new kubelet's
  d.RegisterAnswers(RegisterOutcome::kOk);
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_EQ(d.fsm.registrations(), 2u);
  EXPECT_EQ(d.registers, 2);
}

// The same race one step later: the old kubelet's answer is handled while its stream is
// still open, and the stream ends only after. Its end is the new kubelet's registration.
TEST(RegistrationFsm, AnOlderKubeletsStreamEndingRegistersWithTheNewOneOnce) {
  Driver d;
  d.Do(Event::StreamOpened(d.server, 1, /*wall_ns=*/AtMs(50)));
  d.KubeletRestarts(
      SocketId{.inode = 11, .ctime_ns = AtMs(200)});  // noted: an attempt is in flight
  d.RegisterAnswers(RegisterOutcome::kOk);
  ASSERT_TRUE(d.fsm.registered());
  d.Do(Event::StreamEnded(d.server, 1, true));
  EXPECT_EQ(d.registers, 2) << d.log;
  EXPECT_EQ(d.fsm.phase(), Phase::kRegistering);
  d.Do(Event::StreamOpened(d.server, 2, /*wall_ns=*/AtMs(300)));
  d.RegisterAnswers(RegisterOutcome::kOk);
  EXPECT_TRUE(d.fsm.registered());
  // The current kubelet's own stream ending is a loss as before: damped retry.
  d.Do(Event::StreamEnded(d.server, 2, true));
  EXPECT_EQ(d.fsm.phase(), Phase::kRetryWait);
  EXPECT_EQ(d.registers, 2);
}

TEST(RegistrationFsm, NewKubeletSockDuringAFailedAttemptRegistersOnceMore) {
  Driver d;
  d.KubeletRestarts(kNewKubelet);
  d.RegisterAnswers(RegisterOutcome::kKubeletDown, "no listener");  // it hit the dead file
  EXPECT_EQ(d.registers, 2);
  EXPECT_EQ(d.fsm.phase(), Phase::kRegistering);
}

// Found by the lifecycle loop: the kubelet's cleanup deleted our socket while a Register was
// in flight; re-serving cancelled it after it had reached the new kubelet, and registered
// again. The kubelet dials the path, which the new server takes over: keep the attempt.
TEST(RegistrationFsm, OwnSocketDeletedDuringAnAttemptKeepsIt) {
  Driver d;
  const uint64_t first = d.attempt;
  d.Do(Event::OwnSocketDeleted());
  EXPECT_EQ(d.serves, 2);
  EXPECT_EQ(d.cancels, 0);
  EXPECT_EQ(d.registers, 1);
  EXPECT_EQ(d.fsm.phase(), Phase::kRegistering);
  d.Do(Event::StreamOpened(d.server, 1));
  d.Do(Event::RegisterDone(first, RegisterOutcome::kOk));
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_EQ(d.registers, 1);
}

TEST(RegistrationFsm, StaleResultOfACancelledAttemptIsDropped) {
  Driver d;
  const uint64_t first = d.attempt;
  d.facts.kubelet_socket = {};
  d.Do(Event::Stop());  // cancels the attempt
  d.facts.kubelet_socket = kNewKubelet;
  d.Do(Event::Start(Mode::kKubelet));
  EXPECT_EQ(d.cancels, 1);
  d.Do(Event::RegisterDone(first, RegisterOutcome::kOk));
  EXPECT_FALSE(d.fsm.registered());
  d.RegisterAnswers(RegisterOutcome::kOk);
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_EQ(d.fsm.registrations(), 1u);
}

// On v1.37+ a second Register at our path (a late retry, as in
// RestartWithADeadKubeletSockRegistersExactlyOnce) is rejected while our stream lives.
TEST(RegistrationFsm, AlreadyConnectedWithAnOpenStreamCountsAsRegistered) {
  Driver d;
  d.Do(Event::StreamOpened(d.server, 1));  // the kubelet got through before our deadline
  d.RegisterAnswers(RegisterOutcome::kAlreadyConnected, "device plugin already connected: x");
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_EQ(d.timer, 0u);
}

TEST(RegistrationFsm, AlreadyConnectedWithoutAStreamIsRetriedDamped) {
  Driver d;
  d.RegisterAnswers(RegisterOutcome::kAlreadyConnected, "device plugin already connected: x");
  EXPECT_EQ(d.fsm.phase(), Phase::kRetryWait);
  ASSERT_TRUE(d.FireTimer());
  d.RegisterAnswers(RegisterOutcome::kFailed, "deadline exceeded");
  EXPECT_EQ(d.timer_delay, milliseconds(500));
}

// When the kubelet (or another instance) ends a stream older than our newest registration,
// re-registering starts a ping-pong.
TEST(RegistrationFsm, StreamsOlderThanTheLatestRegistrationDoNotReRegister) {
  Driver d;
  d.RegisterAnswers(RegisterOutcome::kOk);
  d.Do(Event::StreamOpened(d.server, 1));
  d.KubeletRestarts(kNewKubelet);               // registers again
  d.Do(Event::StreamEnded(d.server, 1, true));  // the old kubelet's stream, late
  EXPECT_EQ(d.registers, 2);
  d.RegisterAnswers(RegisterOutcome::kOk);
  d.Do(Event::StreamOpened(d.server, 2));
  EXPECT_EQ(d.registers, 2);
  EXPECT_EQ(d.timer, 0u);
}

// Any process can call ListAndWatch on our socket. The plugin used to take the newest stream
// for the kubelet's, so while another client held one, the kubelet's stream ending was
// ignored (capacity 5, allocatable 0 for as long as it stayed). Only the kubelet's stream
// counts now (docs/architecture.md, "Lifecycle: what happens on each event").
TEST(RegistrationFsm, AnotherClientsStreamNeitherHidesNorFakesTheKubelets) {
  Driver d;
  d.RegisterAnswers(RegisterOutcome::kOk);
  d.Do(Event::StreamOpened(d.server, 1));  // the kubelet's
  d.Do(Event::StreamOpened(d.server, 2));  // a monitoring tool's
  d.Do(Event::StreamEnded(d.server, 2, true));
  EXPECT_EQ(d.registers, 1) << "another client's stream ending changes nothing";
  d.Do(Event::StreamOpened(d.server, 3));        // the tool again, and it stays
  d.Do(Event::StreamEnded(d.server, 1, false));  // the kubelet went away
  EXPECT_EQ(d.fsm.phase(), Phase::kRetryWait);
  ASSERT_TRUE(d.FireTimer());
  EXPECT_EQ(d.registers, 2);
  d.RegisterAnswers(RegisterOutcome::kOk);
  d.Do(Event::StreamOpened(d.server, 4));  // the new kubelet's
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_FALSE(d.FireTimer()) << "its stream arrived: no watchdog";
}

// v1.37+: a Register for our own path while the kubelet holds our stream is "already
// connected". That stream is the kubelet's and stays: registered, with no wait for another.
TEST(RegistrationFsm, AlreadyConnectedKeepsTheStreamItHas) {
  Driver d;
  d.RegisterAnswers(RegisterOutcome::kOk);
  d.Do(Event::StreamOpened(d.server, 1));
  d.KubeletRestarts(kNewKubelet);  // a new kubelet.sock, but this kubelet kept us
  d.RegisterAnswers(RegisterOutcome::kAlreadyConnected, "device plugin already connected: x");
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_FALSE(d.FireTimer()) << "no stream watchdog: the kept stream is the kubelet's";
  EXPECT_EQ(d.registers, 2);
}

// The kubelet (v1.25+) opens our stream before it answers Register; another instance's exit
// can end that stream (#121994) before the answer reaches us.
TEST(RegistrationFsm, StreamLostBeforeTheRegisterAnswerRegistersAgain) {
  Driver d;
  d.Do(Event::StreamOpened(d.server, 1));
  d.Do(Event::StreamEnded(d.server, 1, true));
  EXPECT_EQ(d.registers, 1);
  d.RegisterAnswers(RegisterOutcome::kOk);
  EXPECT_EQ(d.fsm.registrations(), 1u);
  EXPECT_EQ(d.fsm.phase(), Phase::kRetryWait);
  ASSERT_TRUE(d.FireTimer());
  EXPECT_EQ(d.registers, 2);
}

TEST(RegistrationFsm, WatcherStreamLostBeforeNotifyKeepsTheGrace) {
  Driver d(Mode::kWatcher);
  d.Do(Event::GetInfo(d.server));
  d.Do(Event::StreamOpened(d.server, 1));
  d.Do(Event::StreamEnded(d.server, 1, true));
  d.Do(Event::Notify(d.server, true));
  EXPECT_EQ(d.fsm.phase(), Phase::kStreamGrace);
  EXPECT_NE(d.timer, 0u);
}

TEST(LossLimiter, ThreeAtOnceThenOneASecond) {
  LossLimiter l;
  Clock::time_point now{};
  std::vector<long> got;
  for (int i = 0; i < 6; ++i) {
    const milliseconds wait = l.Take(now);
    got.push_back(static_cast<long>(wait.count()));
    now += wait;  // the caller waits it out, then the next loss comes at once
  }
  EXPECT_EQ(got, (std::vector<long>{0, 0, 0, 1000, 1000, 1000}));
  now += milliseconds(3000);  // three quiet seconds earn the burst back
  EXPECT_EQ(l.Take(now).count(), 0);
  EXPECT_EQ(l.Take(now).count(), 0);
  EXPECT_EQ(l.Take(now).count(), 0);
  EXPECT_EQ(l.Take(now).count(), 1000);
}

// Drives `n` losses of the kubelet's stream, each `lived` after its registration, and
// returns the delay the machine chose before each re-registration.
std::vector<long> LossDelays(Driver& d, int n, milliseconds lived) {
  std::vector<long> delays;
  uint64_t stream = 0;
  d.RegisterAnswers(RegisterOutcome::kOk);
  for (int i = 0; i < n; ++i) {
    d.Do(Event::StreamOpened(d.server, ++stream));
    d.Advance(lived);
    d.Do(Event::StreamEnded(d.server, stream, true));
    EXPECT_EQ(d.fsm.phase(), Phase::kRetryWait);
    delays.push_back(static_cast<long>(d.timer_delay.count()));
    if (!d.FireTimer()) break;
    d.RegisterAnswers(RegisterOutcome::kOk);
  }
  return delays;
}

// The one retry policy, reset only by a 10 s stream, made a kubelet that ended our stream a
// few times in a row (streams of 2-5 s) wait 8, 16, then 30 s for the resource. Losses of a
// live kubelet are rate-limited, never backed off (docs/reliability.md, "Capacity and data").
TEST(RegistrationFsm, ALiveKubeletEndingStreamsNowAndThenNeverWaits) {
  Driver d;
  EXPECT_EQ(LossDelays(d, 12, milliseconds(2000)), (std::vector<long>(12, 0))) << d.log;
  EXPECT_EQ(d.registers, 13);
}

TEST(RegistrationFsm, ALossStormRunsAtOneRegisterASecondAndNoSlower) {
  Driver d;
  const auto delays = LossDelays(d, 8, milliseconds(100));
  EXPECT_EQ(delays, (std::vector<long>{0, 0, 0, 700, 900, 900, 900, 900})) << d.log;
  EXPECT_EQ(d.registers, 9);
}

// A failing Register still backs off exponentially; a registration proven by its stream
// starts that policy over, and the next loss is not a failure.
TEST(RegistrationFsm, FailuresBackOffAndAProvenRegistrationResetsThem) {
  Driver d;
  std::vector<long> delays;
  for (int i = 0; i < 5; ++i) {
    d.RegisterAnswers(RegisterOutcome::kFailed, "rejected");
    delays.push_back(static_cast<long>(d.timer_delay.count()));
    ASSERT_TRUE(d.FireTimer());
  }
  EXPECT_EQ(delays, (std::vector<long>{0, 500, 1000, 2000, 4000}));
  d.Do(Event::StreamOpened(d.server, 1));
  d.RegisterAnswers(RegisterOutcome::kOk);
  ASSERT_TRUE(d.fsm.registered());
  d.Do(Event::StreamEnded(d.server, 1, true));
  EXPECT_EQ(d.timer_delay.count(), 0);
  ASSERT_TRUE(d.FireTimer());
  d.RegisterAnswers(RegisterOutcome::kFailed, "rejected");
  EXPECT_EQ(d.timer_delay.count(), 0) << "the failure policy started over";
}

// Watcher mode: the grace for the kubelet's plugin watcher is not stretched by past losses.
TEST(RegistrationFsm, WatcherGraceStaysShortAfterRepeatedLosses) {
  Driver d(Mode::kWatcher);
  std::vector<long> graces;
  uint64_t stream = 0;
  for (int i = 0; i < 6; ++i) {
    d.Do(Event::GetInfo(d.server));
    d.Do(Event::StreamOpened(d.server, ++stream));
    d.Do(Event::Notify(d.server, true));
    ASSERT_TRUE(d.fsm.registered());
    d.Advance(milliseconds(3000));
    d.facts.kubelet_listening = false;  // a kubelet restart: not the live kubelet dropping us
    d.Do(Event::StreamEnded(d.server, stream, true));
    ASSERT_EQ(d.fsm.phase(), Phase::kStreamGrace);
    graces.push_back(static_cast<long>(d.timer_delay.count()));
  }
  EXPECT_EQ(graces, (std::vector<long>(6, kWatcherGrace.count())));
}

// Tokens restarted per resource incarnation, so an old incarnation's result matched.
TEST(RegistrationFsm, TokensNeverRepeatAcrossIncarnations) {
  TokenSource tokens;
  Facts facts{Clock::time_point{}, SocketId{.inode = 10, .ctime_ns = 1}};
  RegistrationFsm old_fsm("rdma/a", &tokens);
  uint64_t old_attempt = 0;
  for (const auto& a : old_fsm.Handle(Event::Start(Mode::kKubelet), facts)) {
    if (a.kind == Action::Kind::kServe) {
      for (const auto& b : old_fsm.Handle(Event::ServeOk(a.token), facts)) {
        if (b.kind == Action::Kind::kRegister) old_attempt = b.token;
      }
    }
  }
  ASSERT_NE(old_attempt, 0u);
  old_fsm.Handle(Event::Stop(), facts);
  RegistrationFsm reborn("rdma/a", &tokens);
  uint64_t new_attempt = 0;
  for (const auto& a : reborn.Handle(Event::Start(Mode::kKubelet), facts)) {
    if (a.kind == Action::Kind::kServe) {
      for (const auto& b : reborn.Handle(Event::ServeOk(a.token), facts)) {
        if (b.kind == Action::Kind::kRegister) new_attempt = b.token;
      }
    }
  }
  EXPECT_NE(old_attempt, new_attempt);
  reborn.Handle(Event::RegisterDone(old_attempt, RegisterOutcome::kOk), facts);
  EXPECT_FALSE(reborn.registered());
}

// The directory watch reports kubelet.sock's creation; a damped look (capped at 30 s) is
// the safety net for a creation no watch reported. It sends nothing while the file is missing.
TEST(RegistrationFsm, NoKubeletSockWaitsForItWithADampedLookAsTheSafetyNet) {
  Driver d;
  const int base = d.RestartWithoutKubeletSock();
  EXPECT_EQ(d.fsm.phase(), Phase::kNoKubelet);
  std::vector<long> delays{static_cast<long>(d.timer_delay.count())};
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(d.FireTimer());
    delays.push_back(static_cast<long>(d.timer_delay.count()));
  }
  EXPECT_EQ(delays, (std::vector<long>{0, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000}));
  EXPECT_EQ(d.registers, base);
  const std::string waiting = "does not exist yet; will register when the kubelet creates it";
  ASSERT_NE(d.log.find(waiting), std::string::npos);
  EXPECT_EQ(d.log.find(waiting), d.log.rfind(waiting)) << "said once";
  d.KubeletRestarts(kNewKubelet);
  EXPECT_EQ(d.registers, base + 1);
  EXPECT_EQ(d.timer_delay, kRegisterAnswerDeadline) << "only the answer watchdog is armed";
}

TEST(RegistrationFsm, AKubeletSockNoWatchReportedIsFoundByTheSafetyNet) {
  Driver d;
  const int base = d.RestartWithoutKubeletSock();
  ASSERT_TRUE(d.FireTimer());
  ASSERT_TRUE(d.FireTimer());
  d.facts.kubelet_socket = kNewKubelet;  // created; no event (inotify queue overflowed)
  ASSERT_TRUE(d.FireTimer());
  EXPECT_EQ(d.registers, base + 1);
  EXPECT_EQ(d.fsm.phase(), Phase::kRegistering);
}

// CI, metrics_e2e under ASan: the plugin watched the kubelet root before device-plugins
// existed; the kubelet made the directory, the plugin served in it (kubelet.sock not there
// yet), then the kubelet bound kubelet.sock before the plugin added the directory's watch.
// That creation was never reported, and the resource waited for a kubelet already running.
TEST(RegistrationFsm, AKubeletSockCreatedBeforeItsDirectoryWasWatchedIsRegisteredWith) {
  Driver d;
  const int base = d.RestartWithoutKubeletSock();
  ASSERT_EQ(d.fsm.phase(), Phase::kNoKubelet);
  d.facts.kubelet_socket = kNewKubelet;
  d.Do(Event::SocketDirAppeared());  // the directory's watch is added now; we look
  EXPECT_EQ(d.registers, base + 1);
  EXPECT_EQ(d.fsm.phase(), Phase::kRegistering);
  d.Do(Event::StreamOpened(d.server, 1));
  d.RegisterAnswers(RegisterOutcome::kOk);
  d.Do(Event::SocketDirAppeared());     // another directory (plugins_registry): same kubelet
  d.Do(Event::KubeletSocketCreated());  // the same file reported late: no second Register
  EXPECT_EQ(d.registers, base + 1) << "one kubelet.sock, one registration";
  d.facts.kubelet_socket = SocketId{.inode = 12, .ctime_ns = 3};
  d.Do(Event::SocketDirAppeared());  // device-plugins re-created with a new kubelet's socket
  EXPECT_EQ(d.registers, base + 2);
}

TEST(RegistrationFsm, OwnSocketRemovedByTheKubeletIsServedAndRegisteredOnce) {
  Driver d;
  d.RegisterAnswers(RegisterOutcome::kOk);
  d.facts.kubelet_socket = kNewKubelet;  // cleanup then kubelet.sock, in one batch
  d.Do(Event::OwnSocketDeleted());
  d.Do(Event::KubeletSocketCreated());
  EXPECT_EQ(d.serves, 2);
  EXPECT_EQ(d.registers, 2);
}

TEST(RegistrationFsm, ServeWithoutItsDirectoryWaitsForTheDirectory) {
  Driver d;
  d.serve_fails = true;
  d.dir_missing = true;
  d.Do(Event::Stop());
  d.Do(Event::Start(Mode::kKubelet));
  EXPECT_EQ(d.fsm.phase(), Phase::kNoSocketDir);
  EXPECT_EQ(d.timer, 0u);
  d.serve_fails = false;
  d.Do(Event::SocketDirAppeared());
  EXPECT_EQ(d.fsm.phase(), Phase::kRegistering);
}

TEST(RegistrationFsm, ServeFailuresRetryDamped) {
  Driver d;
  d.serve_fails = true;
  d.Do(Event::Stop());
  d.Do(Event::Start(Mode::kKubelet));
  std::vector<long> delays{static_cast<long>(d.timer_delay.count())};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(d.FireTimer());
    delays.push_back(static_cast<long>(d.timer_delay.count()));
  }
  EXPECT_EQ(delays, (std::vector<long>{0, 500, 1000, 2000}));
}

// Every end of the newest stream re-created the watcher socket.
TEST(RegistrationFsm, WatcherStreamEndWaitsForTheWatcherInsteadOfRecreating) {
  Driver d(Mode::kWatcher);
  EXPECT_EQ(d.fsm.phase(), Phase::kPublished);
  d.Do(Event::GetInfo(d.server));
  d.Do(Event::StreamOpened(d.server, 1));
  d.Do(Event::Notify(d.server, true));
  EXPECT_TRUE(d.fsm.registered());
  d.Do(Event::StreamEnded(d.server, 1, true));  // kubelet restart
  EXPECT_EQ(d.fsm.phase(), Phase::kStreamGrace);
  EXPECT_EQ(d.timer_delay, kWatcherGrace);
  d.Do(Event::GetInfo(d.server));  // the new kubelet walked plugins_registry
  d.Do(Event::StreamOpened(d.server, 2));
  d.Do(Event::Notify(d.server, true));
  EXPECT_EQ(d.serves, 1) << "the socket was never re-created";
  EXPECT_EQ(d.fsm.registrations(), 2u);
  EXPECT_EQ(d.timer, 0u);
}

// Rolling update on <= v1.36: the old pod's socket goes, the watcher's DeRegisterPlugin (by
// name) disconnects the new pod, and the kubelet, still running, will not walk again.
TEST(RegistrationFsm, WatcherDroppedByARunningKubeletRecreatesAtOnce) {
  Driver d(Mode::kWatcher);
  d.Do(Event::GetInfo(d.server));
  d.Do(Event::StreamOpened(d.server, 1));
  d.Do(Event::Notify(d.server, true));
  d.facts.kubelet_listening = true;
  d.Do(Event::StreamEnded(d.server, 1, true));
  EXPECT_EQ(d.fsm.phase(), Phase::kServeBackoff);
  EXPECT_EQ(d.timer_delay, milliseconds(0));
  ASSERT_TRUE(d.FireTimer());
  EXPECT_EQ(d.serves, 2);
}

TEST(RegistrationFsm, WatcherStreamEndDuringARestartWaitsEvenIfAListenerIsSeen) {
  Driver d(Mode::kWatcher);
  d.Do(Event::StreamOpened(d.server, 1));
  d.Do(Event::Notify(d.server, true));
  d.facts.kubelet_socket = kNewKubelet;  // a new kubelet already: it walks the registry
  d.facts.kubelet_listening = true;
  d.Do(Event::StreamEnded(d.server, 1, true));
  EXPECT_EQ(d.fsm.phase(), Phase::kStreamGrace);
  EXPECT_EQ(d.serves, 1);
}

TEST(RegistrationFsm, WatcherRecreatesOnceWhenTheWatcherNeverComesBack) {
  Driver d(Mode::kWatcher);
  d.Do(Event::StreamOpened(d.server, 1));
  d.Do(Event::Notify(d.server, true));
  d.Do(Event::StreamEnded(d.server, 1, true));  // e.g. another instance's stream ended (#121994)
  ASSERT_TRUE(d.FireTimer());
  EXPECT_EQ(d.serves, 2);
  EXPECT_EQ(d.fsm.socket_recreations(), 1u);
  EXPECT_FALSE(d.FireTimer()) << "one re-creation, then the kubelet's own retries";
}

TEST(RegistrationFsm, WatcherGraceRestartsWhenANewKubeletStarts) {
  Driver d(Mode::kWatcher);
  d.Do(Event::StreamOpened(d.server, 1));
  d.Do(Event::Notify(d.server, true));
  d.Do(Event::StreamEnded(d.server, 1, true));
  d.Advance(milliseconds(2000));
  d.Do(Event::KubeletSocketCreated());  // the kubelet is starting: its walk will find us
  EXPECT_EQ(d.timer_delay, kWatcherGrace);
  d.Do(Event::GetInfo(d.server));
  EXPECT_EQ(d.timer, 0u);
  EXPECT_EQ(d.serves, 1);
}

TEST(RegistrationFsm, WatcherStaleStreamEndAfterGetInfoIsIgnored) {
  Driver d(Mode::kWatcher);
  d.Do(Event::StreamOpened(d.server, 1));
  d.Do(Event::Notify(d.server, true));
  d.Do(Event::GetInfo(d.server));  // the watcher re-registers us (kubelet restarted) ...
  d.Do(Event::StreamEnded(d.server, 1, true));  // ... before the old stream's end arrives
  EXPECT_EQ(d.timer, 0u);
  EXPECT_EQ(d.fsm.phase(), Phase::kRegistered);
}

TEST(RegistrationFsm, WatcherRejectionRecreatesDamped) {
  Driver d(Mode::kWatcher);
  std::vector<long> delays;
  for (int i = 0; i < 3; ++i) {
    d.Do(Event::Notify(d.server, false, "RegisterPlugin error -- forced"));
    EXPECT_EQ(d.fsm.phase(), Phase::kServeBackoff);
    delays.push_back(static_cast<long>(d.timer_delay.count()));
    ASSERT_TRUE(d.FireTimer());
  }
  EXPECT_EQ(delays, (std::vector<long>{0, 500, 1000}));
  EXPECT_EQ(d.serves, 4);
  EXPECT_EQ(d.drops, 3);
  EXPECT_NE(d.log.find("the kubelet rejected the registration"), std::string::npos);
}

TEST(RegistrationFsm, WatcherAlreadyConnectedWithAStreamCountsAsRegistered) {
  Driver d(Mode::kWatcher);
  d.Do(Event::StreamOpened(d.server, 1));
  d.Do(Event::Notify(d.server, false, "device plugin already connected: /p"));
  EXPECT_TRUE(d.fsm.registered());
  EXPECT_EQ(d.serves, 1);
}

TEST(RegistrationFsm, EventsOfAnEarlierServerAreIgnored) {
  Driver d(Mode::kWatcher);
  const uint64_t old_server = d.server;
  d.Do(Event::Notify(d.server, false, "rejected"));
  ASSERT_TRUE(d.FireTimer());
  ASSERT_NE(d.server, old_server);
  d.Do(Event::Notify(old_server, true));
  d.Do(Event::StreamEnded(old_server, 1, true));
  EXPECT_EQ(d.fsm.phase(), Phase::kPublished);
  EXPECT_EQ(d.timer, 0u);
}

TEST(RegistrationFsm, StopCancelsEverything) {
  Driver d;
  d.Do(Event::Stop());
  EXPECT_EQ(d.cancels, 1);
  EXPECT_EQ(d.drops, 1);
  EXPECT_EQ(d.fsm.phase(), Phase::kIdle);
  d.RegisterAnswers(RegisterOutcome::kOk);
  EXPECT_FALSE(d.fsm.registered());
}

// The retry counters count waits on the back-off timer (what "retrying in N ms" says), by
// what failed: the first retry at once is none, each later one is; a success resets the
// back-off, not the counters.
TEST(RegistrationFsm, RetryCountersCountBackoffWaitsByWhatFailed) {
  Driver d;
  d.RegisterAnswers(RegisterOutcome::kFailed, "kubelet said no");
  EXPECT_EQ(d.timer_delay, milliseconds(0));  // at once: no wait
  EXPECT_EQ(d.fsm.register_retries(), 0u);
  ASSERT_TRUE(d.FireTimer());
  d.RegisterAnswers(RegisterOutcome::kFailed, "kubelet said no");
  EXPECT_GT(d.timer_delay, milliseconds(0));
  EXPECT_EQ(d.fsm.register_retries(), 1u);
  EXPECT_EQ(d.fsm.serve_retries(), 0u);

  Driver s;
  s.serve_fails = true;
  s.Do(Event::OwnSocketDeleted());  // served again, and that fails
  ASSERT_TRUE(s.FireTimer());       // and again
  EXPECT_EQ(s.fsm.serve_retries(), 1u);
  EXPECT_EQ(s.fsm.register_retries(), 0u);
}

}  // namespace
}  // namespace rdmadp::lifecycle
