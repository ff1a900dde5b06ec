#include "common/ids.h"

#include <gtest/gtest.h>

#include <set>

#include "common/fake_env.h"

namespace agentckpt {
namespace {

TEST(IdsTest, UuidV4IsWellFormedAndUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto id = NewUuidV4(Env::Default());
    ASSERT_TRUE(id.ok());
    EXPECT_TRUE(IsUuidV4(*id)) << *id;
    EXPECT_TRUE(seen.insert(*id).second);
  }
}

TEST(IdsTest, FakeEnvGivesReproducibleIds) {
  FakeEnv a, b;
  EXPECT_EQ(*NewUuidV4(&a), *NewUuidV4(&b));
}

TEST(IdsTest, RejectsNonV4) {
  EXPECT_TRUE(IsUuidV4("5f0c2a9e-8d7b-4c1e-9a3f-2b6d8e1f4a70"));
  EXPECT_FALSE(IsUuidV4("5f0c2a9e-8d7b-1c1e-9a3f-2b6d8e1f4a70"));  // version 1
  EXPECT_FALSE(IsUuidV4("5f0c2a9e-8d7b-4c1e-1a3f-2b6d8e1f4a70"));  // variant
  EXPECT_FALSE(IsUuidV4("cp-a1b2c3"));
  EXPECT_FALSE(IsUuidV4("5f0c2a9e8d7b-4c1e-9a3f-2b6d8e1f4a70-"));
}

TEST(IdsTest, AgentIds) {
  EXPECT_TRUE(ValidateAgentId("agent-marketing-prod").ok());
  EXPECT_TRUE(ValidateAgentId("A_1").ok());
  EXPECT_FALSE(ValidateAgentId("").ok());
  EXPECT_FALSE(ValidateAgentId("a.b").ok());   // a NATS token separator
  EXPECT_FALSE(ValidateAgentId("a b").ok());
  EXPECT_FALSE(ValidateAgentId("a/b").ok());
  EXPECT_FALSE(ValidateAgentId(std::string(129, 'a')).ok());
}

}  // namespace
}  // namespace agentckpt
