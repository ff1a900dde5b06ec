#include "common/status.h"

#include <gtest/gtest.h>

#include "common/status_macros.h"

namespace agentckpt {
namespace {

StatusOr<int> Half(int v) {
  if (v % 2 != 0) return InvalidArgumentError("odd");
  return v / 2;
}

StatusOr<int> Quarter(int v) {
  ASSIGN_OR_RETURN(int h, Half(v));
  ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status Check(int v) {
  RETURN_IF_ERROR(Half(v).status());
  return OkStatus();
}

TEST(StatusTest, CodesAndMessages) {
  EXPECT_TRUE(OkStatus().ok());
  Status s = DataLossError("hash mismatch");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.ToString(), "DATA_LOSS: hash mismatch");
  EXPECT_EQ(s.WithContext("checkpoint 7").message(), "checkpoint 7: hash mismatch");
  EXPECT_EQ(StatusCodeName(StatusCode::kUnavailable), "UNAVAILABLE");
}

TEST(StatusTest, MacrosPropagate) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_EQ(Quarter(6).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Check(4).ok());
  EXPECT_EQ(Check(3).code(), StatusCode::kInvalidArgument);
}

TEST(StatusDeathTest, ValueOfErrorAborts) {
  StatusOr<int> v = NotFoundError("x");
  EXPECT_DEATH((void)v.value(), "broken invariant");
}

}  // namespace
}  // namespace agentckpt
