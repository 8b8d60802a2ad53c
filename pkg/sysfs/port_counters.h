// A port's traffic and error counters as the kernel shows them in sysfs
// (/sys/class/infiniband/<dev>/ports/<n>/counters/ and hw_counters/; Linux
// drivers/infiniband/core/sysfs.c): each file one unsigned decimal. `port_xmit_data` and
// `port_rcv_data` count 4-octet words (the PMA's PortXmitData/PortRcvData); where the
// device has no 64-bit extended counters they are 32 bits and stop at 2^32-1 rather than
// wrap, as the 8-bit (`link_downed`, `link_error_recovery`) and 4-bit error counters do: a
// value at its ceiling means "at least", never a reset. hw_counters holds the driver's own
// (mlx5: CNPs sent and handled, out-of-sequence, retransmissions). Reads files only: any
// thread. Bounded: at most kMaxPortCounters files per directory, 32 bytes each.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rdmadp::sysfs {

inline constexpr size_t kMaxPortCounters = 128;

struct PortCounters {
  std::string hca;  // mlx5_0
  int port = 0;
  std::map<std::string, uint64_t> counters;     // counters/<name>
  std::map<std::string, uint64_t> hw_counters;  // hw_counters/<name>
  std::vector<std::string> problems;            // files that did not read as a number
};

PortCounters ReadPortCounters(const std::string& sysfs_root, const std::string& hca, int port);

}  // namespace rdmadp::sysfs
