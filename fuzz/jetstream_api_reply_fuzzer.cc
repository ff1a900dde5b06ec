// Fuzzes the replay's reading of JetStream API replies (replay/jetstream_info.h): the JSON of a
// consumer info, a stream info and a stream message get ($JS.API.STREAM.MSG.GET with
// next_by_subj, the replay's probe), each taken from a NATS message built from the input.
//
// Invariants: nothing crashes or leaks; every failure has one of the documented codes and names
// the request; a reply that is not a JSON object fails kInternal; a decoded probe is 0 only for
// JetStream's "no message found" (10037) and otherwise the reply's own message.seq; a decoded
// stream state and durable info carry the reply's own numbers.
#include <nats/nats.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "replay/jetstream_info.h"

namespace {

using namespace agentckpt;
using nlohmann::json;

void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\n", what);
  std::abort();
}

// What the reply's JSON says at object.key, as the decoders read it (0 when absent or not an
// unsigned number). Independent of the decoders: it walks the parsed document itself.
uint64_t Number(const json& j, const char* object, const char* key) {
  if (!j.is_object()) return 0;
  auto o = j.find(object);
  if (o == j.end() || !o->is_object()) return 0;
  auto v = o->find(key);
  return v != o->end() && v->is_number_unsigned() ? v->get<uint64_t>() : 0;
}

// The reply's error.err_code, 0 when absent, not an integer or out of an int's range.
int64_t ErrCode(const json& j) {
  if (!j.is_object()) return 0;
  auto e = j.find("error");
  if (e == j.end() || !e->is_object()) return 0;
  auto c = e->find("err_code");
  if (c == e->end() || !c->is_number_integer()) return 0;
  if (c->is_number_unsigned()) {
    return c->get<uint64_t>() > uint64_t{INT32_MAX} ? 0 : c->get<int64_t>();
  }
  const int64_t v = c->get<int64_t>();
  return v < INT32_MIN ? 0 : v;
}

bool HasError(const json& j) {
  return j.is_object() && j.contains("error") && j["error"].is_object();
}

void RequireDocumentedFailure(const Status& s, const json& j) {
  const StatusCode c = s.code();
  Require(c == StatusCode::kNotFound || c == StatusCode::kUnavailable ||
              c == StatusCode::kFailedPrecondition || c == StatusCode::kInternal,
          "a failure has a documented code");
  Require(s.message().rfind("replay: what: ", 0) == 0, "a failure names the request");
  Require(j.is_object() || c == StatusCode::kInternal, "a non-object reply is kInternal");
  Require(!j.is_object() || HasError(j) || c == StatusCode::kInternal,
          "an object without an error fails only for a missing field");
}

}  // namespace

// nats.c's messages need the library opened (its message pool and garbage collector).
extern "C" int LLVMFuzzerInitialize(int*, char***) { return nats_Open(-1) == NATS_OK ? 0 : 1; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  natsMsg* msg = nullptr;
  if (natsMsg_Create(&msg, "_INBOX.fuzz.1", nullptr, reinterpret_cast<const char*>(data),
                     static_cast<int>(size)) != NATS_OK) {
    return 0;
  }
  const json j = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);

  StatusOr<uint64_t> next = ParseNextSequence(msg, "what");
  if (next.ok()) {
    if (*next == 0) {
      Require(ErrCode(j) == 10037, "no next message only for JetStream's no message found");
    } else {
      Require(!HasError(j) && *next == Number(j, "message", "seq"),
              "the next sequence is the reply's message.seq");
    }
  } else {
    RequireDocumentedFailure(next.status(), j);
    Require(ErrCode(j) != 10037, "no message found is not a failure");
  }

  StatusOr<StreamState> state = ParseStreamState(msg, "what");
  if (state.ok()) {
    Require(j.is_object() && !HasError(j), "a decoded stream state is an object without error");
    Require(state->first_seq == Number(j, "state", "first_seq") &&
                state->last_seq == Number(j, "state", "last_seq"),
            "the stream state is the reply's own");
  } else {
    RequireDocumentedFailure(state.status(), j);
  }

  StatusOr<DurableInfo> info = ParseDurableInfo(msg, "what");
  if (info.ok()) {
    Require(j.is_object() && !HasError(j), "a decoded durable is an object without error");
    Require(info->ack_floor == Number(j, "ack_floor", "stream_seq") &&
                info->delivered_stream == Number(j, "delivered", "stream_seq"),
            "the durable's sequences are the reply's own");
    for (const std::string& f : info->filter_subjects) Require(!f.empty(), "no empty filter");
  } else {
    RequireDocumentedFailure(info.status(), j);
  }
  natsMsg_Destroy(msg);
  return 0;
}
