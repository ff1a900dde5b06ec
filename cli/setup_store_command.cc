#include "cli/setup_store_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "store/jetstream/jetstream_store.h"

namespace agentckpt {

SetupStoreCommand::SetupStoreCommand(CLI::App* app) {
  command_ = app->add_subcommand("setup-store",
                                 "Create the streams a jetstream:// store needs (idempotent)");
  const char* env = std::getenv("CKPT_STORE");
  if (env != nullptr) store_url_ = env;
  command_->add_option("--store", store_url_, "jetstream://[host:port,...]/[PREFIX] ($CKPT_STORE)");
  command_->add_option("--replicas", replicas_, "Copies of each stream (1-5, default 3)")
      ->check(CLI::Range(1, 5));
  command_->add_flag("--json", json_, "Print a JSON object");
  AddNatsClientFlags(command_, &nats_);
}

bool SetupStoreCommand::Selected() const { return command_->parsed(); }

int SetupStoreCommand::Execute() {
  if (store_url_.rfind("jetstream://", 0) != 0) {
    std::fprintf(stderr,
                 "setup-store: --store (or CKPT_STORE) must be a jetstream:// URL; sqlite:// and "
                 "firestore:// stores need no set-up\n");
    return 2;
  }
  auto options = JetStreamStore::ParseUrl(store_url_, nats_.nats_url, nats_);
  if (!options.ok()) {
    std::fprintf(stderr, "setup-store: %s\n", options.status().message().c_str());
    return 2;
  }
  options->replicas = replicas_;
  options->create = true;
  options->api.request_timeout_ms = nats_.timeout_ms;
  const JetStreamStoreOptions spec = *options;
  auto store = JetStreamStore::Open(std::move(options).value());
  if (!store.ok()) {
    std::fprintf(stderr, "setup-store: %s\n", store.status().ToString().c_str());
    return store.status().code() == StatusCode::kInvalidArgument ? 2 : 3;
  }
  nlohmann::json streams = nlohmann::json::array();
  for (const JsStreamSpec& s : JetStreamStore::StreamSpecs(spec)) {
    auto placement = (*store)->api()->StreamPlacement(s.name);
    if (!placement.ok()) {
      std::fprintf(stderr, "setup-store: %s\n", placement.status().ToString().c_str());
      return 3;
    }
    streams.push_back({{"stream", s.name},
                       {"subjects", s.subjects},
                       {"replicas", placement->replicas},
                       {"leader", placement->leader}});
    if (placement->replicas != replicas_) {
      std::fprintf(stderr, "setup-store: stream %s exists with %d replicas, not %d\n",
                   s.name.c_str(), placement->replicas, replicas_);
    }
  }
  if (json_) {
    std::printf("%s\n", nlohmann::json{{"prefix", spec.prefix}, {"streams", streams}}.dump().c_str());
  } else {
    for (const auto& s : streams) {
      std::printf("%s  %s  replicas %d  leader %s\n", s["stream"].get<std::string>().c_str(),
                  s["subjects"][0].get<std::string>().c_str(), s["replicas"].get<int>(),
                  s["leader"].get<std::string>().c_str());
    }
  }
  return 0;
}

}  // namespace agentckpt
