#include "http/request_body.h"

#include "checkpoint/json_value.h"

namespace agentckpt {

StatusOr<nlohmann::json> ParseRequestBody(std::string_view body) {
  auto parsed = ParseJsonValue(body);
  if (!parsed.ok()) return InvalidArgumentError("document: malformed JSON (or not UTF-8)");
  return parsed;
}

}  // namespace agentckpt
