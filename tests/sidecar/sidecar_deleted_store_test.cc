// The sidecar's SQLite store file deleted while the sidecar runs (an operator clearing the data
// directory, a volume cleanup): no write after that is acknowledged, /readyz and the log say
// why, and a restart opens what is at the path then. A database deleted under a sidecar that is
// then killed leaves its -wal behind: the next start refuses it and creates nothing.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/sidecar/sidecar_test_env.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

constexpr char kDeleted[] = "was deleted or moved while open";

class SidecarDeletedStoreTest : public SidecarEnvTest {
 protected:
  // Starts the sidecar, waits until it is ready, sets the 16k context and writes a checkpoint.
  std::unique_ptr<SidecarProcess> StartWithACheckpoint() {
    auto sidecar = StartSidecar();
    EXPECT_EQ(WaitReadyz(200).status, 200) << sidecar->Describe();
    EXPECT_EQ(
        HttpCall(port_, "PUT", "/v1/context", FixtureContextBody("checkpoint-16k.json")).status,
        200);
    EXPECT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", "{}").status, 201);
    return sidecar;
  }
  // The next checkpoint.failed event within 5 s, skipping others; null when none came.
  json NextFailedEvent() {
    for (int i = 0; i < 20; ++i) {
      json ev = NextEvent(5000);
      if (ev.is_null()) return ev;
      if (ev["subject"].get<std::string>().ends_with(".checkpoint.failed")) {
        return ev["data"];
      }
    }
    return nullptr;
  }
};

TEST_F(SidecarDeletedStoreTest, NoWriteIsAcknowledgedOnceTheStoreFileIsGone) {
  auto sidecar = StartWithACheckpoint();
  ASSERT_FALSE(HasFailure());

  const std::string store = dir_.File("store.db");
  for (const char* suffix : {"", "-wal", "-shm"}) {
    ASSERT_TRUE(std::filesystem::remove(store + suffix)) << store << suffix;
  }

  // A context change: its journal append goes to the deleted file, so it is not acknowledged.
  json changed = json::parse(FixtureContextBody("checkpoint-16k.json"));
  changed["activeTask"]["title"] = "written after the store file was deleted";
  const HttpReply put = HttpCall(port_, "PUT", "/v1/context", changed.dump());
  EXPECT_GE(put.status, 500) << put.body;
  EXPECT_NE(put.body.find(kDeleted), std::string::npos) << put.body;
  // A checkpoint: refused with the reason, as a reply and as a checkpoint.failed event.
  const HttpReply created = HttpCall(port_, "POST", "/v1/checkpoints", "{}");
  EXPECT_EQ(created.status, 500) << created.body;
  ASSERT_TRUE(json::accept(created.body)) << created.body;
  EXPECT_EQ(json::parse(created.body)["error"]["code"], "DATA_LOSS") << created.body;
  EXPECT_NE(created.body.find(store + " " + kDeleted), std::string::npos) << created.body;
  json failed = NextFailedEvent();
  ASSERT_FALSE(failed.is_null()) << "no checkpoint.failed event";
  EXPECT_NE(failed.dump().find(kDeleted), std::string::npos) << failed.dump();

  // Readiness says why; liveness is unaffected (a restart is the operator's call).
  const HttpReply ready = WaitReadyz(503);
  EXPECT_EQ(ready.status, 503) << ready.body;
  EXPECT_NE(ready.body.find(kDeleted), std::string::npos) << ready.body;
  EXPECT_EQ(HttpCall(port_, "GET", "/healthz").status, 200);
  EXPECT_NE(sidecar->Stdout().find(kDeleted), std::string::npos) << sidecar->Stdout();
  EXPECT_EQ(sidecar->Signal(SIGKILL), 128 + SIGKILL);

  // The restart opens a new file at the path: nothing of the old one, and writes work again.
  ASSERT_FALSE(std::filesystem::exists(store));
  auto restarted = StartSidecar({{"CKPT_RESTORE_ON_START", "true"}});
  ASSERT_EQ(WaitReadyz(200).status, 200) << restarted->Describe();
  EXPECT_TRUE(ListCheckpoints().empty());
  ASSERT_EQ(HttpCall(port_, "PUT", "/v1/context", changed.dump()).status, 200);
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", "{}").status, 201);
  EXPECT_FALSE(ListCheckpoints().empty());
  EXPECT_EQ(restarted->Signal(SIGTERM, 30000), 0) << restarted->Describe();
}

TEST_F(SidecarDeletedStoreTest, ALeftOverLogWithoutItsDatabaseStopsTheNextStartUntouched) {
  auto sidecar = StartWithACheckpoint();
  ASSERT_FALSE(HasFailure());
  const std::string store = dir_.File("store.db");
  ASSERT_TRUE(std::filesystem::remove(store));  // the database alone; its -wal and -shm stay
  EXPECT_EQ(sidecar->Signal(SIGKILL), 128 + SIGKILL);
  ASSERT_TRUE(std::filesystem::exists(store + "-wal"));

  SidecarProcess refused(SidecarEnv({{"CKPT_RESTORE_ON_START", "true"}}), dir_.path());
  EXPECT_EQ(refused.Wait(30000), 1) << refused.Describe();
  EXPECT_NE(refused.Stdout().find("store file " + store + " is missing but its write-ahead log " +
                                  store + "-wal is there"),
            std::string::npos)
      << refused.Describe();
  EXPECT_FALSE(std::filesystem::exists(store)) << "the refused start created the database";

  // Moving the log away, as the message says, gives an empty store and a working sidecar.
  std::filesystem::rename(store + "-wal", store + "-wal.old");
  std::filesystem::rename(store + "-shm", store + "-shm.old");
  auto restarted = StartSidecar({{"CKPT_RESTORE_ON_START", "true"}});
  ASSERT_EQ(WaitReadyz(200).status, 200) << restarted->Describe();
  ASSERT_EQ(HttpCall(port_, "POST", "/v1/checkpoints", "{}").status, 201);
  EXPECT_EQ(restarted->Signal(SIGTERM, 30000), 0) << restarted->Describe();
}

}  // namespace
}  // namespace agentckpt::testing
