// Helpers shared by the encryption tests: keys written to files, distinctive plaintext.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "checkpoint/canonical.h"
#include "crypto/keyring.h"
#include "tests/support/fixtures.h"

namespace agentckpt::testing {

// A distinct 64-hex-character key per `seed`.
inline std::string HexKey(char seed) {
  std::string hex;
  const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 64; ++i) hex.push_back(digits[(seed * 7 + i * 13) % 16]);
  return hex;
}

inline void WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  ASSERT_TRUE(f.good()) << path;
}

inline crypto::EncryptionKey KeyFromSeed(char seed) {
  auto key = crypto::ParseKey(HexKey(seed));
  EXPECT_TRUE(key.ok()) << key.status().ToString();
  return *key;
}

// A string that appears nowhere but in the summary it is put into.
inline constexpr char kSecretMarker[] = "PLAINTEXT-MARKER-7c1f0a9e-do-not-store";

// A sealed checkpoint whose summary carries kSecretMarker in each of its text fields.
inline SealedCheckpoint SealedWithMarker(const std::string& agent_id, int64_t sequence) {
  Checkpoint cp = MakeCheckpoint(agent_id, sequence);
  cp.context_summary.gathering_results = std::string("found ") + kSecretMarker;
  cp.context_summary.draft_content = std::string("draft ") + kSecretMarker;
  cp.context_summary.plan_outline = {std::string("step ") + kSecretMarker, "second step"};
  auto sealed = Seal(cp);
  EXPECT_TRUE(sealed.ok()) << sealed.status().ToString();
  return *sealed;
}

}  // namespace agentckpt::testing
