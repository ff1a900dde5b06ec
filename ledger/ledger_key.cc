#include "ledger/ledger_key.h"

#include "common/sha256.h"

namespace agentckpt {

std::string DeriveIdempotencyKey(std::string_view tool_name, std::string_view args_sha256,
                                 std::string_view task_id) {
  std::string material;
  material.reserve(tool_name.size() + args_sha256.size() + task_id.size() + 2);
  material.append(tool_name).append("\n").append(args_sha256).append("\n").append(task_id);
  return "d1:" + Sha256Hex(material);
}

}  // namespace agentckpt
