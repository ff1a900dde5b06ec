// Helpers shared by the JetStream store's contract tests (one server and the 3-node cluster).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "store/jetstream/jetstream_store.h"

namespace agentckpt::testing {

// Opens (creating its streams) the store with `prefix` on `servers`; null and a test failure
// when it does not open.
inline std::unique_ptr<JetStreamStore> OpenJetStreamPrefix(const std::string& servers,
                                                           const std::string& prefix,
                                                           int replicas) {
  JetStreamStoreOptions options;
  options.api.servers = servers;
  options.prefix = prefix;
  options.replicas = replicas;
  options.create = true;
  auto store = JetStreamStore::Open(std::move(options));
  if (!store.ok()) {
    ADD_FAILURE() << store.status().ToString();
    return nullptr;
  }
  return std::move(store).value();
}

// Rewrites the stored document of `checkpoint_id` with its sequenceNumber as a string, behind
// the store's back (its subject keeps one message, so the publish replaces it).
inline void DamageJetStreamDocument(JetStreamStore* store, const std::string& agent,
                                    const std::string& checkpoint_id) {
  ASSERT_NE(store, nullptr);
  auto listed = store->List(agent, 100000);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::string sha;
  for (const CheckpointInfo& info : *listed) {
    if (info.checkpoint_id == checkpoint_id) sha = info.content_sha256;
  }
  ASSERT_FALSE(sha.empty()) << checkpoint_id << " is not listed";
  const std::string subject = store->CheckpointSubject(agent, checkpoint_id, sha);
  auto msg = store->api()->GetLast(store->CheckpointsStream(), subject);
  ASSERT_TRUE(msg.ok() && msg->has_value()) << msg.status().ToString();
  std::string doc = (*msg)->data;
  const std::string key = "\"sequenceNumber\":";
  size_t at = doc.find(key);
  ASSERT_NE(at, std::string::npos) << doc;
  size_t end = doc.find_first_of(",}", at + key.size());
  doc.replace(at + key.size(), end - at - key.size(), "\"not a number\"");
  auto put = store->api()->Publish(subject, doc, {}, "damage-" + checkpoint_id, std::nullopt);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
}

}  // namespace agentckpt::testing
