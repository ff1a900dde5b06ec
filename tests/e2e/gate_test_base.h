// The fixture the approval-gate tests share: SidecarEnvTest with the settings a new user runs
// (CKPT_PERIOD_S=300, restore at start) and a readiness wait.
#pragma once

#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {

class GateTestBase : public SidecarEnvTest {
 protected:
  static nlohmann::json Body(const HttpReply& r) {
    return nlohmann::json::parse(r.body, nullptr, false);
  }
  std::map<std::string, std::string> Defaults() {
    return {{"CKPT_PERIOD_S", "300"}, {"CKPT_RESTORE_ON_START", "true"}};
  }
  // Polls GET /readyz (the sidecar holds the lease and is seeded); false after `timeout_ms`.
  bool WaitReady(int port, int timeout_ms) {
    for (int waited = 0; waited < timeout_ms; waited += 50) {
      if (HttpCall(port, "GET", "/readyz").status == 200) return true;
      usleep(50 * 1000);
    }
    return false;
  }
};

}  // namespace agentckpt::testing
