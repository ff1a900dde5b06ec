// Security of the real `agentckpt run` binary: the HTTP bearer token, and secrets that must never
// reach the store file, NATS, the log or the restoration prompt (docs/security.md).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "checkpoint/canonical.h"
#include "common/sha256.h"
#include "nats/nats_handles.h"
#include "nats/subjects.h"
#include "tests/sidecar/sidecar_test_env.h"
#include "tests/store/raw_sqlite.h"
#include "tests/support/fixtures.h"

namespace agentckpt::testing {
namespace {

using nlohmann::json;

struct RawReply {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;
};

// One HTTP/1.1 request over a plain socket, with any headers (here: Authorization).
RawReply RawHttp(int port, const std::string& method, const std::string& path,
                 const std::string& headers, const std::string& body = "") {
  RawReply r;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return r;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return r;
  }
  std::string req =
      method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers +
      "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  for (size_t sent = 0; sent < req.size();) {
    ssize_t n = ::send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string all;
  char buf[8192];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;)
    all.append(buf, static_cast<size_t>(n));
  ::close(fd);
  size_t split = all.find("\r\n\r\n");
  if (all.rfind("HTTP/1.1 ", 0) != 0 || split == std::string::npos) return r;
  r.status = std::stoi(all.substr(9, 3));
  r.head = all.substr(0, split);
  r.body = all.substr(split + 4);
  return r;
}

std::string Auth(const std::string& token) { return "Authorization: Bearer " + token + "\r\n"; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every file of the SQLite store (main file, WAL, journal).
std::string StoreBytes(const TempDir& dir) {
  std::string bytes;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().filename().string().rfind("store.db", 0) == 0) {
      bytes += ReadAll(entry.path().string());
    }
  }
  return bytes;
}

class SidecarSecurityTest : public SidecarEnvTest {
 protected:
  std::string WriteFile(const std::string& name, const std::string& text) {
    std::ofstream(dir_.File(name)) << text;
    return dir_.File(name);
  }
};

constexpr char kToken[] = "tok-3c1f0b8e9a7d6c5b4a392817";

TEST_F(SidecarSecurityTest, BearerTokenIsRequiredExceptForProbesAndMetrics) {
  auto sidecar =
      StartSidecar({{"CKPT_HTTP_TOKEN_FILE", WriteFile("token", kToken + std::string("\n"))}});
  for (const char* path : {"/healthz", "/readyz", "/metrics"}) {
    EXPECT_NE(RawHttp(port_, "GET", path, "").status, 401) << path;
  }
  for (const std::string& headers : std::vector<std::string>{
           std::string(), Auth("wrong"), Auth(std::string(kToken) + "x"),
           "Authorization: Bearer \r\n", "Authorization: Basic " + std::string(kToken) + "\r\n"}) {
    RawReply r = RawHttp(port_, "GET", "/v1/context", headers);
    EXPECT_EQ(r.status, 401) << headers;
    EXPECT_NE(r.head.find("WWW-Authenticate: Bearer"), std::string::npos) << r.head;
    EXPECT_EQ(json::parse(r.body, nullptr, false)["error"]["code"], "UNAUTHENTICATED") << r.body;
  }
  // A rejected request changes nothing.
  EXPECT_EQ(RawHttp(port_, "PUT", "/v1/context", "", std::string(100000, 'x')).status, 401);
  EXPECT_EQ(RawHttp(port_, "POST", "/v1/checkpoints", Auth("nope"), "{}").status, 401);
  EXPECT_TRUE(ListCheckpoints().empty());
  // The right token, scheme in any case.
  EXPECT_EQ(RawHttp(port_, "GET", "/v1/context", Auth(kToken)).status, 200);
  EXPECT_EQ(
      RawHttp(port_, "GET", "/v1/context", "Authorization: bearer " + std::string(kToken) + "\r\n")
          .status,
      200);
  EXPECT_EQ(RawHttp(port_, "POST", "/v1/checkpoints", Auth(kToken), "{}").status, 201);
  RawReply metrics = RawHttp(port_, "GET", "/metrics", "");
  EXPECT_NE(metrics.body.find("agentckpt_http_requests_total{code=\"401\"}"), std::string::npos);
  EXPECT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
}

TEST_F(SidecarSecurityTest, BadTokenOrPatternFilesExitWithCode2) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"CKPT_HTTP_TOKEN_FILE", WriteFile("empty", " \n")}}, "CKPT_HTTP_TOKEN_FILE"},
      {{{"CKPT_HTTP_TOKEN_FILE", dir_.File("missing")}}, "CKPT_HTTP_TOKEN_FILE"},
      {{{"CKPT_REDACT_PATTERNS", WriteFile("p1", "ok=abc\n# c\nbad=([x\n")}}, "line 3"},
      {{{"CKPT_REDACT_PATTERNS", dir_.File("missing")}}, "CKPT_REDACT_PATTERNS"},
  };
  for (const auto& [env, named] : cases) {
    SidecarProcess p(SidecarEnv(env), dir_.path());
    EXPECT_EQ(p.Wait(10000), 2) << named;
    EXPECT_NE(p.Stderr().find(named), std::string::npos) << p.Stderr();
  }
}

TEST_F(SidecarSecurityTest, NonLoopbackAddressWithoutTokenIsWarnedAbout) {
  auto open = std::make_unique<SidecarProcess>(
      SidecarEnv({{"CKPT_HTTP_ADDR", "0.0.0.0:" + std::to_string(port_)}}), dir_.path());
  ASSERT_TRUE(open->WaitHealthy(port_)) << open->Describe();
  EXPECT_NE(open->Stdout().find("without a token"), std::string::npos) << open->Stdout();
  EXPECT_EQ(open->Signal(SIGTERM), 0) << open->Stderr();
  auto guarded = std::make_unique<SidecarProcess>(
      SidecarEnv({{"CKPT_HTTP_ADDR", "0.0.0.0:" + std::to_string(port_)},
                  {"CKPT_HTTP_TOKEN_FILE", WriteFile("token", kToken)}}),
      dir_.path());
  ASSERT_TRUE(guarded->WaitHealthy(port_)) << guarded->Describe();
  EXPECT_EQ(guarded->Stdout().find("without a token"), std::string::npos) << guarded->Stdout();
  EXPECT_EQ(guarded->Signal(SIGTERM), 0) << guarded->Stderr();
}

// Secrets sent in the context, in a tool call and in a message on the agent's inbox never reach
// the store file, NATS, the log or the prompt; markers say what was removed.
TEST_F(SidecarSecurityTest, SecretsAreRedactedEverywhere) {
  const std::string github = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
  const std::string anthropic = "sk-ant-api03-Xq3mP9vR2tL8wK5nB7cD1fG4hJ6kM0pQ";
  const std::string bearer = "8f3b2c1d9e7a6f5b4c3d2e1f0a9b8c7d";
  const std::string aws = "AKIAIOSFODNN7EXAMPLE";
  const std::string url_password = "Sup3rS3cretPw";
  const std::string custom = "CORP-998877";
  const std::vector<std::string> secrets = {github, anthropic, bearer, aws, url_password, custom};

  // Everything published under agent.AGENT.> is collected.
  natsSubscription* all = nullptr;
  std::string subject = subjects::AgentAll(kProcAgent);
  ASSERT_EQ(natsConnection_SubscribeSync(&all, events_nc_, subject.c_str()), NATS_OK);
  ASSERT_EQ(natsConnection_FlushTimeout(events_nc_, 2000), NATS_OK);

  auto sidecar =
      StartSidecar({{"CKPT_REDACT_PATTERNS", WriteFile("p", "corp_ticket=CORP-[0-9]{6}\n")}});
  json context = {
      {"activeTask",
       {{"taskId", "t-1"},
        {"title", "rotate " + anthropic},
        {"phase", "gathering"},
        {"progress", 25},
        {"startedAt", "2026-11-22T07:00:00.000Z"}}},
      {"contextSummary",
       {{"systemPromptHash", ""},
        {"gatheringResults", "deploy used GITHUB_TOKEN=" + github + " for ticket " + custom},
        {"planOutline", {"fetch with key " + aws}},
        {"completedSteps", 0},
        {"draftContent", "db at postgres://app:" + url_password + "@db.internal/orders"},
        {"toolCallLog", json::array()}}},
      {"workspace", nullptr}};
  HttpReply put = HttpCall(port_, "PUT", "/v1/context", context.dump());
  ASSERT_EQ(put.status, 200) << put.body;
  json call = {{"toolName", "http"},
               {"inputSummary", "curl -H 'Authorization: Bearer " + bearer + "' api"},
               {"outputSummary", "200 OK, key " + aws},
               {"timestamp", "2026-11-22T07:00:00.000Z"},
               {"durationMs", 12},
               {"success", true}};
  HttpReply posted = HttpCall(port_, "POST", "/v1/tool-calls", call.dump());
  ASSERT_EQ(posted.status, 201) << posted.body;
  // A message on the inbox, replayed (pending) at the restore.
  ASSERT_TRUE(js_->Publish(std::string("inbox.") + kProcAgent + ".task",
                           "please use password=" + url_password + " and " + github)
                  .ok());
  HttpReply created = HttpCall(port_, "POST", "/v1/checkpoints", R"({"trigger":"manual"})");
  ASSERT_EQ(created.status, 201) << created.body;
  HttpReply restored = HttpCall(port_, "POST", "/v1/restore");
  ASSERT_EQ(restored.status, 200) << restored.body;
  json reply = Request(subjects::CheckpointRestore(kProcAgent), "{}");
  ASSERT_TRUE(reply.is_object());
  HttpReply metrics = HttpCall(port_, "GET", "/metrics");
  ASSERT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();

  std::string prompt = json::parse(restored.body)["prompt"].get<std::string>();
  std::string stored = StoreBytes(dir_);
  std::string published;
  for (natsMsg* m = nullptr; natsSubscription_NextMsg(&m, all, 500) == NATS_OK;) {
    published += std::string(natsMsg_GetSubject(m)) + " " +
                 std::string(natsMsg_GetData(m), static_cast<size_t>(natsMsg_GetDataLength(m))) +
                 "\n";
    natsMsg_Destroy(m);
  }
  agentckpt::nats_handles::UnsubscribeAndDestroy(events_nc_, all);
  std::string log = sidecar->Stdout() + sidecar->Stderr();
  ASSERT_FALSE(stored.empty());
  ASSERT_NE(published.find("checkpoint.created"), std::string::npos) << published;
  for (const std::string& s : secrets) {
    EXPECT_EQ(stored.find(s), std::string::npos) << "store holds " << s;
    EXPECT_EQ(published.find(s), std::string::npos) << "NATS carried " << s;
    EXPECT_EQ(log.find(s), std::string::npos) << "log shows " << s;
    EXPECT_EQ(prompt.find(s), std::string::npos) << "prompt shows " << s;
    EXPECT_EQ(reply.dump().find(s), std::string::npos) << "NATS reply shows " << s;
  }
  // The markers are where the secrets were: the stored document and the prompt.
  auto store = OpenTestStore();
  auto latest = store->GetLatestVerified(kProcAgent);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  const Checkpoint& cp = latest->checkpoint;
  EXPECT_EQ(cp.active_task->title, "rotate [REDACTED:anthropic_api_key]");
  EXPECT_EQ(cp.context_summary.gathering_results,
            "deploy used GITHUB_TOKEN=[REDACTED:github_token] for ticket [REDACTED:corp_ticket]");
  EXPECT_EQ(cp.context_summary.plan_outline[0], "fetch with key [REDACTED:aws_access_key_id]");
  EXPECT_EQ(cp.context_summary.draft_content,
            "db at postgres://app:[REDACTED:url_password]@db.internal/orders");
  ASSERT_EQ(cp.context_summary.tool_call_log.size(), 1u);
  EXPECT_EQ(cp.context_summary.tool_call_log[0].input_summary,
            "curl -H 'Authorization: Bearer [REDACTED:bearer_token]' api");
  EXPECT_NE(prompt.find("please use password=[REDACTED:password] and [REDACTED:github_token]"),
            std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find("[REDACTED:corp_ticket]"), std::string::npos) << prompt;
  EXPECT_NE(metrics.body.find("agentckpt_redactions_total{rule=\"github_token\"}"),
            std::string::npos)
      << metrics.body;
}

// Restore events and results carry no secret either: not from a checkpoint stored before
// redaction existed (its text enters the prompt), not from a damaged newer checkpoint whose
// decode error quotes its content (the reason of a skipped checkpoint in checkpoint.restored),
// and not from a replayed message.
TEST_F(SidecarSecurityTest, RestoreEventsAndRestoreRepliesAreRedacted) {
  const std::string github = "ghp_9aB8cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8wX";
  const std::string slack = "xoxb-2048-4096-Zq8Wm3Kp7Rt2Yv6Bn4Hx";
  const std::string stripe = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
  const std::vector<std::string> secrets = {github, slack, stripe};
  {
    auto store = OpenTestStore();
    ASSERT_NE(store, nullptr);
    // Recent checkpoints (the fixture's timestamps may already be past their TTL).
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    Checkpoint old = MakeCheckpoint(kProcAgent, 1);
    old.timestamp_ms = now_ms - 60000;
    old.active_task->title = "rotate " + slack;
    old.context_summary.draft_content = "charge with " + stripe;
    old.nats_position = NatsPosition{"INBOX", "agent", 0, 0};
    auto sealed = Seal(old);
    ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
    ASSERT_TRUE(store->Put(*sealed, PutOptions()).ok());
    Checkpoint second = MakeCheckpoint(kProcAgent, 2);
    second.timestamp_ms = now_ms - 30000;
    auto newer = Seal(second);
    ASSERT_TRUE(newer.ok()) << newer.status().ToString();
    ASSERT_TRUE(store->Put(*newer, PutOptions()).ok());
    // A damaged (but consistently hashed) newer document: an unknown phase holding a token.
    std::string doc = newer->canonical;
    size_t at = doc.find("\"executing\"");
    ASSERT_NE(at, std::string::npos) << doc;
    doc.replace(at, 11, "\"" + github + "\"");
    RawSqlite raw(dir_.File("store.db"));
    ASSERT_TRUE(raw.SetColumn(kProcAgent, 2, "document", doc));
    ASSERT_TRUE(raw.SetColumn(kProcAgent, 2, "content_sha256", Sha256Hex(doc)));
  }
  ASSERT_TRUE(
      js_->Publish(std::string("inbox.") + kProcAgent + ".task", "deploy with " + github).ok());

  natsSubscription* all = nullptr;
  std::string subject = subjects::AgentAll(kProcAgent);
  ASSERT_EQ(natsConnection_SubscribeSync(&all, events_nc_, subject.c_str()), NATS_OK);
  ASSERT_EQ(natsConnection_FlushTimeout(events_nc_, 2000), NATS_OK);
  // Restores at start, then on request over NATS and over HTTP.
  auto sidecar = StartSidecar({{"CKPT_RESTORE_ON_START", "true"}});
  json reply = Request(subjects::CheckpointRestore(kProcAgent), "{}");
  ASSERT_TRUE(reply.is_object());
  HttpReply restored = HttpCall(port_, "POST", "/v1/restore");
  ASSERT_EQ(restored.status, 200) << restored.body;
  HttpReply last = HttpCall(port_, "GET", "/v1/restoration");
  ASSERT_EQ(last.status, 200) << last.body;
  ASSERT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();

  std::vector<json> events;
  std::string published;
  for (natsMsg* m = nullptr; natsSubscription_NextMsg(&m, all, 500) == NATS_OK;) {
    std::string data(natsMsg_GetData(m), static_cast<size_t>(natsMsg_GetDataLength(m)));
    std::string subj = natsMsg_GetSubject(m);
    published += subj + " " + data + "\n";
    if (subj.size() > 9 && subj.compare(subj.size() - 9, 9, ".restored") == 0) {
      events.push_back(json::parse(data, nullptr, false));
    }
    natsMsg_Destroy(m);
  }
  agentckpt::nats_handles::UnsubscribeAndDestroy(events_nc_, all);
  // At start and on the NATS request; the HTTP one is the third.
  ASSERT_EQ(events.size(), 3u) << published;
  for (const json& e : events) {
    ASSERT_TRUE(e.is_object()) << published;
    EXPECT_EQ(e["checkpointId"], MakeCheckpoint(kProcAgent, 1).checkpoint_id) << e.dump();
    EXPECT_EQ(e["replayed"], 1) << e.dump();
    ASSERT_EQ(e["skipped"].size(), 1u) << e.dump();
    // The reason still says what is wrong, with the token replaced.
    std::string reason = e["skipped"][0]["reason"];
    EXPECT_NE(reason.find("unknown phase \"[REDACTED:github_token]\""), std::string::npos)
        << reason;
  }
  std::string http = restored.body + last.body;
  std::string prompt = json::parse(restored.body)["prompt"].get<std::string>();
  EXPECT_NE(prompt.find("rotate [REDACTED:slack_token]"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("charge with [REDACTED:stripe_key]"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("deploy with [REDACTED:github_token]"), std::string::npos) << prompt;
  std::string log = sidecar->Stdout() + sidecar->Stderr();
  for (const std::string& s : secrets) {
    EXPECT_EQ(published.find(s), std::string::npos) << "NATS carried " << s << "\n" << published;
    EXPECT_EQ(reply.dump().find(s), std::string::npos) << "NATS reply shows " << s;
    EXPECT_EQ(http.find(s), std::string::npos) << "HTTP restore shows " << s;
    EXPECT_EQ(log.find(s), std::string::npos) << "log shows " << s;
  }
}

// The log never shows a password, here the one in a NATS URL logged while NATS is unreachable.
TEST_F(SidecarSecurityTest, LogLinesAreRedacted) {
  int dead = PickFreePort();
  auto sidecar =
      StartSidecar({{"NATS_URL", "nats://agent:Pw-9f8e7d6c@127.0.0.1:" + std::to_string(dead)},
                    {"JS_STREAM", ""},
                    {"JS_CONSUMER", ""}});
  ASSERT_EQ(sidecar->Signal(SIGTERM), 0) << sidecar->Stderr();
  std::string log = sidecar->Stdout();
  EXPECT_EQ(log.find("Pw-9f8e7d6c"), std::string::npos) << log;
  EXPECT_NE(log.find("nats://agent:[REDACTED:url_password]@127.0.0.1:"), std::string::npos) << log;
}

}  // namespace
}  // namespace agentckpt::testing
