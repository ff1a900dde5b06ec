// EmulatorServer: a Firestore-compatible REST v1 server on cpprestsdk's http_listener, backed
// by a DocumentDb, with fault injection.
//
// Firestore surface (under /v1/): documents get (GET), patch (PATCH with updateMask.fieldPaths
// and currentDocument.* query parameters), delete (DELETE), list (GET on a collection),
// :commit, :batchGet, :runQuery, :beginTransaction and :rollback. Errors use Firestore's
// {"error":{"code","message","status"}} body and HTTP status.
//
// Emulator control (not Firestore): GET / answers "Ok"; DELETE
// /emulator/v1/projects/P/databases/D/documents clears a database (as Google's emulator does);
// GET /emulator/v1/stats returns request and fault counters and the writes per document
// ("documentWrites", see DocumentDb::WriteCounts), DELETE resets them; PUT
// /emulator/v1/faults replaces the fault settings with a FaultConfig JSON object.
//
// Faults, drawn per /v1/ request from a seeded generator: with `drop_rate` the request is
// processed and the connection then dropped without a complete reply (the client cannot tell
// whether it was applied); with `error_rate` it is refused with `error_status` before being
// processed; with `delay_rate` it is processed after `delay_ms` (past a client's timeout this is
// a timed-out request that was applied). Before any draw, the requests take the faults of
// `script` in order, one entry each: "none", "error", "delay", "drop", or "late-reply" (processed
// at once, its reply sent after `delay_ms`: an applied request whose answer is slow). Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools/firestore_emulator/document_db.h"

namespace agentckpt::emulator {

struct FaultConfig {
  double error_rate = 0;
  int error_status = 503;
  double delay_rate = 0;
  int delay_ms = 0;
  double drop_rate = 0;
  std::vector<std::string> script;  // faults of the next requests, in order (see above)
  // When set, only requests whose path or body contains it draw faults (script entries
  // included); the others are served untouched. E.g. "\"collectionId\":\"snapshots\"" fails
  // the checkpoint queries and spares the lease and the journal.
  std::string match;
};

// FaultConfig <-> {"errorRate", "errorStatus", "delayRate", "delayMs", "dropRate", "script",
// "match"};
// kInvalidArgument for an unknown script entry.
nlohmann::json FaultConfigToJson(const FaultConfig& f);
StatusOr<FaultConfig> FaultConfigFromJson(const nlohmann::json& j);

class EmulatorServer {
 public:
  EmulatorServer(std::string host, int port, FaultConfig faults, uint64_t seed);
  ~EmulatorServer();

  // Starts listening. kUnavailable if the address cannot be bound.
  Status Start();
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentckpt::emulator
