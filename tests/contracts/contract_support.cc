#include "tests/contracts/contract_support.h"

#include <cpprest/http_client.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "nats/nats_connect.h"
#include "nats/nats_handles.h"

namespace agentckpt::testing {

namespace {

std::string ContractsDir() {
  const char* src = std::getenv("AGENTCKPT_SOURCE_DIR");
  return std::string(src != nullptr ? src : ".") + "/tests/contracts";
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

ValidatorRun RunValidator(const std::string& script, const std::string& input_file,
                          const std::map<std::string, std::string>& env) {
  ValidatorRun run;
  std::string cmd;
  for (const auto& [k, v] : env) cmd += k + "=" + ShellQuote(v) + " ";
  cmd += "bash " + ShellQuote(ContractsDir() + "/run_node.sh") + " " +
         ShellQuote("validate/" + script) + " " + ShellQuote(input_file) + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return run;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) run.output.append(buf.data(), n);
  int status = ::pclose(p);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

HttpExchange Http(int port, HttpExchange ex) {
  try {
    web::http::client::http_client_config cfg;
    cfg.set_timeout(std::chrono::seconds(20));
    web::http::client::http_client client("http://127.0.0.1:" + std::to_string(port), cfg);
    web::http::http_request req(ex.method);
    req.set_request_uri(ex.path);
    for (const auto& [k, v] : ex.request_headers) req.headers().add(k, v);
    if (!ex.body.empty()) {
      req.set_body(ex.body, ex.content_type.empty() ? "application/json" : ex.content_type);
    }
    web::http::http_response resp = client.request(req).get();
    ex.status = resp.status_code();
    ex.response = resp.extract_utf8string(true).get();
    for (const auto& [k, v] : resp.headers()) ex.headers[k] = v;
  } catch (const std::exception& e) {
    ex.status = 0;
    ex.response = e.what();
  }
  return ex;
}

bool WriteJsonFile(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  return static_cast<bool>(out);
}

NatsCapture::~NatsCapture() {
  agentckpt::nats_handles::UnsubscribeAndDestroy(nc_, sub_);
  if (nc_ != nullptr) natsConnection_Destroy(nc_);
}

std::string NatsCapture::Start(const std::string& url, const std::string& pattern) {
  auto connected = ConnectNatsUrl(url);
  if (!connected.ok()) return "connect: " + connected.status().ToString();
  nc_ = connected->release();
  natsStatus s =
      natsConnection_Subscribe(&sub_, nc_, pattern.c_str(), &NatsCapture::OnMessage, this);
  if (s != NATS_OK) return std::string("subscribe: ") + natsStatus_GetText(s);
  s = natsConnection_FlushTimeout(nc_, 5000);
  if (s != NATS_OK) return std::string("flush: ") + natsStatus_GetText(s);
  return "";
}

void NatsCapture::OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* self = static_cast<NatsCapture*>(closure);
  CapturedMessage m;
  m.subject = natsMsg_GetSubject(msg);
  if (natsMsg_GetDataLength(msg) > 0)
    m.data.assign(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  natsMsg_Destroy(msg);
  std::lock_guard<std::mutex> lock(self->mu_);
  self->messages_.push_back(std::move(m));
}

std::string NatsCapture::Request(const std::string& subject, const std::string& payload,
                                 int timeout_ms, bool* ok) {
  natsMsg* reply = nullptr;
  natsStatus s = natsConnection_Request(&reply, nc_, subject.c_str(), payload.data(),
                                        static_cast<int>(payload.size()), timeout_ms);
  *ok = s == NATS_OK;
  if (s != NATS_OK) return natsStatus_GetText(s);
  std::string data;
  if (natsMsg_GetDataLength(reply) > 0) {
    data.assign(natsMsg_GetData(reply), natsMsg_GetDataLength(reply));
  }
  natsMsg_Destroy(reply);
  return data;
}

std::vector<CapturedMessage> NatsCapture::Messages() const {
  std::lock_guard<std::mutex> lock(mu_);
  return messages_;
}

size_t NatsCapture::Count(const std::string& subject) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& m : messages_) n += m.subject == subject ? 1 : 0;
  return n;
}

bool NatsCapture::WaitFor(const std::string& subject, size_t count, int timeout_ms) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Count(subject) < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

SqliteFaults::SqliteFaults(const std::string& path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(db_);
    db_ = nullptr;
    return;
  }
  sqlite3_busy_timeout(db_, 10000);
}

SqliteFaults::~SqliteFaults() { sqlite3_close(db_); }

std::string SqliteFaults::Exec(const std::string& sql) {
  if (db_ == nullptr) return "database not open";
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return "";
  std::string msg = err != nullptr ? err : "unknown error";
  sqlite3_free(err);
  return msg;
}

}  // namespace agentckpt::testing
