// libibverbs asynchronous events (port ACTIVE/ERR, device fatal, ...) of the HCAs in the
// pools, on real nodes. Each open device's async fd is watched by the event loop, so a port
// change triggers a health check at once instead of at the next periodic rescan.
// Loop thread only (its one user, the manager, asserts it: Manager::TrackVerbsDevices, and
// its descriptors' handlers run on the loop). Devices are matched by ibdev name; with no RDMA
// hardware (or a fake sysfs tree) nothing is opened and libibverbs is not even loaded
// (verbs_lib.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

struct ibv_context;

namespace rdmadp::rdma {

class VerbsEvents {
 public:
  // `watch(fd, on_readable)` / `unwatch(fd)` register with the event loop;
  // `on_event(ibdev, description)` is called for every event read.
  VerbsEvents(std::function<void(int, std::function<void()>)> watch,
              std::function<void(int)> unwatch,
              std::function<void(const std::string&, std::string)> on_event);
  ~VerbsEvents();

  // Opens the listed devices not open yet and closes the ones no longer listed.
  void Track(const std::set<std::string>& ibdevs);
  size_t open_devices() const { return contexts_.size(); }

 private:
  struct ContextCloser {
    void operator()(ibv_context* c) const;
  };
  using Context = std::unique_ptr<ibv_context, ContextCloser>;
  void OnReadable(const std::string& ibdev);

  std::function<void(int, std::function<void()>)> watch_;
  std::function<void(int)> unwatch_;
  std::function<void(const std::string&, std::string)> on_event_;
  std::map<std::string, Context> contexts_;
  std::set<std::string> unavailable_reported_;  // devices whose open failure was logged
  std::string unavailable_why_;                 // why libibverbs is not loaded, as logged
};

}  // namespace rdmadp::rdma
