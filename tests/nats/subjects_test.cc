// The agent subjects against the literal names of the wire contract (docs/http-api.md, README).
#include "nats/subjects.h"

#include <gtest/gtest.h>

namespace agentckpt::subjects {
namespace {

TEST(SubjectsTest, NamesMatchTheWireContract) {
  const std::string a = "agent-marketing-prod";
  EXPECT_EQ(AgentPrefix(a), "agent.agent-marketing-prod.");
  EXPECT_EQ(AgentAll(a), "agent.agent-marketing-prod.>");
  EXPECT_EQ(Status(a), "agent.agent-marketing-prod.status");
  EXPECT_EQ(CheckpointPrefix(a), "agent.agent-marketing-prod.checkpoint.");
  EXPECT_EQ(CheckpointAll(a), "agent.agent-marketing-prod.checkpoint.>");
  EXPECT_EQ(CheckpointCreate(a), "agent.agent-marketing-prod.checkpoint.create");
  EXPECT_EQ(CheckpointCreated(a), "agent.agent-marketing-prod.checkpoint.created");
  EXPECT_EQ(CheckpointFailed(a), "agent.agent-marketing-prod.checkpoint.failed");
  EXPECT_EQ(CheckpointRestore(a), "agent.agent-marketing-prod.checkpoint.restore");
  EXPECT_EQ(CheckpointRestored(a), "agent.agent-marketing-prod.checkpoint.restored");
  EXPECT_EQ(CheckpointEvent(a, "created"), "agent.agent-marketing-prod.checkpoint.created");
  EXPECT_EQ(InboxAll(a), "agent.agent-marketing-prod.inbox.>");
  EXPECT_STREQ(kInboxTemplate, "agent.{agent}.inbox.>");
}

TEST(SubjectsTest, TheAgentIdIsUsedAsGiven) {
  EXPECT_EQ(Status("a1"), "agent.a1.status");
  EXPECT_EQ(CheckpointRestored("x"), "agent.x.checkpoint.restored");
}

}  // namespace
}  // namespace agentckpt::subjects
