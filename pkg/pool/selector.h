// Selector matching, as the Go plugin does it (reference §4): exact match, OR within one
// selector list, AND across lists, empty lists skipped. Pure.
#pragma once

#include <string>

#include "pkg/config/config.h"
#include "pkg/sysfs/inventory.h"

namespace rdmadp::pool {

bool Matches(const config::Selectors& selectors, const sysfs::PciFunction& fn);

// Why `fn` is not in a pool with these selectors ("" when it is): the first selector list
// that excludes it, with the function's value, or why it is not RDMA-capable. For
// --log-level=debug, so an operator can see why an HCA is (not) in a pool.
std::string Explain(const config::Selectors& selectors, const sysfs::PciFunction& fn);

}  // namespace rdmadp::pool
