// Internal to the device-plugin front end: what its .cpp files share. Loop thread only,
// asserted where the loop enters (Apply, OnKubeletEvent, Drive, Collect, Stop); other
// threads reach a resource through PostTo().
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "pkg/deviceplugin/front_end.h"
#include "pkg/frontend/registration_timer.h"

namespace rdmadp::deviceplugin {

using std::chrono::milliseconds;

inline constexpr milliseconds kSelfCheckTimeout{2000};
inline constexpr milliseconds kRegisterTimeout{5000};
// The state machine's watchdog must never fire on an attempt the registrar will still answer.
static_assert(kSelfCheckTimeout + kRegisterTimeout < lifecycle::kRegisterAnswerDeadline);

struct DevicePluginFrontEnd::Resource {
  config::ResourceConfig config;
  pool::SnapshotPtr snapshot;  // latest, kept even while not serving
  // The registration lifecycle; this struct only carries out its actions.
  std::unique_ptr<lifecycle::RegistrationFsm> fsm;
  std::unique_ptr<ResourceServer> server;
  std::unique_ptr<KubeletRegistration> registration;
  std::unique_ptr<frontend::RegistrationTimer> timer;
  std::shared_ptr<grpc::Channel> own_channel;  // to our own socket; path fixed per mode
  uint64_t allocations_before = 0;             // answered by earlier servers of this resource
  uint64_t rejections_before = 0;
  pool::CdiNaming cdi_naming;
  // The spec text last written ("" after the spec of an empty pool was removed): any change
  // of what the spec says (HCAs, env, hook) rewrites it.
  std::optional<std::string> cdi_written;
  size_t cdi_written_devices = 0;  // how many devices it named
  // Why the spec for `snapshot` is not on disk ("" when it is): the kubelet is then shown
  // every slot Unhealthy, since Allocate would name CDI devices no runtime can resolve.
  std::string cdi_problem;
  std::string unusable;  // why no pod can get this pool, as last warned ("" when one can)
  // Whether the pods' _INFO variable was last said to be left out (pool/pod_env.h).
  bool info_left_out = false;
  // The RoCE variables last said to be missing from the pods' environment (pool/pod_env.h
  // RoceEnv), one line each.
  std::vector<std::string> roce_not_set;
  std::string shares_cut;  // perHca: the shares-cut line last said ("" for none)
  // IDs of the other deviceModel the kubelet's checkpoint held when it started, one line
  // (OtherModelHeld; "" for none): a ready note until they are gone.
  std::string other_model_held;
};

}  // namespace rdmadp::deviceplugin
