// The sidecar's SQLite store on a file system that fills up: a real tmpfs of 24 MiB mounted for
// the test (skipped where mounting is not permitted), filled by a file written until ENOSPC.
// Changes stop being acknowledged with a reply that says the disk is full; once space is freed
// they are taken again without a restart, and after a SIGKILL the next sidecar restores the last
// change that was acknowledged: the client's own record of its 2xx replies is the reference.
#include <signal.h>
#include <sys/mount.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr char kFull[] = "bytes available: free space on it";

class SidecarDiskFullTest : public SidecarEnvTest {
 protected:
  void SetUp() override {
    SidecarEnvTest::SetUp();
    mount_point_ = dir_.File("small-disk");
    std::filesystem::create_directories(mount_point_);
    if (::mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, "size=24m") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno)
                   << "): needs CAP_SYS_ADMIN";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2(mount_point_.c_str(), MNT_DETACH);
    SidecarEnvTest::TearDown();
  }
  // Writes a file on the small disk until the file system refuses (ENOSPC); its size.
  uintmax_t FillTheDisk() {
    const std::string filler = mount_point_ + "/filler";
    std::ofstream out(filler, std::ios::binary);
    const std::string block(64 * 1024, '\0');
    for (int i = 0; i < 1024 && out.write(block.data(), block.size()); ++i) {
      out.flush();
    }
    out.close();
    return std::filesystem::file_size(filler);
  }
  // The 16 KiB fixture with its task's title set (parsed once: the fill loop sends hundreds).
  json ContextWithTitle(const std::string& title) {
    if (fixture_.is_null()) fixture_ = json::parse(FixtureContextBody("checkpoint-16k.json"));
    json body = fixture_;
    body["activeTask"]["title"] = title;
    return body;
  }

  std::string mount_point_;
  bool mounted_ = false;
  json fixture_;
};

TEST_F(SidecarDiskFullTest, ChangesAreRefusedWhileFullTakenAgainOnceFreedAndTheLastOneRestored) {
  const std::map<std::string, std::string> env = {
      {"CKPT_STORE", "sqlite://" + mount_point_ + "/store.db"}, {"CKPT_RESTORE_ON_START", "true"}};
  auto sidecar = StartSidecar(env);
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", ContextWithTitle("before").dump()).status, 200);
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", "{}").status, 201);
  const uintmax_t filled = FillTheDisk();
  ASSERT_EQ(std::filesystem::space(mount_point_).available, 0u) << "filled " << filled;

  // The write-ahead log was grown when the store opened, so changes go on for a while; the first
  // refusal ends the loop (bounded: 20,000 changes).
  HttpReply refused;
  for (int i = 0; i < 20000 && refused.status == 0; ++i) {
    HttpReply r = HttpCall(port_, "PUT", "/v1/context",
                           ContextWithTitle("while full " + std::to_string(i)).dump());
    if (r.status != 200) refused = r;
  }
  ASSERT_EQ(refused.status, 503) << refused.body;
  EXPECT_NE(refused.body.find(kFull), std::string::npos) << refused.body;
  const HttpReply checkpoint = HttpCall(port_, "POST", "/v1/checkpoints", "{}");
  EXPECT_EQ(checkpoint.status, 503) << checkpoint.body;
  EXPECT_NE(checkpoint.body.find(kFull), std::string::npos) << checkpoint.body;

  // The store still answers a ping; readiness says the journal refuses changes.
  const HttpReply ready = WaitReadyz(503);
  ASSERT_EQ(ready.status, 503) << ready.body;
  const json readiness = json::parse(ready.body);
  EXPECT_EQ(readiness["store"], "ok") << ready.body;
  EXPECT_NE(readiness["journal"].get<std::string>().find(kFull), std::string::npos) << ready.body;
  EXPECT_NE(readiness.value("reason", "").find("journal unavailable"), std::string::npos)
      << ready.body;
  EXPECT_NE(HttpCall(port_, "GET", "/metrics").body.find("agentckpt_journal_refusing_changes 1"),
            std::string::npos);

  // Space freed: the sidecar retries the checkpoint that repairs its journal (after 1, 2, 4 ...
  // s), and changes are taken again. Bounded: 600 tries 100 ms apart.
  std::filesystem::remove(mount_point_ + "/filler");
  const std::string acknowledged = PutUntilAcknowledged("after space was freed ");
  ASSERT_FALSE(acknowledged.empty()) << "no change was taken after space was freed\n"
                                     << sidecar->Describe();
  EXPECT_NE(sidecar->Stdout().find("journal repaired by a checkpoint"), std::string::npos);
  EXPECT_EQ(WaitReadyz(200).status, 200);
  EXPECT_NE(HttpCall(port_, "GET", "/metrics").body.find("agentckpt_journal_refusing_changes 0"),
            std::string::npos);
  // The next sidecar restores the last change acknowledged: the client's record of its 2xx.
  ExpectRestartRestoresTitle(sidecar.get(), env, acknowledged);
}

}  // namespace
}  // namespace agentckpt::testing
