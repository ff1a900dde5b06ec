// main() of every test binary: sets AGENTCKPT_BIN and AGENTCKPT_SOURCE_DIR
// to this build's paths unless the environment already has them, then runs GoogleTest. Output is
// line-buffered, so a test that crashes still shows what it printed (ctest reads a pipe).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  setenv("AGENTCKPT_BIN", AGENTCKPT_TEST_BIN, /*overwrite=*/0);
  setenv("AGENTCKPT_SOURCE_DIR", AGENTCKPT_TEST_SOURCE_DIR, 0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
