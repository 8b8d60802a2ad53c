// Manager: what it watches. Signals, the kubelet's socket directories and the config
// directory (inotify), kernel link events and uevents, verbs events, and the auto-mode choice.
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
#include "pkg/manager/manager_internal.h"
#include "pkg/server/socket_path.h"
#include "pkg/sysfs/sysfs_parse.h"

namespace rdmadp::manager {

void Manager::OpenKernelEventSources() {
  if (auto links = netlink::LinkEventSocket::Open(); links.ok()) {
    link_events_ = std::make_unique<netlink::LinkEventSocket>(std::move(*links));
    loop_->Add(link_events_->fd(), [this] {
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
    loop_->Add(uevents_->fd(), [this] {
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
        [this](int fd, std::function<void()> fn) { loop_->Add(fd, std::move(fn)); },
        [this](int fd) { loop_->Remove(fd); },
        [this](const std::string& ibdev, std::string what) {
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
  if (!verbs_) return;
  std::set<std::string> ibdevs;
  for (const auto& [name, res] : resources_) {
    for (const auto& hca : res->snapshot->hcas()) {
      const sysfs::PciFunction& fn = hca.function;
      for (const auto& dev : fn.rdma_devices) ibdevs.insert(dev.name);
    }
  }
  verbs_->Track(ibdevs);
}

void Manager::RequestRescan(std::string reason, std::optional<std::string> address) {
  log::Debug(Cat("rescan requested: ", reason));
  if (stopping_) return;
  if (!pending_rescan_) {
    pending_rescan_.emplace().reason = std::move(reason);
    event_debounce_->ArmOnce(kEventDebounce);
  }
  if (address) {
    pending_rescan_->addresses.insert(std::move(*address));
  } else {
    pending_rescan_->full = true;
  }
}

void Manager::WatchSocketDirs() {
  if (!inotify_fd_.Valid()) return;
  constexpr uint32_t kMask = IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM;
  if (root_dir_watch_ < 0) {
    root_dir_watch_ = ::inotify_add_watch(inotify_fd_.Get(), options_.kubelet_root_dir.c_str(),
                                          IN_CREATE | IN_MOVED_TO);
    if (root_dir_watch_ >= 0 && ancestor_watch_ >= 0) {
      ::inotify_rm_watch(inotify_fd_.Get(), ancestor_watch_);
      ancestor_watch_ = -1;
    }
  }
  if (root_dir_watch_ < 0 && ancestor_watch_ < 0) {
    // The kubelet root itself is missing: watch the nearest existing ancestor and follow
    // the path down as directories appear.
    std::string dir = fd::ParentDir(options_.kubelet_root_dir);
    while (!dir.empty() && !PathExists(dir)) dir = fd::ParentDir(dir);
    if (!dir.empty()) {
      ancestor_watch_ =
          ::inotify_add_watch(inotify_fd_.Get(), dir.c_str(), IN_CREATE | IN_MOVED_TO);
    }
  }
  if (plugin_dir_watch_ < 0) {
    plugin_dir_watch_ = ::inotify_add_watch(inotify_fd_.Get(), DevicePluginDir().c_str(), kMask);
  }
  // The DRA driver registers through plugins_registry whatever the device plugin's mode.
  if (registry_dir_watch_ < 0 && (WatcherMode() || auto_deciding_ || (dra_ && dra_->active))) {
    registry_dir_watch_ =
        ::inotify_add_watch(inotify_fd_.Get(), PluginsRegistryDir().c_str(), kMask);
  }
}

void Manager::CleanStaleSockets(const std::string& dir, std::string_view prefix,
                                std::string_view suffix) {
  // Only sockets named like ours (<resourceName>-<8 hex>.sock for a configured resource, or
  // the DRA driver's <prefix><8 hex><suffix>), of another instance, and with nobody
  // accepting on them: provably dead.
  for (const std::string& name : fd::ListDir(dir)) {
    const std::string path = Cat(dir, "/", name);
    std::string file = name;
    if (file.starts_with(".")) file.erase(0, 1);  // not yet published by a dead instance
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    std::string id;
    if (!prefix.empty()) {
      if (!file.starts_with(prefix) || !file.ends_with(suffix) ||
          file.size() != prefix.size() + 8 + suffix.size()) {
        continue;
      }
      id = file.substr(prefix.size(), 8);
    } else {
      if (!file.ends_with(".sock") || file.size() < 14) continue;
      const std::string stem = file.substr(0, file.size() - 5);
      const auto dash = stem.rfind('-');
      if (dash == std::string::npos || stem.size() - dash - 1 != 8) continue;
      id = stem.substr(dash + 1);
      const std::string resource = stem.substr(0, dash);
      const bool ours = std::any_of(config_.resources.begin(), config_.resources.end(),
                                    [&](const auto& rc) { return rc.resource_name == resource; });
      if (!ours) continue;
    }
    if (id == instance_id_ || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
      continue;
    }
    if (server::SocketHasListener(path)) continue;
    if (::unlink(path.c_str()) == 0) {
      log::Info(Cat("removed stale socket ", path, " of a dead instance (nothing accepts on it)"));
    }
  }
}

void Manager::OnWatcherGetInfo() {
  if (auto_deciding_) {
    DecideAutoMode(cli::RegistrationMode::kWatcher, "the kubelet's plugin watcher called GetInfo");
  }
}

void Manager::DecideAutoMode(cli::RegistrationMode mode, std::string_view why) {
  if (!auto_deciding_) return;
  auto_deciding_ = false;
  auto_timer_.reset();
  log::Info(
      Cat("auto: ", why, "; using ",
          mode == cli::RegistrationMode::kWatcher ? "watcher mode" : "kubelet.sock registration"));
  if (mode == mode_) return;
  mode_ = mode;
  WatchSocketDirs();
  CleanStaleSockets(SocketDir());
  const auto fsm_mode = mode == cli::RegistrationMode::kWatcher ? lifecycle::Mode::kWatcher
                                                                : lifecycle::Mode::kKubelet;
  for (auto& [name, res] : resources_) {
    res->own_channel.reset();  // the socket moves to the other directory
    Drive(*res, lifecycle::Event::Start(fsm_mode));
  }
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

void Manager::OnInotifyEvents() {
  alignas(inotify_event) char buf[8192];
  bool kubelet_started = false;
  bool config_touched = false;
  bool dirs_appeared = false;
  std::vector<std::string> lost;
  ssize_t n;
  while ((n = ::read(inotify_fd_.Get(), buf, sizeof(buf))) > 0) {
    for (char* p = buf; p < buf + n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      const std::string name = ev->len > 0 ? ev->name : "";
      if (ev->wd == config_dir_watch_ &&
          (name == "..data" || name == BaseOf(options_.config_file))) {
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
      if (ev->wd == plugin_dir_watch_ && name == kKubeletSocketName &&
          (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
        kubelet_started = true;
      }
      if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) lost.push_back(name);
    }
  }
  if (config_touched) reload_debounce_->ArmOnce(kReloadDebounce);
  if (stopping_) return;
  if (dirs_appeared) {
    if (ancestor_watch_ >= 0) {  // one level closer: re-aim the watch
      ::inotify_rm_watch(inotify_fd_.Get(), ancestor_watch_);
      ancestor_watch_ = -1;
    }
    WatchSocketDirs();
    for (auto& [rname, res] : resources_) Drive(*res, lifecycle::Event::SocketDirAppeared());
    DriveDra(lifecycle::Event::SocketDirAppeared());  // the kubelet's directories, fanned out
  }
  for (const auto& file : lost) {
    // The DRA driver's registration socket (the kubelet's cleanup, an operator): re-served
    // once, as a device-plugin socket is; the plugin watcher then registers it again.
    if (dra_ && dra_->server && BaseOf(dra_->server->registration_path()) == file &&
        !PathExists(dra_->server->registration_path())) {
      DriveDra(lifecycle::Event::OwnSocketDeleted());
    }
    for (auto& [rname, res] : resources_) {
      if (res->server && BaseOf(res->server->socket_path()) != file &&
          file.starts_with(res->config.resource_name + "-") && file.ends_with(".sock") &&
          file.find('-', res->config.resource_name.size() + 1) == std::string::npos) {
        // Another instance of this resource went (the old pod of a rolling update). The
        // kubelet's view is whatever list was written last, maybe that instance's (a
        // v1.37 kubelet promotes the survivor without asking it again; a v1.24 one ignores
        // the old stream's end): ours is sent again, so the view becomes ours at once.
        log::Info(Cat(res->config.FullName(), ": another instance's socket ", file,
                      " went away; sending our device list again"));
        res->server->Resend();
        continue;
      }
      if (!res->server || BaseOf(res->server->socket_path()) != file) continue;
      // Our own re-creation replaces the file too; only a socket that is still gone was lost.
      if (PathExists(res->server->socket_path())) continue;
      Drive(*res, lifecycle::Event::OwnSocketDeleted());
    }
  }
  if (kubelet_started) {
    if (!WatcherMode()) ++counters_.kubelet_restarts;
    log::Info(Cat(KubeletSocket(), " created (kubelet (re)started)"));
    for (auto& [rname, res] : resources_) Drive(*res, lifecycle::Event::KubeletSocketCreated());
  }
}

}  // namespace rdmadp::manager
