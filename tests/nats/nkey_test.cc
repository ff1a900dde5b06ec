#include "nats/nkey.h"

#include <gtest/gtest.h>

namespace agentckpt {
namespace {

TEST(SidecarNKeyTest, PublicKeyOfASeed) {
  std::string raw(32, '\x07');
  std::string seed = EncodeNKeySeed(kNKeyUserPrefix, raw);
  ASSERT_EQ(seed.size(), 58u);
  EXPECT_EQ(seed.substr(0, 2), "SU");
  auto pub = NKeyPublicFromSeedText("-----BEGIN USER NKEY SEED-----\n" + seed +
                                    "\n------END USER NKEY SEED------\n");
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  EXPECT_EQ(pub->size(), 56u);
  EXPECT_EQ((*pub)[0], 'U');
  // Another seed, another key; the same seed, the same key.
  EXPECT_NE(*NKeyPublicFromSeedText(EncodeNKeySeed(kNKeyUserPrefix, std::string(32, '\x08'))),
            *pub);
  EXPECT_EQ(*NKeyPublicFromSeedText(seed), *pub);
}

TEST(SidecarNKeyTest, DamagedSeedsAreRejected) {
  std::string seed = EncodeNKeySeed(kNKeyUserPrefix, std::string(32, '\x07'));
  std::string flipped = seed;
  flipped[10] = flipped[10] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(NKeyPublicFromSeedText(flipped).ok());
  EXPECT_FALSE(NKeyPublicFromSeedText("").ok());
  EXPECT_FALSE(NKeyPublicFromSeedText(std::string(58, 'S')).ok());
  std::string bad_char = seed;
  bad_char[20] = '1';
  EXPECT_FALSE(NKeyPublicFromSeedText(bad_char).ok());
}

}  // namespace
}  // namespace agentckpt
