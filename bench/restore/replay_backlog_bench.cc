// Replay cost against the backlog: the Restorer (real SQLite store with the 16k reference
// checkpoint, real nats-server, JetStreamReplaySource) restoring with 50, 10,000 and 100,000
// messages on the agent's subject after the checkpoint (the durable's ack floor 30 messages
// before the end: 30 pending, the rest handled). Dry runs (no status write, no event), so every
// run restores the same state. The backlogs are restored in turn (one restore of each per round),
// so the machine's changing load weighs on all three alike, in an order shuffled anew each round
// (--seed): in a fixed order each backlog would always follow the same one, and whatever a restore
// leaves behind (the nats-server deleting its replay consumers, the client's buffers) would always
// land on the same next one. Prints totalMs and replayMs p50/p90/p99 per backlog and the ratio of
// the largest to the smallest totalMs p99.
// Every --restart-every rounds (default 250; 0: never) the nats-server is stopped with SIGTERM and
// started again on the same store, and 5 rounds of warm-up follow: nats-server 2.9 keeps every
// consumer ever created on a stream in its heap (see the comment at the restart), so one server
// process serving thousands of restores is in a state no single sidecar restore meets, with a
// garbage collector that scans more each second. The header line says the setting.
//
//   build/bin/replay_backlog_bench [--runs N] [--seed N] [--restart-every N]
//   (default 200 runs per backlog)
#include <nats/nats.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench/common/percentiles.h"
#include "bench/common/process_stats.h"
#include "checkpoint/canonical.h"
#include "common/env.h"
#include "replay/jetstream_replay.h"
#include "restore/restore_result.h"
#include "restore/restorer.h"
#include "tests/support/fixtures.h"
#include "tests/support/jetstream_fixture.h"
#include "tests/support/nats_server.h"
#include "tests/support/temp_dir.h"

namespace agentckpt::bench {
namespace {

constexpr char kAgent[] = "agent-bench";

int Fail(const std::string& what) {
  std::fprintf(stderr, "replay_backlog_bench: %s\n", what.c_str());
  return 1;
}

// Publishes `n` messages on `subject` with asynchronous publishes; OK once all are stored.
Status PublishAsync(jsCtx* js, const std::string& subject, int n) {
  for (int i = 1; i <= n; ++i) {
    std::string body = "message " + std::to_string(i) + " of the backlog";
    natsStatus s =
        js_PublishAsync(js, subject.c_str(), body.data(), static_cast<int>(body.size()), nullptr);
    if (s != NATS_OK) return UnavailableError(std::string("publish: ") + natsStatus_GetText(s));
  }
  jsPubOptions opts;
  jsPubOptions_Init(&opts);
  opts.MaxWait = 60000;
  natsStatus s = js_PublishAsyncComplete(js, &opts);
  if (s != NATS_OK) return UnavailableError(std::string("publish: ") + natsStatus_GetText(s));
  return OkStatus();
}

// A durable on `stream` (ack policy all) whose ack floor is `floor`: it fetches the first
// `floor` messages in batches and acknowledges the last of each batch, which acknowledges all
// before it.
Status CreateDurableAt(jsCtx* js, const std::string& stream, const std::string& filter,
                       uint64_t floor) {
  jsConsumerConfig c;
  jsConsumerConfig_Init(&c);
  c.Durable = "agent";
  c.AckPolicy = js_AckAll;
  c.FilterSubject = filter.c_str();
  jsConsumerInfo* ci = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_AddConsumer(&ci, js, stream.c_str(), &c, nullptr, &jerr);
  jsConsumerInfo_Destroy(ci);
  if (s != NATS_OK) return UnavailableError(std::string("consumer: ") + natsStatus_GetText(s));
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Consumer = "agent";
  natsSubscription* sub = nullptr;
  s = js_PullSubscribe(&sub, js, nullptr, "agent", nullptr, &so, &jerr);
  if (s != NATS_OK) return UnavailableError(std::string("bind: ") + natsStatus_GetText(s));
  uint64_t acked = 0;
  while (s == NATS_OK && acked < floor) {
    natsMsgList list;
    const int batch = static_cast<int>(std::min<uint64_t>(500, floor - acked));
    s = natsSubscription_Fetch(&list, sub, batch, 10000, &jerr);
    if (s != NATS_OK || list.Count == 0) break;
    s = natsMsg_AckSync(list.Msgs[list.Count - 1], nullptr, &jerr);
    acked += static_cast<uint64_t>(list.Count);
    natsMsgList_Destroy(&list);
  }
  natsSubscription_Destroy(sub);
  if (s != NATS_OK) return UnavailableError(std::string("ack: ") + natsStatus_GetText(s));
  return OkStatus();
}

// What restores one backlog: a replay source on the current connection and its Restorer.
struct BacklogRestorer {
  std::unique_ptr<JetStreamReplaySource> source;
  std::unique_ptr<Restorer> restorer;
};

int Run(int runs, unsigned seed, int restart_every) {
  testing::NatsServerProcess nats;
  auto client = testing::JetStreamTestClient::Connect(nats.url());
  if (!client.ok()) return Fail(client.status().ToString());
  testing::TempDir dir;
  auto store = OpenStore("sqlite://" + dir.File("store.db"));
  if (!store.ok()) return Fail(store.status().ToString());

  std::printf(
      "Restorer dry runs: SQLite store, 16k reference checkpoint, %d runs per backlog, "
      "CKPT_REPLAY_MAX 50, deadline 5000 ms, nats-server on loopback, backlogs in turn in an "
      "order shuffled each round (seed %u), nats-server restarted every %d rounds%s\n",
      runs, seed, restart_every, restart_every > 0 ? "" : " (never)");
  // The three backlogs are set up first, then restored in turn (one restore of each per round),
  // so that the machine's load, which varies over the run, weighs on the three alike.
  const std::vector<int> backlogs = {50, 10000, 100000};
  std::vector<std::string> agents;
  for (int backlog : backlogs) {
    const std::string stream = "INBOX" + std::to_string(backlog);
    const std::string subject = "inbox." + stream + ".task";
    if (auto st = (*client)->CreateStream(stream, {"inbox." + stream + ".>"}); !st.ok()) {
      return Fail(st.ToString());
    }
    if (auto st = PublishAsync((*client)->js(), subject, backlog); !st.ok()) {
      return Fail(st.ToString());
    }
    if (auto st = CreateDurableAt((*client)->js(), stream, "inbox." + stream + ".>",
                                  static_cast<uint64_t>(backlog - 30));
        !st.ok()) {
      return Fail(st.ToString());
    }
    // The checkpoint: the 16k fixture at the stream's start (everything after it is backlog).
    Checkpoint cp = testing::LoadFixtureCheckpoint("checkpoint-16k.json");
    const std::string agent = std::string(kAgent) + "-" + std::to_string(backlog);
    cp.agent_id = agent;
    cp.checkpoint_id[0] = static_cast<char>('a' + agents.size());  // one id per backlog
    cp.sequence_number = backlog;
    cp.timestamp_ms = Env::Default()->NowUnixMillis();
    cp.nats_position = NatsPosition{stream, "agent", 0, static_cast<uint64_t>(backlog)};
    auto sealed = Seal(cp);
    if (!sealed.ok()) return Fail(sealed.status().ToString());
    if (auto put = (*store)->Put(*sealed, PutOptions{}); !put.ok()) {
      return Fail(put.status().ToString());
    }
    agents.push_back(agent);
  }

  std::vector<Latencies> total(backlogs.size()), replay_phase(backlogs.size());
  std::vector<BacklogRestorer> restorers(backlogs.size());
  std::mt19937 random(seed);
  std::vector<size_t> order(backlogs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  long rss_before_restart_kb = 0;
  int restarts = 0;
  for (int measured = 0, warm_up = 0; measured < runs;) {
    // A fresh connection (and sources on it) after every restart of the server, then 5 rounds
    // of warm-up that are not counted.
    if (warm_up == 0 && restorers[0].restorer == nullptr) {
      if (measured > 0) {  // after a restart: the old sources are gone with the old connection
        client = testing::JetStreamTestClient::Connect(nats.url());
        if (!client.ok()) return Fail(client.status().ToString());
      }
      for (size_t b = 0; b < backlogs.size(); ++b) {
        restorers[b].source = std::make_unique<JetStreamReplaySource>(
            (*client)->connection(), std::chrono::milliseconds(5000));
        RestoreOptions options;
        options.dry_run = true;
        restorers[b].restorer = std::make_unique<Restorer>(
            Env::Default(), store->get(), restorers[b].source.get(), nullptr, options);
      }
      warm_up = 5;
    }
    std::shuffle(order.begin(), order.end(), random);
    for (size_t b : order) {
      auto r = restorers[b].restorer->Run(agents[b]);
      if (!r.ok()) return Fail(r.status().ToString());
      if (!r->replay_error.empty() || r->replayed != 50 || r->pending != 30 ||
          r->handled != static_cast<uint64_t>(backlogs[b] - 30)) {
        return Fail("unexpected replay: " + RestoredEventPayload(*r).dump());
      }
      if (warm_up > 0) continue;
      total[b].Add(r->timings.total_ms * 1000);
      replay_phase[b].Add(r->timings.replay_ms * 1000);
    }
    if (warm_up > 0) {
      --warm_up;
      continue;
    }
    ++measured;
    // nats-server 2.9 keeps every consumer ever created on a stream in the stream's signal list
    // (a consumer's signal subscription is never removed; fixed in nats-server 2.10.0), so each
    // restore's replay consumers stay in its heap: thousands of restores against one server
    // process would measure its garbage collector scanning them, a state no sidecar's single
    // restore meets. The server is stopped (SIGTERM) and started again on the same store now
    // and then; the time that takes is not measured.
    if (restart_every > 0 && measured % restart_every == 0 && measured < runs) {
      if (restarts == 0) rss_before_restart_kb = ResidentSetKb(nats.pid());
      restorers.clear();
      restorers.resize(backlogs.size());
      client->reset();  // closes the connection before the server goes
      nats.Stop();
      nats.Restart();
      ++restarts;
    }
  }
  if (restarts > 0) {
    std::printf("nats-server restarts: %d (its RSS before the first: %.1f MB)\n", restarts,
                static_cast<double>(rss_before_restart_kb) / 1024.0);
  } else {
    std::printf("nats-server RSS at the end: %.1f MB\n",
                static_cast<double>(ResidentSetKb(nats.pid())) / 1024.0);
  }
  std::vector<double> p99s;
  for (size_t b = 0; b < backlogs.size(); ++b) {
    total[b].Print("backlog " + std::to_string(backlogs[b]) + " totalMs");
    replay_phase[b].Print("backlog " + std::to_string(backlogs[b]) + " replayMs");
    p99s.push_back(total[b].Percentile(99));
  }
  const double ratio =
      *std::max_element(p99s.begin(), p99s.end()) / *std::min_element(p99s.begin(), p99s.end());
  std::printf("totalMs p99: largest / smallest = %.3f (target <= 1.25)\n", ratio);
  return 0;
}

}  // namespace
}  // namespace agentckpt::bench

int main(int argc, char** argv) {
  int runs = 200;
  unsigned seed = 20261126;
  int restart_every = 250;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--seed")) seed = static_cast<unsigned>(std::atoll(argv[i + 1]));
    if (!std::strcmp(argv[i], "--restart-every")) restart_every = std::atoi(argv[i + 1]);
  }
  return agentckpt::bench::Run(runs, seed, restart_every);
}
