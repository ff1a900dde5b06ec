#include "tests/observability/prometheus_process.h"

#include <cpprest/base_uri.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "tests/sidecar/sidecar_process.h"
#include "tests/support/child_spawn.h"
#include "tests/support/nats_server.h"

namespace agentckpt::testing {

std::string FormEncode(const std::string& s) { return web::uri::encode_data_string(s); }

PrometheusProcess::PrometheusProcess(std::string scrape_configs)
    : scrape_configs_(std::move(scrape_configs)) {}

PrometheusProcess::~PrometheusProcess() { Stop(); }

Status PrometheusProcess::Start() {
  // A port from PickFreePort can be taken before the server binds it: then it exits, and
  // another port is tried.
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (StartOnce()) return OkStatus();
  }
  return UnavailableError("prometheus did not get ready; its log:\n" + Log());
}

bool PrometheusProcess::StartOnce() {
  port_ = PickFreePort();
  {
    std::ofstream config(dir_.File("prometheus.yml"));
    config << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
           << "  evaluation_interval: 1s\nscrape_configs:\n"
           << scrape_configs_;
  }
  std::vector<std::string> args = {"prometheus", "--config.file=" + dir_.File("prometheus.yml"),
                                   "--storage.tsdb.path=" + dir_.File("data"),
                                   "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                                   "--log.level=warn"};
  ChildSpec spec;
  spec.argv = std::move(args);
  spec.stdout_path = spec.stderr_path = dir_.File("prometheus.log");
  spec.append = true;
  pid_ = SpawnChild(spec);
  if (pid_ < 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    if (HttpCall(port_, "GET", "/-/ready").status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Stop();
  return false;
}

void PrometheusProcess::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
}

StatusOr<nlohmann::json> PrometheusProcess::Api(const std::string& endpoint,
                                                const std::map<std::string, std::string>& form) {
  std::string body;
  for (const auto& [k, v] : form) {
    if (!body.empty()) body += '&';
    body += FormEncode(k) + "=" + FormEncode(v);
  }
  HttpReply r =
      HttpCall(port_, "POST", "/api/v1/" + endpoint, body, "application/x-www-form-urlencoded");
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (r.status != 200 || j.is_discarded() || j.value("status", "") != "success") {
    return InvalidArgumentError(endpoint + ": HTTP " + std::to_string(r.status) + " " + r.body);
  }
  return j["data"];
}

std::string PrometheusProcess::Log() const {
  std::ifstream in(dir_.File("prometheus.log"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > 4000 ? text.substr(text.size() - 4000) : text;
}

}  // namespace agentckpt::testing
