// A pool the slice publisher's tests wish published: node n1, driver rdma.example.com, `n`
// ConnectX HCAs in pool `resource` (64 a slice), the first `down` of them with their port
// down. Shared by the end-to-end suite and the one on fake time.
#pragma once

#include <cstdio>
#include <string>

#include "pkg/dra/slices/resource_slices.h"
#include "pkg/dra/slices/slice_reconciler.h"
#include "test/support/hca_fixture.h"

namespace rdmadp::testing {

inline dra::WantedPool Wanted(int n, const std::string& resource = "a", int down = 0) {
  pool::PoolModel p;
  p.resource.resource_name = resource;
  p.resource.rdma_hca_max = 16;
  for (int i = 0; i < n; ++i) {
    char address[32];
    std::snprintf(address, sizeof address, "0000:%02x:%02x.0", i / 32 + 1, i % 32);
    p.hcas.push_back(ConnectXHca(address, 0, /*healthy=*/i >= down));
  }
  dra::SliceContext ctx;
  ctx.driver = "rdma.example.com";
  ctx.node_name = "n1";
  return {dra::PoolName(ctx, p.resource), dra::RenderResourceSlices(p, ctx)};
}

}  // namespace rdmadp::testing
