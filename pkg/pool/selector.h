// Selector matching, as the Go plugin does it (reference §4): exact match, OR within one
// selector list, AND across lists, empty lists skipped. Pure.
#pragma once

#include "pkg/config/config.h"
#include "pkg/sysfs/inventory.h"

namespace rdmadp::pool {

bool Matches(const config::Selectors& selectors, const sysfs::PciFunction& fn);

}  // namespace rdmadp::pool
