// Identifiers: UUID v4 checkpoint ids and agent ids.
#pragma once

#include <string>
#include <string_view>

#include "common/env.h"
#include "common/status.h"

namespace agentckpt {

// A random RFC 4122 version-4 UUID in lower-case 8-4-4-4-12 form, from env->RandomBytes.
StatusOr<std::string> NewUuidV4(Env* env);

// True for an 8-4-4-4-12 hex UUID whose version nibble is 4 and variant is RFC 4122.
bool IsUuidV4(std::string_view s);

// An agent id is 1-128 characters of [A-Za-z0-9_-], so that it is safe as a NATS subject token,
// a Firestore document id and a file name. Returns kInvalidArgument saying what is wrong.
Status ValidateAgentId(std::string_view id);

}  // namespace agentckpt
