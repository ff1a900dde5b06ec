// api_paths: the methods each path accepts and the bounded route labels, checked against the
// endpoint table of docs/http-api.md written out here by hand.
#include "http/api_paths.h"

#include <gtest/gtest.h>

#include <string>

namespace agentckpt::api_paths {
namespace {

TEST(ApiPathsTest, EveryEndpointHasItsMethods) {
  struct Case {
    const char* path;
    const char* methods;
  } cases[] = {
      {"/healthz", "GET"},
      {"/readyz", "GET"},
      {"/metrics", "GET"},
      {"/v1/restoration", "GET"},
      {"/v1/context", "GET, PUT, PATCH"},
      {"/v1/restore", "POST"},
      {"/v1/agent-start", "POST"},
      {"/v1/tool-calls", "GET, POST"},
      {"/v1/tool-calls/begin", "POST"},
      {"/v1/tool-calls/call-1/end", "POST"},
      {"/v1/tool-calls/call-1/reconcile", "POST"},
      {"/v1/checkpoints", "GET, POST"},
      {"/v1/checkpoints/ckpt-1", "GET"},
  };
  for (const Case& c : cases) EXPECT_EQ(AllowedMethods(c.path), c.methods) << c.path;
}

TEST(ApiPathsTest, PathsNoEndpointServesAcceptNothing) {
  for (const char* path :
       {"/", "/v1", "/v1/checkpoints/", "/v1/checkpoints/a/b", "/v1/tool-calls/call-1",
        "/v1/tool-calls//end", "/v1/tool-calls/call-1/delete", "/v1/contexts", "/healthz/"}) {
    EXPECT_EQ(AllowedMethods(path), "") << path;
  }
}

TEST(ApiPathsTest, RouteLabelsAreTemplatesWithABoundedSetOfValues) {
  struct Case {
    const char* path;
    const char* route;
  } cases[] = {
      {"/v1/context", "/v1/context"},
      {"/v1/tool-calls/begin", "/v1/tool-calls/begin"},
      {"/v1/checkpoints/0193-abc", "/v1/checkpoints/{id}"},
      {"/v1/checkpoints/a/b", "other"},
      {"/v1/tool-calls/c-7/end", "/v1/tool-calls/{callId}/end"},
      {"/v1/tool-calls/c-7/reconcile", "/v1/tool-calls/{callId}/reconcile"},
      {"/v1/tool-calls/c-7/explode", "other"},
      {"/v1/gates/g-1", "/v1/gates/{gateId}"},
      {"/v1/gates/g-1/resolve", "/v1/gates/{gateId}/resolve"},
      {"/v1/gates/g-1/consume", "/v1/gates/{gateId}/consume"},
      {"/v1/gates//resolve", "other"},
      {"/v1/anything-else", "other"},
      {"/v1/checkpoints/", "other"},
  };
  for (const Case& c : cases) EXPECT_EQ(RouteTemplate(c.path), c.route) << c.path;
}

TEST(ApiPathsTest, UnknownMethodsShareOneLabel) {
  EXPECT_EQ(MethodLabel("PATCH"), "PATCH");
  EXPECT_EQ(MethodLabel("OPTIONS"), "OPTIONS");
  EXPECT_EQ(MethodLabel("BREW"), "other");
  EXPECT_EQ(MethodLabel("get"), "other");
  EXPECT_EQ(MethodLabel(std::string(10'000, 'X')), "other");
}

}  // namespace
}  // namespace agentckpt::api_paths
