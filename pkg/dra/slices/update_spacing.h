// Coalesces a flapping pool's updates: a pool that changes again within kUpdateSpacing of
// its last whole update waits until then, its changes coalesced. Its first change goes out
// at once, then at most one update a pool per kUpdateSpacing. A pool with a slice to create
// (a new pool, a wiped slice, a pool that grew) never waits, nor does the rest of an update
// broken off halfway (its slices would stay at two generations).
//
// Pure; not thread-safe: the publisher's writer owns it, under the publisher's lock.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pkg/dra/slices/slice_reconciler.h"

namespace rdmadp::dra {

inline constexpr std::chrono::seconds kUpdateSpacing{10};

class UpdateSpacing {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // The writes that may go at `now`: those of pools updated less than kUpdateSpacing ago
  // are taken out (whole pools: a pool half written at a new generation is unusable), and
  // held_until() says when the earliest of them may go. `published` names the pool of a
  // slice to delete.
  std::vector<SliceWrite> Hold(std::vector<SliceWrite> writes,
                               const std::map<std::string, PublishedSlice>& published,
                               TimePoint now);
  // `writes` went out whole at `now`: the spacing of each pool they updated starts.
  void Written(const std::vector<SliceWrite>& writes, TimePoint now);
  // When the earliest held pool may be written (none held: nullopt).
  const std::optional<TimePoint>& held_until() const { return held_until_; }

 private:
  std::map<std::string, TimePoint> last_update_;  // by pool
  std::optional<TimePoint> held_until_;
};

}  // namespace rdmadp::dra
