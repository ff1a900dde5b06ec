// Small helpers shared by the store tests: status assertions and sealed test checkpoints.
// Header-only so that any test executable (e.g. a backend compiling store_contract.cc) can use it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "checkpoint/canonical.h"
#include "common/status.h"
#include "journal/journal_entry.h"
#include "tests/support/fixtures.h"
#include "tests/support/journal_chain.h"

namespace agentckpt::testing {

inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const StatusOr<T>& s) {
  return s.status();
}

// A UUID v4 made of two numbers, so tests can build distinct, readable ids.
inline std::string TestUuid(uint32_t high, uint64_t low) {
  char id[40];
  std::snprintf(id, sizeof(id), "%08x-0000-4000-8000-%012llx", high,
                static_cast<unsigned long long>(low & 0xffffffffffffULL));
  return id;
}

// Seals `cp`; a checkpoint that does not seal is a broken test, reported as a failure (the
// returned value then has no hash, and a Put of it fails too).
inline SealedCheckpoint SealForTest(Checkpoint cp) {
  StatusOr<SealedCheckpoint> sealed = Seal(std::move(cp));
  if (!sealed.ok()) {
    ADD_FAILURE() << "test checkpoint does not seal: " << sealed.status().ToString();
    return SealedCheckpoint{};
  }
  return std::move(sealed).value();
}

// MakeCheckpoint(agent_id, sequence), sealed.
inline SealedCheckpoint SealedAt(const std::string& agent_id, int64_t sequence) {
  return SealForTest(MakeCheckpoint(agent_id, sequence));
}

// EXPECTs `actual` to equal `expected` field for field; on a difference the canonical JSON of
// both is shown.
inline void ExpectSameCheckpoint(const Checkpoint& actual, const Checkpoint& expected) {
  EXPECT_EQ(actual.content_sha256, expected.content_sha256);
  EXPECT_EQ(CanonicalJson(actual), CanonicalJson(expected));
  EXPECT_TRUE(actual == expected) << "checkpoints differ in a field the canonical form hides";
}

}  // namespace agentckpt::testing

// ASSERT/EXPECT that a Status or StatusOr is OK, printing the status otherwise.
#define STORE_ASSERT_OK(expr)                                        \
  do {                                                               \
    const auto& store_status_ = (expr);                              \
    ASSERT_TRUE(::agentckpt::testing::StatusOf(store_status_).ok())  \
        << ::agentckpt::testing::StatusOf(store_status_).ToString(); \
  } while (0)
#define STORE_EXPECT_OK(expr)                                        \
  do {                                                               \
    const auto& store_status_ = (expr);                              \
    EXPECT_TRUE(::agentckpt::testing::StatusOf(store_status_).ok())  \
        << ::agentckpt::testing::StatusOf(store_status_).ToString(); \
  } while (0)
// EXPECT that a Status or StatusOr carries `expected` (a StatusCode enumerator name, e.g.
// kNotFound).
#define STORE_EXPECT_CODE(expr, expected)                                                        \
  do {                                                                                           \
    const auto& store_status_ = (expr);                                                          \
    EXPECT_EQ(::agentckpt::StatusCodeName(::agentckpt::testing::StatusOf(store_status_).code()), \
              ::agentckpt::StatusCodeName(::agentckpt::StatusCode::expected))                    \
        << ::agentckpt::testing::StatusOf(store_status_).ToString();                             \
  } while (0)
