// Fuzzes the approval-gate decoders with arbitrary bytes taken as JSON: a gate request body
// (POST /v1/gates), a resolution (HTTP and agent.{id}.gate.resolve) and the stored gates array of
// a checkpoint. Invariants checked: nothing throws, crashes or leaks; a gate the rules create
// or resolve survives its stored form unchanged (GateFromJson(GateToJson(g)) == g); the same
// resolution twice changes nothing the second time; a stored array that parses re-encodes to
// an array that parses to the same gates.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "gate/gate_record.h"
#include "gate/gate_rules.h"

namespace {

void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

constexpr int64_t kNowMs = 1790000000000;

void CheckStoredForm(const agentckpt::Gate& g) {
  auto again = agentckpt::GateFromJson(agentckpt::GateToJson(g));
  Require(again.ok() && *again == g, "GateFromJson(GateToJson(g)) == g");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace agentckpt;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;

  if (auto gates = GatesFromJson(j); gates.ok()) {
    auto again = GatesFromJson(GatesToJson(*gates));
    Require(again.ok() && *again == *gates, "stored gates round trip");
  }
  if (auto g = GateFromJson(j); g.ok()) CheckStoredForm(*g);

  // A gate made from the body (as a request), then resolved with the same body (as a
  // resolution), then consumed.
  Gate gate;
  gate.gate_id = "gate-1";
  gate.reason = "approve the refund";
  gate.created_at_ms = kNowMs - 1000;
  gate.expires_at_ms = kNowMs + 60000;
  if (auto in = ParseGateRequest(j); in.ok()) {
    auto made = RequestGate({}, *in, kNowMs, 86400, "gate-1");
    if (made.ok()) {
      CheckStoredForm(made->gate);
      gate = made->gate;
    }
  }
  if (auto r = ParseGateResolution(j, ""); r.ok()) {
    if (std::optional<Gate> expired = ExpireIfDue(gate, kNowMs)) gate = *expired;
    auto first = ResolveGate(gate, *r, kNowMs);
    if (first.ok()) {
      CheckStoredForm(first->gate);
      auto second = ResolveGate(first->gate, *r, kNowMs + 1);
      Require(second.ok() && !second->changed && second->gate == first->gate,
              "the same resolution again changes nothing");
      auto consumed = ConsumeGate(first->gate, kNowMs + 2);
      if (consumed.ok()) CheckStoredForm(consumed->gate);
    }
  }
  return 0;
}
