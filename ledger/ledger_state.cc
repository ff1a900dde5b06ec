#include "ledger/ledger_state.h"

#include <algorithm>

#include "checkpoint/ledger_json.h"
#include "common/time_format.h"

namespace agentckpt {

using nlohmann::json;

std::string_view ReconcileOutcomeName(ReconcileOutcome o) {
  switch (o) {
    case ReconcileOutcome::kSucceeded:
      return "succeeded";
    case ReconcileOutcome::kFailed:
      return "failed";
    case ReconcileOutcome::kNotExecuted:
      return "not_executed";
  }
  return "failed";
}

std::optional<ReconcileOutcome> ParseReconcileOutcome(std::string_view name) {
  for (ReconcileOutcome o :
       {ReconcileOutcome::kSucceeded, ReconcileOutcome::kFailed, ReconcileOutcome::kNotExecuted}) {
    if (ReconcileOutcomeName(o) == name) return o;
  }
  return std::nullopt;
}

namespace {

template <typename Calls, typename Pred>
auto FindIn(Calls& calls, Pred pred) {
  return std::find_if(calls.begin(), calls.end(), pred);
}

StatusOr<std::string> StringField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) {
    return InvalidArgumentError(std::string(key) + ": expected a string");
  }
  return it->get<std::string>();
}

StatusOr<int64_t> TimeField(const json& j, const char* key) {
  auto text = StringField(j, key);
  if (!text.ok()) return text.status();
  return ParseRfc3339Millis(*text);
}

}  // namespace

const LedgerCall* LedgerState::FindKey(std::string_view key) const {
  auto by_key = [&](const LedgerCall& c) { return c.idempotency_key == key; };
  if (auto it = FindIn(ledger_.open, by_key); it != ledger_.open.end()) return &*it;
  if (auto it = FindIn(ledger_.completed, by_key); it != ledger_.completed.end()) return &*it;
  return nullptr;
}

const LedgerCall* LedgerState::FindCall(std::string_view call_id) const {
  auto by_id = [&](const LedgerCall& c) { return c.call_id == call_id; };
  if (auto it = FindIn(ledger_.open, by_id); it != ledger_.open.end()) return &*it;
  if (auto it = FindIn(ledger_.completed, by_id); it != ledger_.completed.end()) return &*it;
  return nullptr;
}

json LedgerState::BeginPayload(const LedgerCall& call) { return LedgerCallToJsonValue(call); }

json LedgerState::EndPayload(const std::string& call_id, const LedgerResult& result,
                             int64_t ended_at_ms) {
  LedgerCall shape;
  shape.result = result;
  return json{{"callId", call_id},
              {"endedAt", FormatRfc3339Millis(ended_at_ms)},
              {"result", LedgerCallToJsonValue(shape)["result"]}};
}

json LedgerState::ReconcilePayload(const std::string& call_id, ReconcileOutcome outcome,
                                   const std::string& output_summary, const std::string& note,
                                   int64_t at_ms) {
  return json{{"callId", call_id},
              {"outcome", ReconcileOutcomeName(outcome)},
              {"outputSummary", output_summary},
              {"note", note},
              {"at", FormatRfc3339Millis(at_ms)}};
}

Status LedgerState::Apply(std::string_view kind, const json& payload,
                          std::optional<LedgerCall>* completed) {
  if (completed != nullptr) completed->reset();
  if (!payload.is_object()) return InvalidArgumentError("payload: expected an object");
  if (kind == kLedgerBeginKind) {
    auto call = LedgerCallFromJsonValue(payload, "");
    if (!call.ok()) return call.status();
    if (call->state != LedgerCallState::kStarted || call->result) {
      return InvalidArgumentError("state: a begun call is started, without a result");
    }
    if (FindKey(call->idempotency_key) != nullptr) {
      return AlreadyExistsError("idempotency key " + call->idempotency_key + " is taken");
    }
    if (FindCall(call->call_id) != nullptr) {
      return AlreadyExistsError("call " + call->call_id + " exists");
    }
    ledger_.open.push_back(std::move(call).value());
    return OkStatus();
  }
  auto call_id = StringField(payload, "callId");
  if (!call_id.ok()) return call_id.status();
  auto open = FindIn(ledger_.open, [&](const LedgerCall& c) { return c.call_id == *call_id; });
  if (open == ledger_.open.end()) return NotFoundError("call " + *call_id + " is not open");
  LedgerCall done = *open;
  if (kind == kLedgerEndKind) {
    auto ended = TimeField(payload, "endedAt");
    if (!ended.ok()) return ended.status();
    json shape_json = LedgerCallToJsonValue(LedgerCall{});
    shape_json["result"] = payload.value("result", json());
    auto shape = LedgerCallFromJsonValue(shape_json, "");
    if (!shape.ok()) return shape.status();
    if (!shape->result) return InvalidArgumentError("result: expected an object");
    done.result = shape->result;
    done.ended_at_ms = *ended;
  } else if (kind == kLedgerReconcileKind) {
    auto outcome_name = StringField(payload, "outcome");
    auto summary = StringField(payload, "outputSummary");
    auto note = StringField(payload, "note");
    auto at = TimeField(payload, "at");
    for (const Status& s : {outcome_name.status(), summary.status(), note.status(), at.status()}) {
      if (!s.ok()) return s;
    }
    auto outcome = ParseReconcileOutcome(*outcome_name);
    if (!outcome) return InvalidArgumentError("outcome: unknown \"" + *outcome_name + "\"");
    if (*outcome == ReconcileOutcome::kNotExecuted) {
      ledger_.open.erase(open);  // the key is free again
      return OkStatus();
    }
    done.result = LedgerResult{*outcome == ReconcileOutcome::kSucceeded,
                               summary->empty() ? *note : *summary, 0, "", true};
    done.ended_at_ms = *at;
  } else {
    return InvalidArgumentError("kind: not a ledger kind");
  }
  done.state = LedgerCallState::kCompleted;
  ledger_.open.erase(open);
  ledger_.completed.push_back(done);
  if (completed != nullptr) *completed = std::move(done);
  return OkStatus();
}

int LedgerState::MarkOpenOutcomeUnknown() {
  for (LedgerCall& c : ledger_.open) c.state = LedgerCallState::kOutcomeUnknown;
  return static_cast<int>(ledger_.open.size());
}

void LedgerState::Trim(const LedgerLimits& limits, int64_t now_ms) {
  auto& done = ledger_.completed;
  size_t drop = 0;
  const size_t keep = static_cast<size_t>(std::max<int64_t>(0, limits.keep_keys));
  if (done.size() > keep) drop = done.size() - keep;
  while (drop < done.size() && now_ms - done[drop].ended_at_ms > limits.keep_ms) ++drop;
  done.erase(done.begin(), done.begin() + static_cast<std::ptrdiff_t>(drop));
}

std::vector<LedgerCall> LedgerState::List(LedgerCallState state) const {
  std::vector<LedgerCall> out;
  if (state == LedgerCallState::kCompleted) {
    out.assign(ledger_.completed.rbegin(), ledger_.completed.rend());
    return out;
  }
  for (const LedgerCall& c : ledger_.open) {
    if (c.state == state) out.push_back(c);
  }
  return out;
}

ToolCallEntry ToolCallEntryOf(const LedgerCall& call) {
  ToolCallEntry e;
  e.tool_name = call.tool_name;
  e.timestamp_ms = call.ended_at_ms > 0 ? call.ended_at_ms : call.began_at_ms;
  e.input_summary = call.input_summary;
  if (call.result) {
    e.output_summary = call.result->output_summary;
    e.duration_ms = call.result->duration_ms;
    e.success = call.result->success;
  }
  return e;
}

}  // namespace agentckpt
