#include "tests/sidecar/sidecar_process.h"

#include <cpprest/http_client.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/child_spawn.h"
#include "tests/support/fixtures.h"

namespace agentckpt::testing {

HttpReply HttpCall(int port, const std::string& method, const std::string& path,
                   const std::string& body, const std::string& content_type,
                   const std::map<std::string, std::string>& headers) {
  HttpReply reply;
  try {
    web::http::client::http_client_config cfg;
    cfg.set_timeout(std::chrono::seconds(10));
    web::http::client::http_client client("http://127.0.0.1:" + std::to_string(port), cfg);
    web::http::http_request req(method);
    req.set_request_uri(path);
    for (const auto& [name, value] : headers) req.headers().add(name, value);
    if (!body.empty() || method == "PUT" || method == "PATCH" || method == "POST") {
      req.set_body(body, content_type.empty() ? "application/json" : content_type);
    }
    web::http::http_response resp = client.request(req).get();
    reply.status = resp.status_code();
    reply.body = resp.extract_utf8string(true).get();
    for (const auto& [k, v] : resp.headers()) reply.headers[k] = v;
  } catch (const std::exception& e) {
    reply.status = 0;
    reply.body = e.what();
  }
  return reply;
}

std::string FixtureContextBody(const std::string& fixture_name) {
  nlohmann::json doc = nlohmann::json::parse(ReadSharedFixture(fixture_name));
  nlohmann::json body = {{"activeTask", doc["activeTask"]},
                         {"contextSummary", doc["contextSummary"]},
                         {"workspace", doc.value("workspace", nlohmann::json())}};
  return body.dump();
}

SidecarProcess::SidecarProcess(const std::map<std::string, std::string>& env,
                               const std::string& dir)
    : out_path_(dir + "/sidecar.out"), err_path_(dir + "/sidecar.err") {
  // $AGENTCKPT_BIN, else the binary of the build tree these tests were built in.
  const char* bin = std::getenv("AGENTCKPT_BIN");
  ChildSpec spec;
  spec.argv = {bin != nullptr && *bin != '\0' ? bin : AGENTCKPT_BIN_DEFAULT, "run"};
  spec.set_env = env;
  spec.cwd = dir;
  spec.stdout_path = out_path_;
  spec.stderr_path = err_path_;
  pid_ = SpawnChild(spec);
  if (pid_ < 0) std::abort();
}

SidecarProcess::~SidecarProcess() { Kill(); }

int SidecarProcess::Wait(int timeout_ms) {
  if (pid_ < 0) return -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool SidecarProcess::WaitHealthy(int port, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pid_ < 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    if (HttpCall(port, "GET", "/healthz").status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int SidecarProcess::Signal(int sig, int timeout_ms) {
  if (pid_ < 0) return -1;
  ::kill(pid_, sig);
  int code = Wait(timeout_ms);
  if (code == -1) Kill();
  return code;
}

void SidecarProcess::Kill() {
  if (pid_ < 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

static std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string SidecarProcess::Stdout() const { return ReadAll(out_path_); }
std::string SidecarProcess::Stderr() const { return ReadAll(err_path_); }

std::string SidecarProcess::Describe() {
  std::string state = "not running";
  if (pid_ >= 0) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == 0) {
      state = "pid " + std::to_string(pid_) + " still running";
    } else if (r == pid_) {
      pid_ = -1;
      state = WIFEXITED(status) ? "exited with " + std::to_string(WEXITSTATUS(status))
                                : "killed by signal " + std::to_string(WTERMSIG(status));
    }
  }
  return "sidecar " + state + "\n--- stdout ---\n" + Stdout() + "\n--- stderr ---\n" + Stderr();
}

}  // namespace agentckpt::testing
