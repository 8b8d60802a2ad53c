#include "pkg/rdma/verbs_events.h"

#include <fcntl.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "pkg/log/log.h"
#include "pkg/text/cat.h"

namespace rdmadp::rdma {

void VerbsEvents::ContextCloser::operator()(ibv_context* c) const { ibv_close_device(c); }

VerbsEvents::VerbsEvents(std::function<void(int, std::function<void()>)> watch,
                         std::function<void(int)> unwatch,
                         std::function<void(const std::string&, std::string)> on_event)
    : watch_(std::move(watch)), unwatch_(std::move(unwatch)), on_event_(std::move(on_event)) {}

VerbsEvents::~VerbsEvents() { Track({}); }

void VerbsEvents::Track(const std::set<std::string>& ibdevs) {
  for (auto it = contexts_.begin(); it != contexts_.end();) {
    if (ibdevs.count(it->first) == 0) {
      unwatch_(it->second->async_fd);
      it = contexts_.erase(it);
    } else {
      ++it;
    }
  }
  if (ibdevs.empty()) return;
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) return;
  for (int i = 0; i < count; ++i) {
    const std::string name = ibv_get_device_name(list[i]);
    if (ibdevs.count(name) == 0 || contexts_.count(name) != 0) continue;
    Context ctx(ibv_open_device(list[i]));
    if (!ctx) {
      if (unavailable_reported_.insert(name).second) {
        log::Info(Cat("verbs async events for ", name,
                      " unavailable (open failed: ", std::strerror(errno),
                      "; an unprivileged pod's device cgroup blocks it); port state still comes "
                      "from sysfs rescans and netlink link events"));
      }
      continue;
    }
    const int flags = fcntl(ctx->async_fd, F_GETFL);
    fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
    watch_(ctx->async_fd, [this, name] { OnReadable(name); });
    contexts_.emplace(name, std::move(ctx));
  }
  ibv_free_device_list(list);
}

void VerbsEvents::OnReadable(const std::string& ibdev) {
  auto it = contexts_.find(ibdev);
  if (it == contexts_.end()) return;
  ibv_async_event event{};
  bool fatal = false;
  while (ibv_get_async_event(it->second.get(), &event) == 0) {
    on_event_(ibdev, Cat(ibdev, ": ", ibv_event_type_str(event.event_type)));
    fatal = fatal || event.event_type == IBV_EVENT_DEVICE_FATAL;
    ibv_ack_async_event(&event);
  }
  if (fatal) {  // the context is dead; reopen on the next Track() once the device is back
    unwatch_(it->second->async_fd);
    contexts_.erase(it);
  }
}

}  // namespace rdmadp::rdma
