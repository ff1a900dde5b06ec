// Recovery benchmark: from `agentckpt run` process start to checkpoint.restored received, with the
// 16k reference checkpoint in the store and 50 JetStream messages to replay (20 handled since the
// checkpoint, 30 pending) in an inbox stream shared with another agent (30 of its messages
// interleaved with the agent's, the newest one its). Each run starts a fresh sidecar process, waits
// for the event, and SIGKILLs it, so every run restores the same checkpoint. Prints p50/p90/p99.
// With
// --journal-tail N the store also holds N journal entries after the checkpoint (~1 KB merge
// patches), which every restore folds in (the event must say all N were applied).
//
//   build/bin/restore_bench [--runs N] [--journal-tail N] [--fixtures DIR]
//                           [--bin build/bin/agentckpt]
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/common/journal_tail.h"
#include "bench/common/percentiles.h"
#include "checkpoint/canonical.h"
#include "checkpoint/checkpoint_json.h"
#include "common/env.h"
#include "nats/subjects.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::bench {
namespace {

constexpr char kAgent[] = "agent-bench";
constexpr char kStream[] = "AGENT_INBOX";
constexpr char kOtherAgent[] = "agent-other";

int Fail(const std::string& what) {
  std::fprintf(stderr, "restore_bench: %s\n", what.c_str());
  return 1;
}

pid_t StartSidecar(const std::string& bin, const std::vector<std::string>& env) {
  pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execl(bin.c_str(), bin.c_str(), "run", static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  return pid;
}

int Run(int runs, int journal_tail, const std::string& fixtures, const std::string& bin) {
  testing::NatsServerProcess nats;
  testing::TempDir dir;
  auto client = testing::JetStreamTestClient::Connect(nats.url());
  if (!client.ok()) return Fail(client.status().ToString());
  std::string filter = std::string("inbox.") + kAgent + ".>";
  if (auto s = (*client)->CreateStream(kStream, {"inbox.>"}); !s.ok()) return Fail(s.ToString());
  if (auto s = (*client)->CreateDurablePullConsumer(kStream, kAgent, filter); !s.ok()) {
    return Fail(s.ToString());
  }
  // 60 messages: the checkpoint saw the first 10 acked, the agent then acked 20 more. The stream
  // is shared with another agent, as an inbox stream is: one of its messages follows every
  // second one of ours, and the newest message in the stream is its.
  StatusOr<std::vector<uint64_t>> seqs = std::vector<uint64_t>{};
  for (int i = 0; i < 60 && seqs.ok(); ++i) {
    auto own = (*client)->Publish(
        std::string("inbox.") + kAgent + ".tasks",
        "{\"request\":\"summarise the incident report\",\"n\":" + std::to_string(i) + "}");
    if (!own.ok()) {
      seqs = own.status();
      break;
    }
    seqs->push_back(*own);
    if (i % 2 == 1) {
      auto theirs = (*client)->Publish(std::string("inbox.") + kOtherAgent + ".tasks",
                                       "{\"request\":\"not for this agent\"}");
      if (!theirs.ok()) seqs = theirs.status();
    }
  }
  if (!seqs.ok()) return Fail(seqs.status().ToString());
  if (auto n = (*client)->FetchAndAckThrough(kStream, kAgent, (*seqs)[29]); !n.ok()) {
    return Fail(n.status().ToString());
  }

  auto text = Env::Default()->ReadFile(fixtures + "/checkpoint-16k.json");
  if (!text.ok()) return Fail(text.status().ToString());
  auto cp = CheckpointFromJson(*text);
  if (!cp.ok()) return Fail(cp.status().ToString());
  cp->agent_id = kAgent;
  cp->timestamp_ms = Env::Default()->NowUnixMillis();
  cp->nats_position = NatsPosition{kStream, kAgent, (*seqs)[9], 50};
  std::string db = dir.File("agentckpt.db");
  {
    auto store = SqliteStore::Open(db);
    if (!store.ok()) return Fail(store.status().ToString());
    auto sealed = Seal(*cp);
    if (!sealed.ok()) return Fail(sealed.status().ToString());
    if (auto r = (*store)->Put(*sealed, PutOptions{}); !r.ok()) return Fail(r.status().ToString());
    if (journal_tail > 0) {
      Status appended = (*store)->AppendJournal(kAgent, MakeJournalTail(kAgent, journal_tail, 1000),
                                                std::nullopt);
      if (!appended.ok()) return Fail(appended.ToString());
    }
  }

  natsSubscription* sub = nullptr;
  std::string subject = subjects::CheckpointRestored(kAgent);
  natsConnection_SubscribeSync(&sub, (*client)->connection(), subject.c_str());
  natsConnection_Flush((*client)->connection());

  std::vector<std::string> env = {
      std::string("AGENT_ID=") + kAgent,
      "NATS_URL=" + nats.url(),
      "CKPT_STORE=sqlite://" + db,
      "CKPT_HTTP_ADDR=127.0.0.1:" + std::to_string(testing::PickFreePort()),
      std::string("JS_STREAM=") + kStream,
      std::string("JS_CONSUMER=") + kAgent,
      "CKPT_STALE_AFTER_S=86400"};
  Latencies latency;
  std::string last_event;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    pid_t pid = StartSidecar(bin, env);
    natsMsg* msg = nullptr;
    natsStatus s = natsSubscription_NextMsg(&msg, sub, 10000);
    double us = MicrosSince(start);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (s != NATS_OK) return Fail("no checkpoint.restored within 10 s in run " + std::to_string(i));
    last_event.assign(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
    natsMsg_Destroy(msg);
    auto event = nlohmann::json::parse(last_event, nullptr, false);
    if (!event.is_object() || event.value("handled", -1) != 20 ||
        event.value("pending", -1) != 30 || event.value("replayed", -1) != 50 ||
        event.contains("replayPartial") || event.contains("replayError")) {
      return Fail("run " + std::to_string(i) +
                  " did not replay 20 handled + 30 pending in full: " + last_event.substr(0, 600));
    }
    if (journal_tail > 0) {
      int applied = event.is_object() && event.contains("journal") && event["journal"].is_object()
                        ? event["journal"].value("applied", -1)
                        : -1;
      if (applied != journal_tail) {
        return Fail("run " + std::to_string(i) + " folded " + std::to_string(applied) + " of " +
                    std::to_string(journal_tail) +
                    " journal entries: " + last_event.substr(0, 400));
      }
    }
    latency.Add(us);
  }
  natsSubscription_Destroy(sub);
  std::printf("last event: %s\n", last_event.substr(0, 2000).c_str());
  latency.Print("process start -> checkpoint.restored, journal tail " +
                std::to_string(journal_tail));
  return 0;
}

}  // namespace
}  // namespace agentckpt::bench

int main(int argc, char** argv) {
  int runs = 100;
  int journal_tail = 0;
  const char* fixtures_env = std::getenv("AGENTCKPT_FIXTURES_DIR");
  std::string fixtures =
      fixtures_env && *fixtures_env ? fixtures_env : AGENTCKPT_BENCH_FIXTURES_DIR;
  std::string bin = "build/bin/agentckpt";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs"))
      runs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--journal-tail"))
      journal_tail = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--fixtures"))
      fixtures = argv[i + 1];
    else if (!std::strcmp(argv[i], "--bin"))
      bin = argv[i + 1];
  }
  return agentckpt::bench::Run(runs, journal_tail, fixtures, bin);
}
