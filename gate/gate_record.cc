#include "gate/gate_record.h"

#include <algorithm>
#include <utility>

#include "common/time_format.h"

namespace agentckpt {

using nlohmann::json;

std::string_view GateStateName(GateState s) {
  switch (s) {
    case GateState::kPending:
      return "pending";
    case GateState::kApproved:
      return "approved";
    case GateState::kRejected:
      return "rejected";
  }
  return "unknown";
}

std::optional<GateState> ParseGateState(std::string_view name) {
  for (GateState s : {GateState::kPending, GateState::kApproved, GateState::kRejected}) {
    if (GateStateName(s) == name) return s;
  }
  return std::nullopt;
}

bool IsValidGateId(std::string_view id) {
  if (id.empty() || id.size() > kGateIdMaxChars) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':';
  });
}

namespace {

json StringOrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json DecisionToJson(const GateDecision& d) {
  return {{"decision", std::string(GateStateName(d.decision))},
          {"by", d.by},
          {"response", d.response},
          {"argsSha256", StringOrNull(d.args_sha256)},
          {"resolvedAt", FormatRfc3339Millis(d.resolved_at_ms)},
          {"expired", d.expired}};
}

// Reads the fields of a stored object, remembering the first problem.
class Reader {
 public:
  Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) Fail("", "expected an object");
  }
  bool ok() const { return status_.ok(); }
  Status status() const { return status_; }
  void Fail(const std::string& key, const std::string& why) {
    if (status_.ok()) status_ = DataLossError("gate " + path_ + key + ": " + why);
  }
  const json* Get(const char* key) {
    if (!ok()) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end()) {
      Fail(key, "missing");
      return nullptr;
    }
    ++seen_;
    return &*it;
  }
  void String(const char* key, std::string* out, bool nullable) {
    const json* v = Get(key);
    if (v == nullptr || (nullable && v->is_null())) return;
    if (!v->is_string()) return Fail(key, "expected a string");
    *out = v->get<std::string>();
  }
  void Time(const char* key, int64_t* out, bool nullable) {
    std::string text;
    String(key, &text, nullable);
    if (!ok() || text.empty()) return;
    auto t = ParseRfc3339Millis(text);
    if (!t.ok()) return Fail(key, t.status().message());
    *out = *t;
  }
  void Bool(const char* key, bool* out) {
    const json* v = Get(key);
    if (v == nullptr) return;
    if (!v->is_boolean()) return Fail(key, "expected a boolean");
    *out = v->get<bool>();
  }
  void Any(const char* key, json* out) {
    const json* v = Get(key);
    if (v != nullptr) *out = *v;
  }
  void State(const char* key, GateState* out) {
    std::string name;
    String(key, &name, false);
    if (!ok()) return;
    auto s = ParseGateState(name);
    if (!s) return Fail(key, "unknown state \"" + name + "\"");
    *out = *s;
  }
  void RejectUnknown() {
    if (ok() && seen_ != j_.size()) Fail("", "unexpected fields");
  }

 private:
  const json& j_;
  std::string path_;
  Status status_;
  size_t seen_ = 0;
};

}  // namespace

json GateToJson(const Gate& g) {
  return {{"gateId", g.gate_id},
          {"state", std::string(GateStateName(g.state))},
          {"reason", g.reason},
          {"request", g.request},
          {"toolCallId", StringOrNull(g.tool_call_id)},
          {"argsSha256", StringOrNull(g.args_sha256)},
          {"createdAt", FormatRfc3339Millis(g.created_at_ms)},
          {"expiresAt", FormatRfc3339Millis(g.expires_at_ms)},
          {"decision", g.decision ? DecisionToJson(*g.decision) : json(nullptr)},
          {"consumed", g.consumed},
          {"consumedAt", g.consumed ? json(FormatRfc3339Millis(g.consumed_at_ms)) : json()}};
}

StatusOr<Gate> GateFromJson(const json& j) {
  std::string id = j.is_object() && j.contains("gateId") && j["gateId"].is_string()
                       ? j["gateId"].get<std::string>() + "."
                       : "";
  Reader r(j, id);
  Gate g;
  r.String("gateId", &g.gate_id, false);
  r.State("state", &g.state);
  r.String("reason", &g.reason, false);
  r.Any("request", &g.request);
  r.String("toolCallId", &g.tool_call_id, true);
  r.String("argsSha256", &g.args_sha256, true);
  r.Time("createdAt", &g.created_at_ms, false);
  r.Time("expiresAt", &g.expires_at_ms, false);
  json decision;
  r.Any("decision", &decision);
  r.Bool("consumed", &g.consumed);
  r.Time("consumedAt", &g.consumed_at_ms, true);
  r.RejectUnknown();
  if (!r.ok()) return r.status();
  if (!IsValidGateId(g.gate_id)) return DataLossError("gate " + id + "gateId: invalid");
  if (!decision.is_null()) {
    Reader d(decision, id + "decision.");
    GateDecision out;
    d.State("decision", &out.decision);
    d.String("by", &out.by, false);
    d.Any("response", &out.response);
    d.String("argsSha256", &out.args_sha256, true);
    d.Time("resolvedAt", &out.resolved_at_ms, false);
    d.Bool("expired", &out.expired);
    d.RejectUnknown();
    if (!d.ok()) return d.status();
    g.decision = std::move(out);
  }
  if ((g.state == GateState::kPending) == g.decision.has_value()) {
    return DataLossError("gate " + id + "state: does not match its decision");
  }
  return g;
}

StatusOr<std::vector<Gate>> GatesFromJson(const json& j) {
  if (!j.is_array()) return DataLossError("gates: expected an array");
  std::vector<Gate> out;
  out.reserve(j.size());
  for (const json& item : j) {
    auto g = GateFromJson(item);
    if (!g.ok()) return g.status();
    out.push_back(std::move(g).value());
  }
  return out;
}

json GatesToJson(const std::vector<Gate>& gates) {
  json out = json::array();
  for (const Gate& g : gates) out.push_back(GateToJson(g));
  return out;
}

void UpsertGate(std::vector<Gate>* gates, Gate g) {
  auto it = std::find_if(gates->begin(), gates->end(),
                         [&](const Gate& x) { return x.gate_id == g.gate_id; });
  if (it != gates->end()) {
    *it = std::move(g);
  } else {
    gates->push_back(std::move(g));
  }
  size_t consumed =
      std::count_if(gates->begin(), gates->end(), [](const Gate& x) { return x.consumed; });
  for (auto at = gates->begin(); consumed > kGateConsumedKept && at != gates->end();) {
    if (at->consumed) {
      at = gates->erase(at);
      --consumed;
    } else {
      ++at;
    }
  }
}

std::string DescribeGateForPrompt(const Gate& g) {
  std::string tool;
  if (!g.tool_call_id.empty()) tool += " tool call " + g.tool_call_id;
  if (!g.args_sha256.empty()) tool += " args sha " + g.args_sha256.substr(0, 16);
  if (!g.decision) {
    return "gate " + g.gate_id + " pending since " + FormatRfc3339Millis(g.created_at_ms) +
           " (expires " + FormatRfc3339Millis(g.expires_at_ms) + "): " + g.reason +
           (tool.empty() ? "" : " [" + tool.substr(1) + "]") + ": wait for the decision";
  }
  const GateDecision& d = *g.decision;
  std::string line = "gate " + g.gate_id + " " + std::string(GateStateName(d.decision)) + " by " +
                     d.by + " at " + FormatRfc3339Millis(d.resolved_at_ms);
  if (d.expired)
    line = "gate " + g.gate_id + " rejected: expired at " + FormatRfc3339Millis(d.resolved_at_ms);
  if (!d.response.is_null()) {
    line += " with response " + d.response.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (d.decision == GateState::kApproved) {
    line += ": proceed with" + (tool.empty() ? std::string(" the gated step") : tool);
  } else {
    line += ": do not proceed" + (tool.empty() ? std::string() : " with" + tool);
  }
  return line + "; then mark it consumed (POST /v1/gates/" + g.gate_id + "/consume)";
}

}  // namespace agentckpt
