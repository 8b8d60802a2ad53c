// Prints, as one JSON array, the ResourceSlices the DRA renderer makes for the demo node's
// pools in every device model, plus a 300-HCA pool (several slices): the input of
// test/manifests/dra_slices.mjs, which checks them against the official Kubernetes schema.
// With --matrix: every model x rdmaHcaMax in {1, 2, 1000} x HCA states instead.
#include <cstdio>
#include <iostream>

#include "pkg/config/config.h"
#include "pkg/dra/slices/resource_slices.h"
#include "pkg/pool/pool_model.h"
#include "pkg/sysfs/scanner.h"
#include "test/support/fake_node.h"
#include "test/support/temp_dir.h"

using namespace rdmadp;

int main(int argc, char** argv) {
  const bool matrix = argc > 1 && std::string(argv[1]) == "--matrix";
  testing::TempDir tmp;
  testing::FakeNode node(tmp.path());
  node.Add(testing::FakeNode::ConnectX(0, 0, true));
  node.Add(testing::FakeNode::ConnectX(1, -1, true));
  node.SetPortState("mlx5_1", 1, "1: DOWN");  // a tainted device
  for (int i = 0; i < 300; ++i) {
    testing::FakeFunction fn = testing::FakeNode::ConnectX(0, i % 2, false);
    char addr[32];
    std::snprintf(addr, sizeof(addr), "0001:%02x:%02x.%d", 0x20 + i / 64, (i / 8) % 8, i % 8);
    fn.address = addr;
    fn.netdevs = {"eth" + std::to_string(i)};
    fn.ibdev = "mlx5_" + std::to_string(100 + i);
    fn.pcie_root = "pci0001:20";
    node.Add(fn);
  }
  const sysfs::NodeInventory inv = sysfs::Scanner(node.sysfs_root(), node.dev_root()).Scan();
  config::ResourceConfig ib, roce;
  ib.resource_name = "hca_shared_devices_a";
  ib.rdma_hca_max = 1000;
  ib.selectors.link_types = {"infiniband"};
  roce.resource_name = "roce_pool";
  roce.rdma_hca_max = 300;
  roce.selectors.link_types = {"ether"};
  nlohmann::json all = nlohmann::json::array();
  const std::vector<dra::DeviceModel> models = {
      dra::DeviceModel::kPerHca, dra::DeviceModel::kPerPool, dra::DeviceModel::kSlots};
  for (const auto model : models) {
    if (matrix) break;
    dra::SliceContext ctx;
    ctx.node_name = "worker-1.example.com";
    ctx.model = model;
    for (const auto* rc : {&ib, &roce}) {
      for (auto& slice : dra::RenderResourceSlices(pool::SelectPool(*rc, inv), ctx)) {
        all.push_back(std::move(slice));
      }
    }
  }
  if (!matrix) {
    std::cout << all.dump(1) << "\n";
    return 0;
  }
  // --matrix: every model x rdmaHcaMax in {1, 2, 1000} x the HCAs' states (all up, one port
  // down, one CDI spec unwritable), each checked at every release by dra_slices.mjs
  // (docs/dra.md, "What the plugin does about it").
  for (const auto model :
       {dra::DeviceModel::kPerHca, dra::DeviceModel::kPerPool, dra::DeviceModel::kSlots}) {
    for (const int64_t shares : {1, 2, 1000}) {
      for (const std::string state : {"up", "port-down", "cdi-unwritable"}) {
        config::ResourceConfig rc = ib;
        rc.rdma_hca_max = shares;
        pool::PoolModel p = pool::SelectPool(rc, inv);
        dra::SliceContext ctx;
        ctx.node_name = "worker-2";
        ctx.model = model;
        for (auto& hca : p.hcas) hca.healthy = state == "port-down" ? hca.healthy : true;
        if (state == "cdi-unwritable" && !p.hcas.empty()) {
          p.hcas[0].healthy = false;
          ctx.cdi_unwritable.insert(p.hcas[0].function.address);
        }
        for (auto& slice : dra::RenderResourceSlices(p, ctx)) all.push_back(std::move(slice));
      }
    }
  }
  // A node name longer than a DNS label: the pool name's first part is cut to 63.
  {
    dra::SliceContext ctx;
    ctx.node_name = "gpu-node-001.rack-17.row-3.datacenter-west.example-corporation.internal";
    ctx.model = dra::DeviceModel::kPerHca;
    for (auto& slice : dra::RenderResourceSlices(pool::SelectPool(ib, inv), ctx)) {
      all.push_back(std::move(slice));
    }
  }
  std::cout << all.dump(1) << "\n";
  return 0;
}
