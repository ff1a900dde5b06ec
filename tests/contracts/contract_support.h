// Helpers for the contract tests: run the Node validators under validate/, capture every message
// a sidecar publishes on agent.{id}.>, and inject store faults through a second SQLite
// connection to the sidecar's database file.
#pragma once

#include <nats/nats.h>
#include <sqlite3.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace agentckpt::testing {

struct ValidatorRun {
  int exit_code = -1;  // the validator's exit code; -1 if it could not be run
  std::string output;  // stdout and stderr
};

// Runs `node validate/<script> <input_file>` in tests/contracts (installing the pinned npm
// packages first when node_modules is missing or older than package-lock.json), with `env`
// (NAME -> value) added to its environment.
ValidatorRun RunValidator(const std::string& script, const std::string& input_file,
                          const std::map<std::string, std::string>& env = {});

// One HTTP request to 127.0.0.1:port and its answer. Never throws.
struct HttpExchange {
  std::string method, path, body, content_type;
  std::map<std::string, std::string> request_headers;
  int status = 0;  // 0 when the request could not be made
  std::map<std::string, std::string> headers;
  std::string response;
};
HttpExchange Http(int port, HttpExchange request);

// Writes `j` to `path` (pretty-printed). Returns false if the file cannot be written.
bool WriteJsonFile(const std::string& path, const nlohmann::json& j);

struct CapturedMessage {
  std::string subject;
  std::string data;
};

// A NATS connection that records every message on one subject pattern (e.g. "agent.x.>") and
// makes requests. Thread-safe.
class NatsCapture {
 public:
  NatsCapture() = default;
  ~NatsCapture();
  NatsCapture(const NatsCapture&) = delete;
  NatsCapture& operator=(const NatsCapture&) = delete;

  // Connects to `url` and subscribes to `pattern`; flushes so the subscription is in place
  // before returning. Returns an empty string on success, else the problem.
  std::string Start(const std::string& url, const std::string& pattern);
  // Sends a request and returns the reply's payload; sets `*ok` false on a timeout or error.
  std::string Request(const std::string& subject, const std::string& payload, int timeout_ms,
                      bool* ok);
  // Messages seen so far, in arrival order.
  std::vector<CapturedMessage> Messages() const;
  // Polls until at least `count` messages on `subject` were seen (true) or `timeout_ms` passes.
  bool WaitFor(const std::string& subject, size_t count, int timeout_ms) const;
  size_t Count(const std::string& subject) const;

 private:
  static void OnMessage(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure);
  natsConnection* nc_ = nullptr;
  natsSubscription* sub_ = nullptr;
  mutable std::mutex mu_;
  std::vector<CapturedMessage> messages_;
};

// A second connection to a SQLite database file, to make the sidecar's store fail the way a
// real fault would (a trigger that aborts inserts, a table that disappears, a held write lock).
class SqliteFaults {
 public:
  explicit SqliteFaults(const std::string& path);
  ~SqliteFaults();
  SqliteFaults(const SqliteFaults&) = delete;
  SqliteFaults& operator=(const SqliteFaults&) = delete;
  // Runs `sql`; returns "" on success, else SQLite's message.
  std::string Exec(const std::string& sql);

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace agentckpt::testing
