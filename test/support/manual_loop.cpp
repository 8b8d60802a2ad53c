#include "test/support/manual_loop.h"

#include <poll.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace rdmadp::testing {

absl::Status ManualLoop::Add(int fd, loop::Handler on_readable) {
  loop::AssertOnLoop(*this);
  if (fd < 0) return absl::InvalidArgumentError("cannot watch a negative descriptor");
  handlers_[fd] = std::make_shared<loop::Handler>(std::move(on_readable));
  return absl::OkStatus();
}

void ManualLoop::Remove(int fd) {
  loop::AssertOnLoop(*this);
  handlers_.erase(fd);
}

int ManualLoop::Dispatch() {
  loop::AssertOnLoop(*this);
  int ran = scheduler_.RunPosted();
  // A handler that never drains its descriptor would spin here for ever: a bug in the code
  // under test, said at once.
  for (int round = 0; round < 1000 && !quit_; ++round) {
    std::vector<pollfd> fds;
    for (const auto& [fd, handler] : handlers_) fds.push_back({fd, POLLIN, 0});
    if (fds.empty() || ::poll(fds.data(), fds.size(), 0) <= 0) return ran;
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      auto it = handlers_.find(p.fd);
      if (it == handlers_.end()) continue;  // removed by an earlier handler of this round
      const std::shared_ptr<loop::Handler> keep = it->second;  // may remove itself
      (*keep)();
      ++ran;
      ran += scheduler_.RunPosted();
    }
  }
  if (quit_) return ran;
  std::fprintf(stderr, "ManualLoop: a descriptor stays readable after 1000 dispatches\n");
  std::abort();
}

void ManualLoop::Run() {
  while (!quit_ && Dispatch() > 0) {
  }
}

void ManualLoop::Advance(std::chrono::milliseconds d) {
  scheduler_.Advance(d);
  Dispatch();
}

}  // namespace rdmadp::testing
