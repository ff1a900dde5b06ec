// Access to the reference checkpoint documents (tests/fixtures/) and to valid test checkpoints.
#pragma once

#include <string>

#include "checkpoint/checkpoint.h"

namespace agentckpt::testing {

// Path of a reference fixture: $AGENTCKPT_FIXTURES_DIR/NAME if that variable is set, else
// tests/fixtures/NAME in this source tree (AGENTCKPT_FIXTURES_DIR in CMake).
std::string SharedFixturePath(const std::string& name);
// The file's contents; aborts the test binary if it is missing (a broken test setup).
std::string ReadSharedFixture(const std::string& name);
// The fixture decoded as a checkpoint (the reference fixtures carry no hash or expireAt).
Checkpoint LoadFixtureCheckpoint(const std::string& name);
// A small valid checkpoint for `agent_id` at `sequence`, with a fresh UUID derived from both.
Checkpoint MakeCheckpoint(const std::string& agent_id, int64_t sequence);

}  // namespace agentckpt::testing
