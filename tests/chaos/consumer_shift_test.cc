// IsFailoverShift (bench/chaos/consumer_shift.h): the consumer changes a nats-server failover
// makes pass, every change a restore that touched the consumer would make does not.
#include "bench/chaos/consumer_shift.h"

#include <gtest/gtest.h>

namespace chaos {
namespace {

ConsumerState State(uint64_t delivered, uint64_t ack_floor, uint64_t pending, int64_t ack_pending,
                    int64_t redelivered) {
  ConsumerState s;
  s.delivered_stream = delivered;
  s.ack_floor_stream = ack_floor;
  s.num_pending = pending;
  s.num_ack_pending = ack_pending;
  s.num_redelivered = redelivered;
  return s;
}

TEST(ConsumerShiftTest, ANewLeaderBehindOnRedeliveriesOrTheAckFloorIsAFailover) {
  // Seen on nats-server 2.9 after a kill during the restore: redelivered 1 -> 0.
  EXPECT_TRUE(IsFailoverShift(State(9, 7, 0, 2, 1), State(9, 7, 0, 2, 0), {}));
  EXPECT_TRUE(IsFailoverShift(State(9, 7, 0, 2, 0), State(9, 5, 2, 2, 0), {}));
}

TEST(ConsumerShiftTest, AnAckTheServerConfirmedBeforeTheCrashIsAFailover) {
  // Seen: the agent's ack of 8 confirmed, the leader killed 80 ms later, then 7 -> 8.
  EXPECT_TRUE(IsFailoverShift(State(9, 7, 0, 2, 0), State(9, 8, 0, 1, 0), {3, 8}));
  // An ack above the floor (9 confirmed, 8 not) lowers ack-pending without moving the floor.
  EXPECT_TRUE(IsFailoverShift(State(9, 7, 0, 2, 0), State(9, 7, 0, 1, 0), {9}));
}

TEST(ConsumerShiftTest, AnAckNoAgentHadConfirmedIsAChange) {
  EXPECT_FALSE(IsFailoverShift(State(9, 7, 0, 2, 0), State(9, 8, 0, 1, 0), {}));
  EXPECT_FALSE(IsFailoverShift(State(9, 7, 0, 2, 0), State(9, 9, 0, 0, 0), {8}));
  EXPECT_FALSE(IsFailoverShift(State(9, 7, 0, 2, 0), State(9, 7, 0, 1, 0), {}));
  EXPECT_FALSE(IsFailoverShift(State(9, 7, 0, 2, 0), State(9, 7, 0, 0, 0), {9}));
  // Confirmed acks at or below the floor before do not count for ack-pending.
  EXPECT_FALSE(IsFailoverShift(State(9, 7, 0, 2, 0), State(9, 7, 0, 1, 0), {6, 7}));
}

TEST(ConsumerShiftTest, ADeliveryOrMoreRedeliveriesOrFewerPendingIsAChange) {
  EXPECT_FALSE(IsFailoverShift(State(9, 7, 1, 2, 0), State(10, 7, 0, 3, 0), {}));
  EXPECT_FALSE(IsFailoverShift(State(9, 7, 0, 2, 0), State(9, 7, 0, 2, 1), {}));
  EXPECT_FALSE(IsFailoverShift(State(9, 7, 2, 2, 0), State(9, 7, 1, 2, 0), {}));
  EXPECT_FALSE(IsFailoverShift(State(9, 7, 0, 2, 0), State(9, 7, 0, 3, 0), {}));
}

}  // namespace
}  // namespace chaos
