#include "pkg/loop/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "pkg/log/log.h"
#include "pkg/text/cat.h"

namespace rdmadp::loop {

absl::StatusOr<std::unique_ptr<EventLoop>> EventLoop::Create() {
  UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!epoll.Valid() || !wake.Valid()) {
    return absl::InternalError(Cat("cannot create the event loop: ", std::strerror(errno)));
  }
  std::unique_ptr<EventLoop> loop(new EventLoop(std::move(epoll), std::move(wake)));
  if (auto added = loop->Add(loop->wake_.Get(), [l = loop.get()] { l->DrainPosted(); });
      !added.ok()) {
    return added;
  }
  return loop;
}

EventLoop::EventLoop(UniqueFd epoll, UniqueFd wake)
    : epoll_(std::move(epoll)), wake_(std::move(wake)), thread_(std::this_thread::get_id()) {}

absl::Status EventLoop::Add(int fd, Handler on_readable) {
  AssertOnLoop(*this);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_.Get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
    return absl::InternalError(
        Cat("the event loop cannot watch descriptor ", fd, ": ", std::strerror(errno)));
  }
  handlers_[fd] = std::make_shared<Handler>(std::move(on_readable));
  return absl::OkStatus();
}

bool EventLoop::OnLoop() const { return thread_.load() == std::this_thread::get_id(); }

std::unique_ptr<Alarm> EventLoop::NewAlarm(Handler on_fire) {
  return std::make_unique<Timer>(*this, std::move(on_fire));
}

void EventLoop::Remove(int fd) {
  AssertOnLoop(*this);
  ::epoll_ctl(epoll_.Get(), EPOLL_CTL_DEL, fd, nullptr);
  handlers_.erase(fd);
}

void EventLoop::Post(Handler fn) {
  {
    sync::MutexLock lock(mu_);
    posted_.push_back(std::move(fn));
  }
  const uint64_t one = 1;
  ssize_t ignored = ::write(wake_.Get(), &one, sizeof(one));
  (void)ignored;
}

void EventLoop::Quit() {
  Post([this] { quit_ = true; });
}

void EventLoop::DrainPosted() {
  uint64_t count = 0;
  ssize_t ignored = ::read(wake_.Get(), &count, sizeof(count));
  (void)ignored;
  std::vector<Handler> work;
  {
    sync::MutexLock lock(mu_);
    work.swap(posted_);
  }
  for (auto& fn : work) fn();
}

void EventLoop::Run() {
  thread_ = std::this_thread::get_id();
  epoll_event events[16];
  while (!quit_) {
    const int n = ::epoll_wait(epoll_.Get(), events, 16, -1);  // no timeout: no polling
    if (n < 0 && errno == EINTR) continue;
    for (int i = 0; i < n && !quit_; ++i) {
      auto it = handlers_.find(events[i].data.fd);
      if (it == handlers_.end()) continue;  // removed by an earlier handler
      auto handler = it->second;            // keep alive if the handler removes itself
      (*handler)();
    }
  }
}

Timer::Timer(EventLoop& loop, EventLoop::Handler handler)
    : loop_(loop), fd_(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) {
  if (!fd_.Valid()) {
    log::Error(Cat("cannot create a timer: ", std::strerror(errno),
                   "; what it was to start (a retry, a heartbeat, a rescan) will not run"));
    return;
  }
  auto added = loop_.Add(fd_.Get(), [this, h = std::move(handler)] {
    uint64_t expirations = 0;
    if (::read(fd_.Get(), &expirations, sizeof(expirations)) > 0) h();
  });
  if (!added.ok()) {
    log::Error(Cat(std::string(added.message()), "; a timer of it will not fire"));
    fd_ = UniqueFd();
  }
}

Timer::~Timer() {
  if (fd_.Valid()) loop_.Remove(fd_.Get());
}

void Timer::Set(std::chrono::milliseconds first, std::chrono::milliseconds interval) {
  auto to_ts = [](std::chrono::milliseconds ms) {
    timespec ts{};
    ts.tv_sec = ms.count() / 1000;
    ts.tv_nsec = (ms.count() % 1000) * 1000000;
    return ts;
  };
  itimerspec spec{};
  spec.it_value = to_ts(first);
  if (first.count() == 0) {
    spec.it_value.tv_nsec = 1;  // a zero it_value would disarm; fire at once instead
  }
  spec.it_interval = to_ts(interval);
  if (fd_.Valid()) ::timerfd_settime(fd_.Get(), 0, &spec, nullptr);
}

void Timer::ArmOnce(std::chrono::milliseconds after) { Set(after, std::chrono::milliseconds(0)); }
void Timer::ArmPeriodic(std::chrono::milliseconds every) { Set(every, every); }
void Timer::Disarm() {
  itimerspec off{};
  if (fd_.Valid()) ::timerfd_settime(fd_.Get(), 0, &off, nullptr);
}

}  // namespace rdmadp::loop
