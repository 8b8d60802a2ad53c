// The device-plugin front end in CDI mode: one spec file per resource, written before any
// Allocate names its devices, removed when the resource goes unless another live instance
// of ours still serves it (a rolling update).
#include "pkg/cdi/cdi_spec.h"
#include "pkg/cdi/spec_files.h"
#include "pkg/deviceplugin/front_end_internal.h"
#include "pkg/fd/files.h"
#include "pkg/log/log.h"
#include "pkg/rpc/socket_path.h"
#include "pkg/text/cat.h"

namespace rdmadp::deviceplugin {

void DevicePluginFrontEnd::SyncCdiSpec(Resource& res) {
  if (!options_.use_cdi) return;
  const std::string spec =
      res.snapshot->hcas().empty() ? "" : cdi::SpecJson(*res.snapshot, options_.memlock_hook);
  if (res.cdi_written && *res.cdi_written == spec) return;
  const std::string file = cdi::SpecFileName(res.config);
  if (spec.empty()) {
    // CDI >= 1.0 rejects a spec without devices at every refresh of the spec dirs; with
    // no HCA, Allocate names no CDI device either.
    if (auto s = cdi::RemoveSpec(options_.cdi_spec_dir, file); !s.ok()) {
      host_.ReportProblem(log::Level::kError, "cdi",
                          Cat(res.config.FullName(), ": ", std::string(s.message()),
                              "; will retry at the next rescan"),
                          {.resource = res.config.FullName(), .hca = {}, .event = "cdi"});
      return;  // an empty pool names no CDI device: nothing to mark
    }
    if (res.cdi_written) {
      log::Info(Cat(res.config.FullName(), ": pool is empty; CDI spec ", options_.cdi_spec_dir, "/",
                    file, " removed"));
    }
    res.cdi_written = spec;
    return;
  }
  if (auto s = cdi::WriteSpecAtomically(options_.cdi_spec_dir, file, spec); !s.ok()) {
    // Keep serving, but every slot Unhealthy until a rescan writes the spec: a pod admitted
    // now would fail at container creation. Never end a stream over CDI I/O.
    const bool first = res.cdi_problem.empty();
    res.cdi_problem = Cat("its CDI spec could not be written: ", std::string(s.message()));
    if (first) {
      host_.ReportProblem(log::Level::kError, "cdi",
                          Cat(res.config.FullName(), ": ", std::string(s.message()),
                              "; every slot is Unhealthy until a rescan writes it (free space in, "
                              "or make writable, ",
                              options_.cdi_spec_dir, ")"),
                          {.resource = res.config.FullName(), .hca = {}, .event = "cdi"});
    }
    return;
  }
  if (!res.cdi_problem.empty()) log::Info(Cat(res.config.FullName(), ": CDI spec written again"));
  res.cdi_problem.clear();
  // A port's state is in _INFO, so a flapping link rewrites the spec: said at Info only when
  // its devices change.
  const bool devices_changed = !res.cdi_written || res.cdi_written->empty() ||
                               res.cdi_written_devices != res.snapshot->hcas().size();
  res.cdi_written = spec;
  res.cdi_written_devices = res.snapshot->hcas().size();
  log::Write(
      devices_changed ? log::Level::kInfo : log::Level::kDebug,
      Cat(res.config.FullName(), ": CDI spec ", options_.cdi_spec_dir, "/", file, " written (",
          res.snapshot->hcas().size(), " device(s), kind ", res.cdi_naming.kind, ")"));
}

bool DevicePluginFrontEnd::AnotherInstanceServes(const std::string& resource_name) const {
  const std::string own = rpc::SocketFileName(resource_name, host_.InstanceId());
  for (const std::string& file : fd::ListDir(SocketDir())) {
    if (file == own || !file.starts_with(resource_name + "-") || !file.ends_with(".sock")) {
      continue;
    }
    if (file.size() == own.size() && rpc::SocketHasListener(Cat(SocketDir(), "/", file))) {
      return true;
    }
  }
  return false;
}

void DevicePluginFrontEnd::RemoveCdiSpec(const Resource& res) {
  if (!options_.use_cdi) return;
  if (AnotherInstanceServes(res.config.resource_name)) {
    log::Info(Cat(res.config.FullName(), ": another instance serves it; keeping its CDI spec"));
    return;
  }
  if (auto s = cdi::RemoveSpec(options_.cdi_spec_dir, cdi::SpecFileName(res.config)); !s.ok()) {
    log::Warn(std::string(s.message()));
  }
}

}  // namespace rdmadp::deviceplugin
