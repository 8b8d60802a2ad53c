#include "pkg/dra/prepare/prepare.h"

#include "pkg/config/k8s_names.h"
#include "pkg/kube/json_read.h"
#include "pkg/log/log.h"
#include "pkg/text/cat.h"
#include "pkg/text/escape.h"

namespace rdmadp::dra {
namespace {

using std::chrono::milliseconds;

// Prepare's claim GETs end this long before the kubelet's deadline, so that the answer
// still reaches it.
constexpr milliseconds kDeadlineMargin{500};

// Why the API server's answer cannot be the claim the kubelet asked for, or "" (a malformed
// answer is PrepareClaim's to describe). Its namespace and name must be the ones asked for:
// what a container is told is named after them, and an answer naming another claim (a
// proxy's mix-up, a server we should not believe) must not write that claim's files. Its
// results cannot be more than kube-apiserver stores in a claim: each request is a spec file.
std::string AnswerProblem(const nlohmann::json& claim, const drav1::Claim& asked) {
  if (!claim.is_object()) return "";
  const auto& meta = kube::Obj(claim, "metadata");
  const std::string ns = kube::Str(meta, "namespace");
  const std::string name = kube::Str(meta, "name");
  if (ns != asked.namespace_() || name != asked.name()) {
    return Cat("the API server answered with ResourceClaim ", ns.empty() ? "(no namespace)" : ns,
               "/", name.empty() ? "(no name)" : name, ", not the one asked for");
  }
  const nlohmann::json* results = kube::Arr(
      kube::Obj(kube::Obj(kube::Obj(claim, "status"), "allocation"), "devices"), "results");
  if (results != nullptr && results->size() > kMaxAllocationResults) {
    return Cat("its allocation has ", results->size(), " results; the API server stores at most ",
               kMaxAllocationResults, " in a claim");
  }
  return "";
}

// A name from the kubelet's request for a message: at most 253 bytes (the longest name
// Kubernetes allows) and the length past that, control characters escaped.
std::string Capped(std::string_view name) {
  constexpr size_t kMaxEcho = 253;
  if (name.size() <= kMaxEcho) return EscapeControls(name);
  return Cat(EscapeControls(name.substr(0, kMaxEcho)), "... (", name.size(), " bytes)");
}

}  // namespace

drav1::NodePrepareResourcesResponse Prepare(const drav1::NodePrepareResourcesRequest& req,
                                            const DraViewPtr& view, kube::RestClient* claims,
                                            std::chrono::system_clock::time_point deadline,
                                            const std::atomic<bool>& cancelled,
                                            const MetadataDirs& metadata,
                                            const std::function<void(PreparedClaim)>& on_prepared) {
  drav1::NodePrepareResourcesResponse resp;
  if (claims != nullptr) claims->ResetCancel();
  for (const auto& c : req.claims()) {
    auto& out = (*resp.mutable_claims())[c.uid()];
    // As the kubelet sent them, capped and escaped for every line and error that names the
    // claim: a 300 KB name was logged whole, twice a claim (#18 of the hardening round at
    // 050f44e). Kubernetes names are at most 253 characters, so a real one is whole.
    const std::string name = Cat(Capped(c.namespace_()), "/", Capped(c.name()));
    if (claims == nullptr || !view) {
      out.set_error(Cat("cannot prepare ResourceClaim ", name,
                        ": the DRA driver has no API server connection (see its log)"));
      continue;
    }
    const auto left = std::chrono::duration_cast<milliseconds>(
        deadline - std::chrono::system_clock::now() - kDeadlineMargin);
    if (cancelled || left.count() <= 0) {
      // Nobody waits for this answer any more: the claim is not fetched (the kubelet
      // retries the whole batch).
      out.set_error(Cat("cannot prepare ResourceClaim ", name, ": ",
                        cancelled ? "the DRA driver is stopping"
                                  : "the kubelet's deadline passed before it was read"));
      continue;
    }
    // The names go into the URL: only what Kubernetes can name (DNS-1123 subdomains; a
    // namespace is even narrower) is asked for, so "../" never reaches another API path
    // with our token.
    const std::string bad_namespace = config::DnsSubdomainProblem(c.namespace_());
    const std::string bad_name = config::DnsSubdomainProblem(c.name());
    if (!bad_namespace.empty() || !bad_name.empty()) {
      out.set_error(Cat(
          "cannot prepare ResourceClaim ", name, ": ",
          !bad_namespace.empty() ? Cat("namespace: ", bad_namespace) : Cat("name: ", bad_name)));
      log::Warn(out.error());
      continue;
    }
    auto r = claims->Call(
        "GET",
        Cat("/apis/resource.k8s.io/v1/namespaces/", c.namespace_(), "/resourceclaims/", c.name()),
        "", std::min(left, kube::kCallTimeout));
    if (!r.ok() || r->code != 200) {
      out.set_error(Cat("reading ResourceClaim ", name, ": ",
                        r.ok() ? Cat("HTTP ", r->code) : std::string(r.status().message())));
      log::Warn(out.error());
      continue;
    }
    const auto claim = nlohmann::json::parse(r->body, nullptr, false);
    if (const std::string problem = AnswerProblem(claim, c); !problem.empty()) {
      out.set_error(Cat("cannot prepare ResourceClaim ", name, ": ", problem));
      log::Warn(out.error());
      continue;
    }
    auto devices = PrepareClaim(claim, c.uid(), *view);
    if (!devices.ok()) {
      out.set_error(std::string(devices.status().message()));
      log::Warn(out.error());
      continue;
    }
    // What the container is told (claim_metadata.h). As the upstream helper does, a claim
    // whose files cannot be written is still prepared: its devices work without them.
    auto ref = ReadClaimRef(claim);
    const absl::Status written =
        ref.ok() ? WriteClaimMetadata(metadata, *ref, *devices) : ref.status();
    if (!written.ok()) {
      log::Warn(Cat("ResourceClaim ", name,
                    ": no device metadata for its containers: ", std::string(written.message())));
    }
    std::vector<std::string> described;
    for (const auto& d : *devices) {
      auto* dev = out.add_devices();
      for (const auto& request : d.request_names) dev->add_request_names(request);
      dev->set_pool_name(d.pool);
      dev->set_device_name(d.device);
      for (const auto& id : d.cdi_ids) dev->add_cdi_device_ids(id);
      if (!d.share_id.empty()) dev->set_share_id(d.share_id);  // v1: echoed, as the kubelet expects
      described.push_back(
          Cat(d.pool, "/", d.device, d.share_id.empty() ? "" : Cat(" (share ", d.share_id, ")")));
    }
    if (on_prepared && !devices->empty()) {
      PreparedClaim prepared{c.namespace_(), c.name(), c.uid(), {}, {}};
      for (const auto& d : *devices) prepared.devices.push_back({d.pool, d.device, d.share_id});
      prepared.reported = ReportedEntries(claim, view->driver, prepared.devices);
      on_prepared(std::move(prepared));
    }
    log::Info(Cat("prepared ResourceClaim ", name, " (", c.uid(),
                  "): ", described.empty() ? "no device of ours" : Join(described, ", ")));
  }
  return resp;
}

drav1::NodeUnprepareResourcesResponse Unprepare(const drav1::NodeUnprepareResourcesRequest& req,
                                                const MetadataDirs& metadata) {
  drav1::NodeUnprepareResourcesResponse resp;
  for (const auto& c : req.claims()) {
    auto& out = (*resp.mutable_claims())[c.uid()];
    // A failure is the claim's error: the kubelet retries Unprepare until it succeeds.
    if (auto s = RemoveClaimMetadata(metadata, c.namespace_(), c.name(), c.uid()); !s.ok()) {
      out.set_error(std::string(s.message()));
      log::Warn(Cat("unpreparing ResourceClaim ", Capped(c.namespace_()), "/", Capped(c.name()),
                    ": ", std::string(s.message())));
    }
  }
  return resp;
}

}  // namespace rdmadp::dra
