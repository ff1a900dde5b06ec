#include "bench/chaos/consumer_shift.h"

#include <iterator>

namespace chaos {

bool IsFailoverShift(const ConsumerState& before, const ConsumerState& after,
                     const std::set<uint64_t>& confirmed_acks) {
  if (after.delivered_stream != before.delivered_stream ||
      after.num_redelivered > before.num_redelivered || after.num_pending < before.num_pending) {
    return false;
  }
  for (uint64_t seq = before.ack_floor_stream + 1; seq <= after.ack_floor_stream; ++seq) {
    if (!confirmed_acks.count(seq)) return false;
  }
  const int64_t confirmed_above_floor =
      static_cast<int64_t>(std::distance(confirmed_acks.upper_bound(before.ack_floor_stream),
                                         confirmed_acks.upper_bound(before.delivered_stream)));
  return after.num_ack_pending <= before.num_ack_pending &&
         before.num_ack_pending - after.num_ack_pending <= confirmed_above_floor;
}

}  // namespace chaos
