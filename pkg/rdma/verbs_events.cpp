#include "pkg/rdma/verbs_events.h"

#include <fcntl.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "pkg/log/log.h"
#include "pkg/rdma/verbs_lib.h"
#include "pkg/text/cat.h"

namespace rdmadp::rdma {

void VerbsEvents::ContextCloser::operator()(ibv_context* c) const {
  VerbsLib::Get()->close_device(c);  // a context exists only once the library is loaded
}

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
  std::string why;
  const VerbsLib* verbs = VerbsLib::Get(&why);
  if (verbs == nullptr) {
    if (why != unavailable_why_) {
      unavailable_why_ = why;
      log::Debug(Cat("verbs async events off: ", why,
                     "; port state comes from sysfs rescans and netlink link events"));
    }
    return;
  }
  int count = 0;
  ibv_device** list = verbs->get_device_list(&count);
  if (list == nullptr) return;
  for (int i = 0; i < count; ++i) {
    const std::string name = verbs->get_device_name(list[i]);
    if (ibdevs.count(name) == 0 || contexts_.count(name) != 0) continue;
    Context ctx(verbs->open_device(list[i]));
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
  verbs->free_device_list(list);
}

void VerbsEvents::OnReadable(const std::string& ibdev) {
  auto it = contexts_.find(ibdev);
  if (it == contexts_.end()) return;
  const VerbsLib* verbs = VerbsLib::Get();
  ibv_async_event event{};
  bool fatal = false;
  while (verbs->get_async_event(it->second.get(), &event) == 0) {
    on_event_(ibdev, Cat(ibdev, ": ", verbs->event_type_str(event.event_type)));
    fatal = fatal || event.event_type == IBV_EVENT_DEVICE_FATAL;
    verbs->ack_async_event(&event);
  }
  if (fatal) {  // the context is dead; reopen on the next Track() once the device is back
    unwatch_(it->second->async_fd);
    contexts_.erase(it);
  }
}

}  // namespace rdmadp::rdma
