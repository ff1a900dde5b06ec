// ApplyNatsAuthOptions (nats/nats_options.h): the one place NATS authentication and TLS are set,
// for the sidecar and the CLI alike.
// This test drives nats.c directly (natsOptions_Create): its subject is what ApplyNatsAuthOptions
// sets on a raw natsOptions, so it cannot go through NewNatsOptions (nats/nats_connect.h).
#include "nats/nats_options.h"

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <fstream>
#include <memory>

#include "nats/nats_handles.h"
#include "nats/nkey.h"
#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

nats_handles::OptionsPtr NewOptions() {
  natsOptions* raw = nullptr;
  EXPECT_EQ(natsOptions_Create(&raw), NATS_OK);
  return nats_handles::OptionsPtr(raw);
}

TEST(NatsOptionsTest, TheNKeyIsDerivedFromTheSeedWhenNotGiven) {
  testing::TempDir dir;
  const std::string seed = EncodeNKeySeed(kNKeyUserPrefix, std::string(32, '\x07'));
  std::ofstream(dir.File("user.nk")) << seed << "\n";
  NatsAuthOptions auth;
  auth.nkey_seed_file = dir.File("user.nk");
  auto opts = NewOptions();
  Status s = ApplyNatsAuthOptions(opts.get(), auth);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(SignsNonce(auth));
}

TEST(NatsOptionsTest, ADamagedSeedNamesTheSetting) {
  testing::TempDir dir;
  std::ofstream(dir.File("user.nk")) << "not a seed\n";
  NatsAuthOptions auth;
  auth.nkey_seed_file = dir.File("user.nk");
  auto opts = NewOptions();
  Status s = ApplyNatsAuthOptions(opts.get(), auth);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("NATS_NKEY_SEED: ", 0), 0u) << s.message();
}

TEST(NatsOptionsTest, AMissingCaFileNamesTheSetting) {
  NatsAuthOptions auth;
  auth.tls_ca_file = "/nonexistent/ca.pem";
  auto opts = NewOptions();
  Status s = ApplyNatsAuthOptions(opts.get(), auth);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("NATS_TLS_CA: ", 0), 0u) << s.message();
  EXPECT_FALSE(SignsNonce(auth));
}

}  // namespace
}  // namespace agentckpt
