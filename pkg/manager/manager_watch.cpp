// Manager: what it watches. Signals, the kubelet's socket directories and the config
// directory (inotify), kernel link events and uevents, verbs events.
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "pkg/fd/files.h"
#include "pkg/log/log.h"
#include "pkg/manager/manager.h"
#include "pkg/sysfs/sysfs_parse.h"
#include "pkg/text/cat.h"

namespace rdmadp::manager {
namespace {

// A ConfigMap update is several file operations; kernel events come in bursts.
constexpr std::chrono::milliseconds kReloadDebounce{100};
constexpr std::chrono::milliseconds kEventDebounce{20};

}  // namespace

void Manager::Watch(std::string_view otherwise, int fd, std::function<void()> on_readable) {
  if (auto added = loop_->Add(fd, std::move(on_readable)); !added.ok()) {
    log::Warn(Cat(std::string(added.message()), "; ", otherwise));
  }
}

void Manager::OpenKernelEventSources() {
  if (auto links = netlink::LinkEventSocket::Open(); links.ok()) {
    link_events_ = std::make_unique<netlink::LinkEventSocket>(std::move(*links));
    Watch("link changes are seen only by periodic rescans", link_events_->fd(), [this] {
      // Only links of PCI network functions can change a pool; CNI creates and deletes
      // veth pairs by the hundred on a busy node, and each one used to cost a full scan.
      for (const std::string& name : link_events_->Drain()) {
        if (auto it = link_owners_.find(name); it != link_owners_.end()) {
          RequestRescan(Cat("link event ", name), it->second);
        }
      }
    });
  } else {
    log::Warn(Cat(std::string(links.status().message()),
                  "; link changes are seen only by "
                  "periodic rescans"));
  }
  if (auto uevents = netlink::UeventSocket::Open(); uevents.ok()) {
    uevents_ = std::make_unique<netlink::UeventSocket>(std::move(*uevents));
    Watch("hot-plug is seen only by periodic rescans", uevents_->fd(), [this] {
      for (const auto& ev : uevents_->Drain()) {
        if (netlink::UeventTriggersRescan(ev)) {
          RequestRescan(Cat("uevent ", ev.action, " ", ev.subsystem, " ", ev.devpath),
                        sysfs::PciAddressOfDevpath(ev.devpath));
        }
      }
    });
  } else {
    log::Warn(Cat(std::string(uevents.status().message()),
                  "; hot-plug is seen only by "
                  "periodic rescans"));
  }
  // Verbs events come from the real devices: only meaningful on the real sysfs.
  if (options_.sysfs_root == "/sys") {
    verbs_ = std::make_unique<rdma::VerbsEvents>(
        [this](int fd, std::function<void()> fn) {
          Watch("this device's port events are seen only by rescans", fd, std::move(fn));
        },
        [this](int fd) { loop_->Remove(fd); },
        [this](const std::string& ibdev, const std::string& what) {
          std::optional<std::string> address;  // the function the device belongs to
          for (const auto& fn : inventory_.functions) {
            for (const auto& dev : fn.rdma_devices) {
              if (dev.name == ibdev) address = fn.address;
            }
          }
          RequestRescan(Cat("verbs event ", what), address);
        });
  }
}

void Manager::TrackVerbsDevices() {
  loop::AssertOnLoop(*loop_);  // VerbsEvents is the loop thread's (verbs_events.h)
  if (!verbs_) return;
  std::set<std::string> ibdevs;
  for (const sysfs::PciFunction* fn : SelectedFunctions()) {
    for (const auto& dev : fn->rdma_devices) ibdevs.insert(dev.name);
  }
  verbs_->Track(ibdevs);
}

void Manager::RequestRescan(std::string reason, std::optional<std::string> address) {
  log::Debug(Cat("rescan requested: ", reason));
  if (stopping_) return;
  if (!pending_rescan_) {
    pending_rescan_ = PendingRescan{};
    pending_rescan_->reason = std::move(reason);
    event_debounce_->ArmOnce(kEventDebounce);
  }
  if (address) {
    pending_rescan_->addresses.insert(std::move(*address));
  } else {
    pending_rescan_->full = true;
  }
}

bool Manager::WatchKubeletDirs() {
  if (!inotify_fd_.Valid()) return false;
  constexpr uint32_t kMask = IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM;
  if (root_dir_watch_ < 0) {
    root_dir_watch_ =
        ::inotify_add_watch(inotify_fd_.Get(), dirs_.root.c_str(), IN_CREATE | IN_MOVED_TO);
    if (root_dir_watch_ >= 0 && ancestor_watch_ >= 0) {
      ::inotify_rm_watch(inotify_fd_.Get(), ancestor_watch_);
      ancestor_watch_ = -1;
    }
  }
  if (root_dir_watch_ < 0 && ancestor_watch_ < 0) {
    // The kubelet root itself is missing: watch the nearest existing ancestor and follow
    // the path down as directories appear.
    std::string dir = fd::ParentDir(dirs_.root);
    while (!dir.empty() && !fd::PathExists(dir)) dir = fd::ParentDir(dir);
    if (!dir.empty()) {
      ancestor_watch_ =
          ::inotify_add_watch(inotify_fd_.Get(), dir.c_str(), IN_CREATE | IN_MOVED_TO);
    }
  }
  // Both socket directories, whatever the front ends use: the device plugin's mode may
  // change (auto), and the DRA driver registers through plugins_registry in any mode.
  if (plugin_dir_watch_ < 0) {
    plugin_dir_watch_ =
        ::inotify_add_watch(inotify_fd_.Get(), dirs_.DevicePlugins().c_str(), kMask);
    if (plugin_dir_watch_ < 0) ReportWatchFailure(dirs_.DevicePlugins(), errno);
  }
  if (registry_dir_watch_ < 0) {
    registry_dir_watch_ =
        ::inotify_add_watch(inotify_fd_.Get(), dirs_.PluginsRegistry().c_str(), kMask);
    if (registry_dir_watch_ < 0) ReportWatchFailure(dirs_.PluginsRegistry(), errno);
  }
  return root_dir_watch_ >= 0 || ancestor_watch_ >= 0;
}

void Manager::ReportWatchFailure(const std::string& dir, int error) {
  if (error == ENOENT) return;  // not there yet: the root's watch reports it
  // Out of watches (fs.inotify.max_user_watches) or no access: the registration machines'
  // damped looks (at most 30 s apart) still find a kubelet.sock.
  ReportOnce(log::Level::kWarn, "registration",
             Cat("cannot watch ", dir, ": ", std::strerror(error),
                 "; kubelet restarts are seen by a look at most 30 s apart"),
             {.resource = {}, .hca = {}, .event = "registration"});
}

void Manager::OnSignal() {
  signalfd_siginfo info{};
  while (::read(signal_fd_.Get(), &info, sizeof(info)) == sizeof(info)) {
    if (info.ssi_signo == SIGHUP) {
      log::Info("received SIGHUP: reloading the config and rescanning");
      Reload("SIGHUP");
      continue;
    }
    log::Info(Cat("received ", strsignal(static_cast<int>(info.ssi_signo)), ", shutting down"));
    stopping_ = true;
    loop_->Quit();
    return;
  }
}

void Manager::FanOut(const frontend::KubeletEvent& event) {
  for (auto& front_end : front_ends_) front_end->OnKubeletEvent(event);
}

void Manager::OnInotifyEvents() {
  using Kind = frontend::KubeletEvent::Kind;
  alignas(inotify_event) char buf[8192];
  bool kubelet_started = false;
  bool config_touched = false;
  bool dirs_appeared = false;
  std::vector<frontend::KubeletEvent> lost;
  ssize_t n;
  while ((n = ::read(inotify_fd_.Get(), buf, sizeof(buf))) > 0) {
    for (char* p = buf; p < buf + n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      const std::string name = ev->len > 0 ? ev->name : "";
      if (ev->mask & IN_Q_OVERFLOW) {  // events were lost: look at everything again
        dirs_appeared = true;
        config_touched = true;
        continue;
      }
      if (ev->wd == config_dir_watch_ &&
          (name == "..data" || name == fd::BaseName(options_.config_file))) {
        config_touched = true;
      }
      if ((ev->wd == root_dir_watch_ &&
           (name == "device-plugins" || name == "plugins_registry" || name == "plugins")) ||
          ev->wd == ancestor_watch_) {
        dirs_appeared = true;
      }
      if (ev->mask & IN_IGNORED) {  // the directory itself went away; re-watch when it returns
        if (ev->wd == plugin_dir_watch_) plugin_dir_watch_ = -1;
        if (ev->wd == registry_dir_watch_) registry_dir_watch_ = -1;
        if (ev->wd == root_dir_watch_) root_dir_watch_ = -1;
        if (ev->wd == ancestor_watch_) ancestor_watch_ = -1;
        continue;
      }
      if (ev->wd != plugin_dir_watch_ && ev->wd != registry_dir_watch_) continue;
      if (ev->wd == plugin_dir_watch_ && name == "kubelet.sock" &&
          (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
        kubelet_started = true;
      }
      if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
        lost.push_back(
            {.kind = Kind::kFileDeleted,
             .dir = ev->wd == plugin_dir_watch_ ? dirs_.DevicePlugins() : dirs_.PluginsRegistry(),
             .file = name});
      }
    }
  }
  if (config_touched) reload_debounce_->ArmOnce(kReloadDebounce);
  if (stopping_) return;
  if (dirs_appeared) {
    if (ancestor_watch_ >= 0) {  // one level closer: re-aim the watch
      ::inotify_rm_watch(inotify_fd_.Get(), ancestor_watch_);
      ancestor_watch_ = -1;
    }
    WatchKubeletDirs();
    FanOut({Kind::kDirsAppeared, {}, {}});
  }
  for (const auto& event : lost) FanOut(event);
  if (kubelet_started) {
    log::Info(Cat(dirs_.KubeletSocket(), " created (kubelet (re)started)"),
              {.resource = {}, .hca = {}, .event = "kubelet_restart"});
    FanOut({Kind::kKubeletSocketCreated, {}, {}});
  }
}

}  // namespace rdmadp::manager
