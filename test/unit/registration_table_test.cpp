// The registration machine's transition table, as its header states it: this test reads the
// table out of pkg/lifecycle/registration_fsm.h, puts a machine into each listed phase (one
// setup each, under fixed facts: one kubelet.sock identity, no wall-clock stamps), hands in
// each event and compares the phase after and the actions with the row. Every pair of
// phase and event the table does not list must change neither the phase nor any action.
// So a change to the table or to the machine without the other fails here. What depends
// on other facts (a restart seen late, another kubelet's answer) or changes only data is
// lifecycle_test's.
//
// RDMADP_PRINT_FSM_TABLE=1 prints the table the machine actually follows, in the header's
// format (to review a change, then paste it into the header).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "test/unit/fsm_driver.h"

namespace rdmadp::lifecycle {
namespace {

using test_support::Driver;

const SocketId kRestartedKubelet{.inode = 11, .ctime_ns = 2};

struct Row {
  std::string mode, phase, event, after, actions;
};

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// The rows between "// Transitions" and "// End of transitions" in the header, each
// "// mode | phase | event | after | actions". A line there that starts like a row but
// does not have those five cells is a problem (it would otherwise be skipped unchecked).
std::vector<Row> HeaderRows(std::vector<std::string>& problems) {
  std::ifstream in(RDMADP_FSM_HEADER);
  std::vector<Row> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("// Transitions")) inside = true;
    if (line.starts_with("// End of transitions")) break;
    const bool row_like = line.starts_with("//  kubelet") || line.starts_with("//  watcher") ||
                          line.starts_with("//  mode");
    if (!inside || !row_like) continue;
    std::vector<std::string> cells;
    size_t from = 2;
    for (size_t bar; (bar = line.find('|', from)) != std::string::npos; from = bar + 1) {
      cells.push_back(Trim(line.substr(from, bar - from)));
    }
    cells.push_back(Trim(line.substr(from)));  // the last cell, empty or not
    if (cells.size() != 5 || cells[4].empty()) {
      problems.push_back("not a row of five cells: " + line);
      continue;
    }
    if (cells[0] == "mode") continue;  // the column names
    rows.push_back({cells[0], cells[1], cells[2], cells[3], cells[4]});
  }
  return rows;
}

// Where each listed phase comes from (the header names these setups).
struct Setup {
  Mode mode;
  std::string label;
  std::function<void(Driver&)> reach;
};

uint64_t OpenStream(Driver& d) {
  const uint64_t id = ++d.streams;
  d.Do(Event::StreamOpened(d.server, id));
  return id;
}

std::vector<Setup> Setups() {
  auto start = [](Mode mode) { return [mode](Driver& d) { d.Do(Event::Start(mode)); }; };
  auto serve_fails = [](Mode mode, bool dir_missing) {
    return [mode, dir_missing](Driver& d) {
      d.serve_fails = true;
      d.dir_missing = dir_missing;
      d.Do(Event::Start(mode));
      d.serve_fails = d.dir_missing = false;
    };
  };
  const Mode k = Mode::kKubelet, w = Mode::kWatcher;
  return {
      {k, "ServeBackoff", serve_fails(k, false)},
      {k, "NoSocketDir", serve_fails(k, true)},
      {k, "NoKubelet",
       [](Driver& d) {
         d.facts.kubelet_socket = {};
         d.Do(Event::Start(Mode::kKubelet));
       }},
      {k, "Registering",
       [start](Driver& d) {
         start(Mode::kKubelet)(d);
         OpenStream(d);  // v1.25+: the stream starts before the answer
       }},
      {k, "Registered",
       [start](Driver& d) {
         start(Mode::kKubelet)(d);
         OpenStream(d);
         d.RegisterAnswers(RegisterOutcome::kOk);
       }},
      {k, "Registered (no stream yet)",
       [start](Driver& d) {
         start(Mode::kKubelet)(d);
         d.RegisterAnswers(RegisterOutcome::kOk);  // v1.24: answered first
       }},
      {k, "RetryWait",
       [start](Driver& d) {
         start(Mode::kKubelet)(d);
         OpenStream(d);
         d.RegisterAnswers(RegisterOutcome::kFailed, "rejected");
       }},
      {w, "ServeBackoff", serve_fails(w, false)},
      {w, "NoSocketDir", serve_fails(w, true)},
      {w, "Published",
       [start](Driver& d) {
         start(Mode::kWatcher)(d);
         d.Do(Event::GetInfo(d.server));
         OpenStream(d);  // the kubelet's order: GetInfo, its stream, then Notify
       }},
      {w, "Registered",
       [start](Driver& d) {
         start(Mode::kWatcher)(d);
         d.Do(Event::GetInfo(d.server));
         OpenStream(d);
         d.Do(Event::Notify(d.server, true));
       }},
      {w, "Registered (no stream yet)",
       [start](Driver& d) {
         start(Mode::kWatcher)(d);
         d.Do(Event::GetInfo(d.server));
         d.Do(Event::Notify(d.server, true));
       }},
      {w, "StreamGrace",
       [start](Driver& d) {
         start(Mode::kWatcher)(d);
         d.Do(Event::GetInfo(d.server));
         const uint64_t stream = OpenStream(d);
         d.Do(Event::Notify(d.server, true));
         d.Do(Event::StreamEnded(d.server, stream, true));  // the kubelet is away
       }},
  };
}

// Each event of the table, handed to a machine in some phase.
using Apply = std::function<std::vector<Action>(Driver&)>;

std::vector<std::pair<std::string, Apply>> Events() {
  // The re-serve a phase starts (its timer in ServeBackoff, the directory in NoSocketDir,
  // our socket's removal elsewhere), answered late: the answer is the event.
  auto serve_done = [](bool ok) {
    return [ok](Driver& d) {
      d.hold_serves = true;
      if (d.fsm.phase() == Phase::kServeBackoff) {
        d.FireTimer();
      } else if (d.fsm.phase() == Phase::kNoSocketDir) {
        d.Do(Event::SocketDirAppeared());
      } else {
        d.Do(Event::OwnSocketDeleted());
      }
      d.hold_serves = false;
      return d.Do(ok ? Event::ServeOk(d.server) : Event::ServeFailed(d.server, false, "no"));
    };
  };
  auto register_done = [](RegisterOutcome outcome) {
    return [outcome](Driver& d) { return d.Do(Event::RegisterDone(d.attempt, outcome, "x")); };
  };
  auto stream_ends = [](bool kubelet_listening) {
    return [kubelet_listening](Driver& d) {
      d.facts.kubelet_listening = kubelet_listening;
      return d.Do(Event::StreamEnded(d.server, d.streams, true));
    };
  };
  return {
      {"ServeDone ok", serve_done(true)},
      {"ServeDone failed", serve_done(false)},
      {"kubelet.sock new",
       [](Driver& d) {
         d.facts.kubelet_socket = kRestartedKubelet;
         return d.Do(Event::KubeletSocketCreated());
       }},
      {"kubelet.sock same", [](Driver& d) { return d.Do(Event::KubeletSocketCreated()); }},
      {"RegisterDone ok", register_done(RegisterOutcome::kOk)},
      {"RegisterDone already", register_done(RegisterOutcome::kAlreadyConnected)},
      {"RegisterDone down", register_done(RegisterOutcome::kKubeletDown)},
      {"RegisterDone failed", register_done(RegisterOutcome::kFailed)},
      {"stream opens",
       [](Driver& d) {
         const uint64_t id = ++d.streams;
         return d.Do(Event::StreamOpened(d.server, id));
       }},
      {"stream ends", stream_ends(false)},
      {"stream ends, kubelet listening", stream_ends(true)},
      {"GetInfo", [](Driver& d) { return d.Do(Event::GetInfo(d.server)); }},
      {"Notify ok", [](Driver& d) { return d.Do(Event::Notify(d.server, true)); }},
      {"Notify rejected", [](Driver& d) { return d.Do(Event::Notify(d.server, false, "no")); }},
      {"Timer",
       [](Driver& d) {
         d.Advance(d.timer_delay);
         return d.Do(Event::Timer(d.timer));  // token 0 (none armed) is no timer's
       }},
      {"OwnSocketDeleted", [](Driver& d) { return d.Do(Event::OwnSocketDeleted()); }},
      {"SocketDirAppeared", [](Driver& d) { return d.Do(Event::SocketDirAppeared()); }},
      {"Stop", [](Driver& d) { return d.Do(Event::Stop()); }},
  };
}

// A phase, and what its data says when that matters to the next event.
std::string Label(const PhaseData& state) {
  std::string label(PhaseName(static_cast<Phase>(state.index())));
  if (const auto* r = std::get_if<phase::Registering>(&state)) {
    std::vector<std::string> notes;
    if (r->stream_lost) notes.emplace_back("stream lost");
    if (r->kubelet_changed) notes.emplace_back("kubelet.sock changed");
    for (size_t i = 0; i < notes.size(); ++i) label += (i == 0 ? " (" : ", ") + notes[i];
    if (!notes.empty()) label += ")";
  }
  if (const auto* r = std::get_if<phase::Registered>(&state); r && r->awaiting_stream) {
    label += " (no stream yet)";
  }
  return label;
}

std::string Describe(const std::vector<Action>& actions) {
  std::string out;
  for (const Action& a : actions) {
    std::string one;
    switch (a.kind) {
      case Action::Kind::kServe:
        one = "Serve";
        break;
      case Action::Kind::kDropServer:
        one = "Drop";
        break;
      case Action::Kind::kRegister:
        one = a.fresh ? "Register(fresh)" : "Register";
        break;
      case Action::Kind::kCancelRegister:
        one = "Cancel";
        break;
      case Action::Kind::kArmTimer:
        one = "Arm(" + std::to_string(a.delay.count()) + ")";
        break;
      case Action::Kind::kDisarmTimer:
        one = "Disarm";
        break;
      case Action::Kind::kLog:
        continue;
    }
    out += (out.empty() ? "" : " ") + one;
  }
  return out.empty() ? "-" : out;
}

// What the machine does for every setup and event: the rows that act or change the label.
std::vector<Row> ActualRows(std::vector<std::string>& unchanged_problems) {
  std::vector<Row> rows;
  for (const Setup& setup : Setups()) {
    for (const auto& [event, apply] : Events()) {
      Driver d(setup.mode, /*expect_stream=*/true, /*start=*/false);
      setup.reach(d);
      const std::string before = Label(d.fsm.state());
      if (setup.label != before) {
        unchanged_problems.push_back(setup.label + ": reached " + before);
        continue;
      }
      const std::vector<Action> actions = apply(d);
      const std::string after = Label(d.fsm.state());
      const std::string what = Describe(actions);
      if (what == "-" && after == before) continue;  // ignored
      rows.push_back(
          {setup.mode == Mode::kKubelet ? "kubelet" : "watcher", setup.label, event, after, what});
    }
  }
  return rows;
}

TEST(RegistrationTable, TheHeadersTableIsWhatTheMachineDoes) {
  std::vector<std::string> problems;
  const std::vector<Row> actual = ActualRows(problems);
  EXPECT_EQ(problems, std::vector<std::string>{});
  if (std::getenv("RDMADP_PRINT_FSM_TABLE") != nullptr) {
    for (const Row& r : actual) {
      std::printf("//  %-7s | %-26s | %-30s | %-34s | %s\n", r.mode.c_str(), r.phase.c_str(),
                  r.event.c_str(), r.after.c_str(), r.actions.c_str());
    }
  }
  std::vector<std::string> unparsed;
  const std::vector<Row> header = HeaderRows(unparsed);
  EXPECT_EQ(unparsed, std::vector<std::string>{});
  ASSERT_FALSE(header.empty()) << "no transition table in " << RDMADP_FSM_HEADER;
  std::map<std::string, Row> by_key;
  for (const Row& r : actual) by_key[r.mode + "|" + r.phase + "|" + r.event] = r;
  for (const Row& r : header) {
    const std::string key = r.mode + "|" + r.phase + "|" + r.event;
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      ADD_FAILURE() << "the header's row " << key << " -> " << r.after << " | " << r.actions
                    << ": the machine ignores this event there";
      continue;
    }
    EXPECT_EQ(r.after + " | " + r.actions, it->second.after + " | " + it->second.actions)
        << "the header's row " << key << " (expected: the header; actual: the machine)";
    by_key.erase(it);
  }
  for (const auto& [key, r] : by_key) {
    ADD_FAILURE() << "the machine does " << key << " -> " << r.after << " | " << r.actions
                  << ", which the header's table does not list";
  }
}

}  // namespace
}  // namespace rdmadp::lifecycle
