// EmulatorSuite: a test fixture whose suite shares one emulator process (started once, faults
// cleared around every test) and gives each test its own project, named after the test.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/firestore/emulator_process.h"

namespace agentckpt::testing {

class EmulatorSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    emulator_ = new EmulatorProcess();
    Status s = emulator_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  static void TearDownTestSuite() {
    delete emulator_;
    emulator_ = nullptr;
  }
  // Clears the faults and names the project "<prefix><test name>".
  void StartTest(const std::string& prefix) {
    ASSERT_NE(emulator_, nullptr);
    ASSERT_TRUE(emulator_->SetFaults(nlohmann::json::object()).ok());
    project_ = prefix + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    if (emulator_ != nullptr) (void)emulator_->SetFaults(nlohmann::json::object());
  }

  inline static EmulatorProcess* emulator_ = nullptr;
  std::string project_;
};

}  // namespace agentckpt::testing
