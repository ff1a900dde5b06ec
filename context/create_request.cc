#include "context/create_request.h"

#include <nlohmann/json.hpp>
#include <optional>

namespace agentckpt {

namespace {

std::optional<nlohmann::json> ParseObject(std::string_view payload) {
  nlohmann::json body =
      nlohmann::json::parse(payload.empty() ? std::string_view("{}") : payload, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return std::nullopt;
  return body;
}

// "manual" or "pre_compaction", the only triggers a request may ask for.
std::optional<TriggerReason> RequestTrigger(const nlohmann::json& value) {
  auto parsed = value.is_string() ? ParseTriggerReason(value.get<std::string>()) : std::nullopt;
  if (!parsed || (*parsed != TriggerReason::kManual && *parsed != TriggerReason::kPreCompaction)) {
    return std::nullopt;
  }
  return parsed;
}

}  // namespace

StatusOr<CreateRequest> ParseCreateRequest(std::string_view payload, std::string* field) {
  auto reject = [field](const std::string& name, const std::string& reason) {
    if (field != nullptr) *field = name;
    return InvalidArgumentError(name + ": " + reason);
  };
  std::optional<nlohmann::json> body = ParseObject(payload);
  if (!body) {
    Status s = reject("payload", "expected a JSON object");
    if (field != nullptr) field->clear();  // the whole payload
    return s;
  }
  CreateRequest req;
  // Members in the order of their names (the object keeps them sorted).
  for (const auto& [key, value] : body->items()) {
    if (key == "taskId") {
      if (!value.is_string()) return reject(key, "expected a string");
      req.task_id = value.get<std::string>();
    } else if (key == "trigger") {
      std::optional<TriggerReason> trigger = RequestTrigger(value);
      if (!trigger) return reject(key, "expected \"manual\" or \"pre_compaction\"");
      req.trigger = *trigger;
    } else {
      // An empty member name is spelled "" so that it cannot read as "the whole payload".
      return reject(key.empty() ? "\"\"" : key, "unknown field");
    }
  }
  return req;
}

TriggerReason RequestedTrigger(std::string_view payload) {
  std::optional<nlohmann::json> body = ParseObject(payload);
  if (!body) return TriggerReason::kManual;
  auto member = body->find("trigger");
  if (member == body->end()) return TriggerReason::kManual;
  return RequestTrigger(*member).value_or(TriggerReason::kManual);
}

}  // namespace agentckpt
