#include "sidecar/config.h"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace agentckpt {
namespace {

EnvLookup FakeEnvVars(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(SidecarConfigTest, DefaultsWithOnlyAgentId) {
  auto c = ResolveConfig({}, FakeEnvVars({{"AGENT_ID", "agent-1"}}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->agent_id, "agent-1");
  EXPECT_EQ(c->nats_url, "nats://127.0.0.1:4222");
  EXPECT_EQ(c->store_url, "sqlite://agentckpt-data/agent-1.db");
  EXPECT_EQ(c->http_host, "127.0.0.1");
  EXPECT_EQ(c->http_port, 8787);
  EXPECT_EQ(c->period_s, 300);
  EXPECT_EQ(c->keep, 48);
  EXPECT_EQ(c->ttl_days, 7);
  EXPECT_EQ(c->stale_after_s, 900);
  EXPECT_EQ(c->replay_max, 50);
  EXPECT_EQ(c->prompt_max_tokens, 4000);
  EXPECT_EQ(c->tokenizer, "o200k_base");
  EXPECT_EQ(c->http_body_max_bytes, 1 << 20);
  EXPECT_TRUE(c->restore_on_start);
  EXPECT_TRUE(c->js_stream.empty());
}

TEST(SidecarConfigTest, AcceptsEveryStoreScheme) {
  for (const char* url : {"sqlite:///var/lib/x.db", "firestore://projects/p/databases/(default)",
                          "jetstream:///AGENTCKPT",
                          "jetstream://nats-0:4222,nats-1:4222/AGENTCKPT?replicas=3"}) {
    auto c = ResolveConfig({}, FakeEnvVars({{"AGENT_ID", "a"}, {"CKPT_STORE", url}}));
    ASSERT_TRUE(c.ok()) << url << ": " << c.status().ToString();
    EXPECT_EQ(c->store_url, url);
  }
  auto bad = ResolveConfig({}, FakeEnvVars({{"AGENT_ID", "a"}, {"CKPT_STORE", "redis://x"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("jetstream://"), std::string::npos)
      << bad.status().ToString();
}

TEST(SidecarConfigTest, FlagWinsOverEnvironment) {
  auto c = ResolveConfig(
      {{"period-s", "30"}, {"agent-id", "from-flag"}},
      FakeEnvVars({{"AGENT_ID", "from-env"}, {"CKPT_PERIOD_S", "60"}, {"CKPT_KEEP", "5"}}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->agent_id, "from-flag");
  EXPECT_EQ(c->period_s, 30);
  EXPECT_EQ(c->keep, 5);
}

TEST(SidecarConfigTest, EmptyVariableCountsAsUnset) {
  auto c = ResolveConfig({}, FakeEnvVars({{"AGENT_ID", "a"}, {"CKPT_PERIOD_S", ""}}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->period_s, 300);
}

TEST(SidecarConfigTest, ParsesEverySetting) {
  testing::TempDir dir;
  std::string file = dir.File("f");
  FILE* f = std::fopen(file.c_str(), "w");
  std::fputs("x", f);
  std::fclose(f);
  auto c = ResolveConfig({}, FakeEnvVars({{"AGENT_ID", "a"},
                                          {"NATS_URL", "nats://n1:4222,nats://n2:4222"},
                                          {"CKPT_STORE", "sqlite:///var/lib/x.db"},
                                          {"CKPT_HTTP_ADDR", "0.0.0.0:9000"},
                                          {"CKPT_TTL_DAYS", "30"},
                                          {"JS_STREAM", "INBOX"},
                                          {"JS_CONSUMER", "agent"},
                                          {"WORKSPACE_DIR", dir.path()},
                                          {"NATS_CREDS", file},
                                          {"NATS_USER", "u"},
                                          {"NATS_PASSWORD", "p"},
                                          {"NATS_TLS_CA", file},
                                          {"NATS_TLS_CERT", file},
                                          {"NATS_TLS_KEY", file},
                                          {"CKPT_STALE_AFTER_S", "60"},
                                          {"CKPT_REPLAY_MAX", "0"},
                                          {"CKPT_PROMPT_MAX_TOKENS", "2000"},
                                          {"CKPT_TOKENIZER", "cl100k_base"},
                                          {"CKPT_HTTP_BODY_MAX_BYTES", "4096"},
                                          {"CKPT_RESTORE_ON_START", "false"},
                                          {"CKPT_LOG_LEVEL", "debug"}}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->store_url, "sqlite:///var/lib/x.db");
  EXPECT_EQ(c->http_host, "0.0.0.0");
  EXPECT_EQ(c->http_port, 9000);
  EXPECT_EQ(c->ttl_days, 30);
  EXPECT_EQ(c->js_stream, "INBOX");
  EXPECT_EQ(c->js_consumer, "agent");
  EXPECT_EQ(c->workspace_dir, dir.path());
  EXPECT_EQ(c->nats_user, "u");
  EXPECT_EQ(c->stale_after_s, 60);
  EXPECT_EQ(c->replay_max, 0);
  EXPECT_EQ(c->prompt_max_tokens, 2000);
  EXPECT_EQ(c->tokenizer, "cl100k_base");
  EXPECT_EQ(c->http_body_max_bytes, 4096);
  EXPECT_FALSE(c->restore_on_start);
  EXPECT_EQ(c->log_level, "debug");
}

struct BadCase {
  std::map<std::string, std::string> env;
  std::string named;  // the setting the message must start with
};

TEST(SidecarConfigTest, BadSettingsAreRejectedNamingTheSetting) {
  const std::vector<BadCase> cases = {
      {{}, "AGENT_ID"},
      {{{"AGENT_ID", "bad id!"}}, "AGENT_ID"},
      {{{"AGENT_ID", "a"}, {"NATS_URL", "localhost"}}, "NATS_URL"},
      {{{"AGENT_ID", "a"}, {"CKPT_STORE", "mysql://x"}}, "CKPT_STORE"},
      {{{"AGENT_ID", "a"}, {"CKPT_STORE", "sqlite://"}}, "CKPT_STORE"},
      {{{"AGENT_ID", "a"}, {"CKPT_HTTP_ADDR", "8787"}}, "CKPT_HTTP_ADDR"},
      {{{"AGENT_ID", "a"}, {"CKPT_HTTP_ADDR", "127.0.0.1:0"}}, "CKPT_HTTP_ADDR"},
      {{{"AGENT_ID", "a"}, {"CKPT_HTTP_ADDR", "127.0.0.1:99999"}}, "CKPT_HTTP_ADDR"},
      {{{"AGENT_ID", "a"}, {"CKPT_PERIOD_S", "0"}}, "CKPT_PERIOD_S"},
      {{{"AGENT_ID", "a"}, {"CKPT_PERIOD_S", "5m"}}, "CKPT_PERIOD_S"},
      {{{"AGENT_ID", "a"}, {"CKPT_PERIOD_S", "-1"}}, "CKPT_PERIOD_S"},
      {{{"AGENT_ID", "a"}, {"CKPT_KEEP", "0"}}, "CKPT_KEEP"},
      {{{"AGENT_ID", "a"}, {"CKPT_TTL_DAYS", "9999"}}, "CKPT_TTL_DAYS"},
      {{{"AGENT_ID", "a"}, {"JS_STREAM", "S"}}, "JS_CONSUMER"},
      {{{"AGENT_ID", "a"}, {"JS_CONSUMER", "C"}}, "JS_STREAM"},
      {{{"AGENT_ID", "a"}, {"WORKSPACE_DIR", "/no/such/dir"}}, "WORKSPACE_DIR"},
      {{{"AGENT_ID", "a"}, {"NATS_CREDS", "/no/such/file"}}, "NATS_CREDS"},
      {{{"AGENT_ID", "a"}, {"NATS_USER", "u"}}, "NATS_PASSWORD"},
      {{{"AGENT_ID", "a"}, {"NATS_NKEY", "UABC"}}, "NATS_NKEY"},
      {{{"AGENT_ID", "a"}, {"NATS_NKEY_SEED", "/no/such/seed"}}, "NATS_NKEY_SEED"},
      {{{"AGENT_ID", "a"}, {"NATS_TLS_CA", "/no/such/ca"}}, "NATS_TLS_CA"},
      {{{"AGENT_ID", "a"}, {"CKPT_STALE_AFTER_S", "0"}}, "CKPT_STALE_AFTER_S"},
      {{{"AGENT_ID", "a"}, {"CKPT_REPLAY_MAX", "x"}}, "CKPT_REPLAY_MAX"},
      {{{"AGENT_ID", "a"}, {"CKPT_PROMPT_MAX_TOKENS", "10"}}, "CKPT_PROMPT_MAX_TOKENS"},
      {{{"AGENT_ID", "a"}, {"CKPT_TOKENIZER", "claude"}}, "CKPT_TOKENIZER"},
      {{{"AGENT_ID", "a"}, {"CKPT_HTTP_BODY_MAX_BYTES", "1"}}, "CKPT_HTTP_BODY_MAX_BYTES"},
      {{{"AGENT_ID", "a"}, {"CKPT_RESTORE_ON_START", "maybe"}}, "CKPT_RESTORE_ON_START"},
      {{{"AGENT_ID", "a"}, {"CKPT_LOG_LEVEL", "loud"}}, "CKPT_LOG_LEVEL"},
  };
  for (const BadCase& bc : cases) {
    auto c = ResolveConfig({}, FakeEnvVars(bc.env));
    ASSERT_FALSE(c.ok()) << bc.named;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(c.status().message().rfind(bc.named, 0), 0u) << c.status().message();
  }
}

// Credential, key and certificate files are checked before anything connects: a missing file
// or a directory is a bad setting that names the variable and the path.
TEST(SidecarConfigTest, MissingTlsOrCredsFilesNameTheVariableAndPath) {
  testing::TempDir dir;
  std::string file = dir.File("f");
  std::FILE* f = std::fopen(file.c_str(), "w");
  std::fputs("x", f);
  std::fclose(f);
  const std::string missing = dir.File("missing.pem");
  for (const char* var :
       {"NATS_CREDS", "NATS_NKEY_SEED", "NATS_TLS_CA", "NATS_TLS_CERT", "NATS_TLS_KEY"}) {
    for (const std::string& path : {missing, dir.path()}) {
      std::map<std::string, std::string> env = {{"AGENT_ID", "a"}};
      if (std::string(var) == "NATS_TLS_CERT") env["NATS_TLS_KEY"] = file;
      if (std::string(var) == "NATS_TLS_KEY") env["NATS_TLS_CERT"] = file;
      env[var] = path;
      auto c = ResolveConfig({}, FakeEnvVars(env));
      ASSERT_FALSE(c.ok()) << var << " " << path;
      EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
      const std::string& m = c.status().message();
      EXPECT_EQ(m.rfind(std::string(var) + " (--"), 0u) << m;
      EXPECT_NE(m.find("\"" + path + "\""), std::string::npos) << m;
      EXPECT_NE(m.find(path == missing ? "No such file" : "not a regular file"), std::string::npos)
          << m;
    }
  }
}

TEST(SidecarConfigTest, UnknownFlagIsRejected) {
  auto c = ResolveConfig({{"no-such", "1"}}, FakeEnvVars({{"AGENT_ID", "a"}}));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("no-such"), std::string::npos);
}

TEST(SidecarConfigTest, EverySettingHasFlagEnvAndHelp) {
  for (const SettingSpec& s : SettingSpecs()) {
    EXPECT_FALSE(s.flag.empty());
    EXPECT_FALSE(s.env.empty());
    EXPECT_FALSE(s.help.empty());
  }
}

}  // namespace
}  // namespace agentckpt
