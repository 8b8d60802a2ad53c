// What the API server (or a proxy in front of it) answers, read by the DRA front end: a
// ResourceClaim for Prepare, ResourceSlices for the reconciler, a slice as stored for the
// dropped-field check. Any bytes: no exception, no crash, and a stored slice that carries
// everything we want is never a change (docs/reliability.md, "Crash, hang, flood").
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "pkg/dra/prepare/prepare_claim.h"
#include "pkg/dra/slices/resource_slices.h"
#include "pkg/dra/slices/slice_reconciler.h"

namespace {

using nlohmann::json;
using namespace rdmadp;

const dra::DraView& View() {
  static const dra::DraView view = [] {
    pool::PoolModel p;
    p.resource.resource_name = "a";
    p.resource.rdma_hca_max = 4;
    pool::PoolHca h;
    h.function.address = "0000:3b:00.0";
    h.function.vendor = "15b3";
    h.healthy = true;
    p.hcas.push_back(h);
    dra::SliceContext ctx;
    ctx.node_name = "n1";
    return dra::BuildDraView({p}, ctx);
  }();
  return view;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const json answer =
      json::parse(reinterpret_cast<const char*>(data), reinterpret_cast<const char*>(data) + size,
                  nullptr, /*allow_exceptions=*/false);
  try {
    (void)dra::PrepareClaim(answer, "u1", View());
    std::map<std::string, dra::PublishedSlice> published = {{"s1", {"s1", "7", answer}}};
    const auto& wanted = View().pools;
    const json spec = answer.is_object() && answer.contains("spec") ? answer["spec"] : json();
    const dra::FieldPaths dropped = wanted.empty() || wanted[0].slices.empty()
                                        ? dra::FieldPaths{}
                                        : dra::DroppedFields(wanted[0].slices[0]["spec"], spec);
    (void)dra::Reconcile(published, wanted, dropped);
    (void)dra::WithoutFields(spec, dropped);
    // A stored slice equal to a wanted one (any generation) is never rewritten.
    if (!wanted.empty() && !wanted[0].slices.empty()) {
      json stored = wanted[0].slices[0];
      stored["metadata"] = {{"name", "s1"}, {"resourceVersion", "7"}};
      if (!dra::Reconcile({{"s1", {"s1", "7", stored}}}, wanted).empty()) __builtin_trap();
    }
  } catch (const std::exception&) {
    __builtin_trap();  // nothing the server says may throw out of these
  }
  return 0;
}
