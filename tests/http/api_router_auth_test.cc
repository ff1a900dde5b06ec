// ApiRouter's bearer-token check, without a server: which paths are open, which need the token,
// and what a refused request gets.
#include <gtest/gtest.h>

#include "context/context_state.h"
#include "http/api_router.h"
#include "observability/metrics.h"

namespace agentckpt {
namespace {

class ApiRouterAuthTest : public ::testing::Test {
 protected:
  ApiRouter MakeRouter(const std::string& token) {
    ApiDeps deps;
    deps.agent_id = "agent-a";
    deps.context = &context_;
    deps.metrics = &metrics_;
    deps.bearer_token = token;
    deps.readiness = [] { return nlohmann::json{{"ready", true}}; };
    return ApiRouter(std::move(deps));
  }
  static ApiRequest Get(const std::string& path, const std::string& authorization = "") {
    ApiRequest r;
    r.method = "GET";
    r.path = path;
    r.authorization = authorization;
    return r;
  }

  ContextState context_;
  Metrics metrics_;
};

TEST_F(ApiRouterAuthTest, WithoutATokenEverythingIsOpen) {
  ApiRouter router = MakeRouter("");
  EXPECT_TRUE(router.Authorized(Get("/v1/context")));
  EXPECT_EQ(router.Handle(Get("/v1/context")).status, 200);
}

TEST_F(ApiRouterAuthTest, ProbesAndMetricsStayOpen) {
  ApiRouter router = MakeRouter("s3cret-token");
  for (const char* path : {"/healthz", "/readyz", "/metrics"}) {
    EXPECT_TRUE(router.Authorized(Get(path))) << path;
    EXPECT_EQ(router.Handle(Get(path)).status, 200) << path;
  }
}

TEST_F(ApiRouterAuthTest, MissingOrWrongTokenIs401WithChallenge) {
  ApiRouter router = MakeRouter("s3cret-token");
  for (const std::string& header :
       {std::string(), std::string("Bearer"), std::string("Bearer "), std::string("Bearer s3cret"),
        std::string("Bearer s3cret-token2"), std::string("Basic s3cret-token"),
        std::string("s3cret-token"), std::string("Bearer S3CRET-TOKEN")}) {
    for (const char* path : {"/v1/context", "/v1/checkpoints", "/v1/restore", "/nowhere"}) {
      ApiRequest req = Get(path, header);
      EXPECT_FALSE(router.Authorized(req)) << header;
      ApiResponse r = router.Handle(req);
      EXPECT_EQ(r.status, 401) << header << " " << path;
      EXPECT_EQ(r.headers["WWW-Authenticate"], "Bearer");
      auto body = nlohmann::json::parse(r.body);
      EXPECT_EQ(body["error"]["code"], "UNAUTHENTICATED");
    }
  }
  // A refused write changes nothing, whatever its body.
  ApiRequest put = Get("/v1/context", "Bearer wrong");
  put.method = "PUT";
  put.body = R"({"contextSummary":{"gatheringResults":"x"}})";
  EXPECT_EQ(router.Handle(put).status, 401);
  EXPECT_EQ(context_.Snapshot().revision, 0u);
  EXPECT_NE(metrics_.Render().find("agentckpt_http_requests_total{code=\"401\"}"),
            std::string::npos);
}

TEST_F(ApiRouterAuthTest, RightTokenPasses) {
  ApiRouter router = MakeRouter("s3cret-token");
  for (const std::string header : {"Bearer s3cret-token", "bearer s3cret-token",
                                   "BEARER   s3cret-token ", "Bearer s3cret-token"}) {
    EXPECT_TRUE(router.Authorized(Get("/v1/context", header))) << header;
    EXPECT_EQ(router.Handle(Get("/v1/context", header)).status, 200) << header;
  }
}

}  // namespace
}  // namespace agentckpt

namespace agentckpt {
namespace {

// Every request is timed under its method and route template, refused ones included, with a
// bounded set of label values whatever the path.
TEST_F(ApiRouterAuthTest, RequestDurationIsLabelledByRouteTemplate) {
  ApiRouter router = MakeRouter("s3cret-token");
  const std::pair<const char*, const char*> cases[] = {
      {"/v1/checkpoints/7f1c", "/v1/checkpoints/{id}"},
      {"/v1/checkpoints/7f1c/extra", "other"},
      {"/v1/tool-calls/begin", "/v1/tool-calls/begin"},
      {"/v1/tool-calls/c-42/end", "/v1/tool-calls/{callId}/end"},
      {"/v1/tool-calls/c-42/reconcile", "/v1/tool-calls/{callId}/reconcile"},
      {"/v1/gates/g-1", "/v1/gates/{gateId}"},
      {"/v1/gates/g-1/resolve", "/v1/gates/{gateId}/resolve"},
      {"/v1/gates/g-1/explode", "other"},
      {"/nowhere/8a9b", "other"},
      {"/healthz", "/healthz"},
  };
  for (const auto& [path, route] : cases) {
    ApiRequest req = Get(path);
    req.method = std::string(path).find("/end") != std::string::npos ? "POST" : "GET";
    router.Handle(req);
  }
  ApiRequest odd = Get("/v1/context");
  odd.method = "BREW";
  router.Handle(odd);
  std::string text = metrics_.Render();
  for (const auto& [path, route] : cases) {
    EXPECT_NE(text.find(std::string("route=\"") + route + "\""), std::string::npos) << path;
  }
  EXPECT_NE(text.find("agentckpt_http_request_duration_seconds_count{method=\"POST\",route=\"/v1/"
                      "tool-calls/{callId}/end\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("agentckpt_http_request_duration_seconds_count{method=\"other\",route=\"/v1/"
                      "context\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("agentckpt_http_request_duration_seconds_count{method=\"GET\",route="
                      "\"other\"} 3"),
            std::string::npos)
      << text;
  for (const char* leaked : {"7f1c", "c-42", "g-1", "8a9b", "BREW", "explode"}) {
    EXPECT_EQ(text.find(leaked), std::string::npos) << leaked << " became a label value";
  }
}

}  // namespace
}  // namespace agentckpt
