// FirestoreStore under injected faults: 20% HTTP 503, requests delayed past the client's
// timeout (and applied), and connections dropped after the request was applied. Every Put that
// returned OK must read back and verify; nothing half-written may ever be visible.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <set>
#include <thread>

#include "store/firestore/firestore_store.h"
#include "tests/firestore/emulator_process.h"
#include "tests/store/store_test_util.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr int64_t kRequestTimeoutMs = 300;
const json kFaults = {{"errorRate", 0.20},
                      {"errorStatus", 503},
                      {"delayRate", 0.05},
                      {"delayMs", 600},
                      {"dropRate", 0.05}};

struct Outcome {
  std::set<int64_t> confirmed;    // Put returned OK
  std::set<int64_t> unconfirmed;  // Put failed (it may or may not have been applied)
};

// Puts sequences [first, last] of `agent` through `store`, moving on after a failure as the
// sidecar does (a sequence number is never retried with different content).
Outcome PutRange(FirestoreStore* store, const std::string& agent, int first, int last, int keep) {
  Outcome out;
  PutOptions opts;
  opts.keep = keep;
  for (int seq = first; seq <= last; ++seq) {
    auto r = store->Put(SealedAt(agent, seq), opts);
    if (r.ok()) {
      out.confirmed.insert(seq);
    } else {
      EXPECT_TRUE(r.status().code() == StatusCode::kUnavailable ||
                  r.status().code() == StatusCode::kDeadlineExceeded ||
                  r.status().code() == StatusCode::kAlreadyExists)
          << r.status().ToString();
      out.unconfirmed.insert(seq);
    }
  }
  return out;
}

class FirestoreFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(emulator_.Start().ok());
    store_ = OpenEmulatorStore(emulator_.host_port(), "faults", kRequestTimeoutMs, 20'000);
    clean_ = OpenEmulatorStore(emulator_.host_port(), "faults");
  }

  // Reads with faults switched off.
  void ExpectAllVisibleVerify(const std::string& agent, const Outcome& outcome) {
    auto listed = clean_->List(agent, 1000);
    STORE_ASSERT_OK(listed);
    for (const CheckpointInfo& info : *listed) {
      EXPECT_TRUE(outcome.confirmed.count(info.sequence_number) ||
                  outcome.unconfirmed.count(info.sequence_number))
          << "unknown sequence " << info.sequence_number;
      auto cp = clean_->GetById(agent, info.checkpoint_id);
      EXPECT_TRUE(cp.ok()) << "visible checkpoint " << info.sequence_number
                           << " does not verify: " << cp.status().ToString();
    }
  }

  EmulatorProcess emulator_;
  std::unique_ptr<FirestoreStore> store_;
  std::unique_ptr<FirestoreStore> clean_;
};

TEST_F(FirestoreFaultTest, EveryConfirmedCheckpointReadsBackAndVerifies) {
  ASSERT_TRUE(emulator_.SetFaults(kFaults).ok());
  // A reader polls concurrently (through the faults) and must never see a broken checkpoint.
  std::atomic<bool> stop{false};
  std::atomic<int> reader_checks{0};
  auto reader_store = OpenEmulatorStore(emulator_.host_port(), "faults", kRequestTimeoutMs, 5000);
  std::thread reader([&] {
    while (!stop.load()) {
      auto latest = reader_store->GetLatestVerified("agent-f");
      if (latest.ok()) {
        EXPECT_TRUE(latest->skipped.empty()) << latest->skipped[0].reason;
        reader_checks.fetch_add(1);
      } else {
        StatusCode c = latest.status().code();
        EXPECT_TRUE(c == StatusCode::kNotFound || c == StatusCode::kUnavailable ||
                    c == StatusCode::kDeadlineExceeded)
            << latest.status().ToString();
      }
    }
  });
  Outcome outcome = PutRange(store_.get(), "agent-f", 1, 60, /*keep=*/1000);
  stop = true;
  reader.join();
  ASSERT_TRUE(emulator_.SetFaults(json::object()).ok());

  auto stats = emulator_.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_GT((*stats)["errors"].get<int>(), 0);
  EXPECT_GT((*stats)["delays"].get<int>() + (*stats)["drops"].get<int>(), 0);
  EXPECT_GT(reader_checks.load(), 0);
  std::printf("faults: %s; confirmed %zu, failed %zu, reader checks %d\n", stats->dump().c_str(),
              outcome.confirmed.size(), outcome.unconfirmed.size(), reader_checks.load());
  EXPECT_GE(outcome.confirmed.size(), 50u) << "retries should absorb most faults";

  for (int64_t seq : outcome.confirmed) {
    auto cp = clean_->GetBySequence("agent-f", seq);
    ASSERT_TRUE(cp.ok()) << "confirmed checkpoint " << seq << ": " << cp.status().ToString();
    ExpectSameCheckpoint(*cp, SealedAt("agent-f", seq).doc);
  }
  ExpectAllVisibleVerify("agent-f", outcome);
  auto latest = clean_->GetLatestVerified("agent-f");
  STORE_ASSERT_OK(latest);
  EXPECT_TRUE(latest->skipped.empty());
  EXPECT_GE(latest->checkpoint.sequence_number, *outcome.confirmed.rbegin());
}

TEST_F(FirestoreFaultTest, RetentionUnderFaultsNeverDropsTheNewestConfirmed) {
  ASSERT_TRUE(emulator_.SetFaults(kFaults).ok());
  const int keep = 5;
  Outcome outcome = PutRange(store_.get(), "agent-r", 1, 40, keep);
  ASSERT_TRUE(emulator_.SetFaults(json::object()).ok());
  ExpectAllVisibleVerify("agent-r", outcome);
  // The newest confirmed checkpoint is always still there.
  ASSERT_FALSE(outcome.confirmed.empty());
  STORE_ASSERT_OK(clean_->GetBySequence("agent-r", *outcome.confirmed.rbegin()));
  // One clean Put settles retention to exactly `keep`.
  STORE_ASSERT_OK(store_->Put(SealedAt("agent-r", 41), PutOptions(keep)));
  auto listed = clean_->List("agent-r", 1000);
  STORE_ASSERT_OK(listed);
  EXPECT_EQ(listed->size(), static_cast<size_t>(keep));
  EXPECT_EQ((*listed)[0].sequence_number, 41);
}

}  // namespace
}  // namespace agentckpt::testing
