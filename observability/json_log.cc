#include "observability/json_log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>

#include "common/env.h"
#include "common/time_format.h"
#include "redact/redactor.h"

namespace agentckpt {
namespace {

std::atomic<const Redactor*> log_redactor{nullptr};

std::shared_ptr<spdlog::logger> Logger() {
  static std::once_flag once;
  static std::shared_ptr<spdlog::logger> logger;
  std::call_once(once, [] {
    logger = spdlog::stdout_logger_mt("agentckpt-json");
    logger->set_pattern("%v");
    logger->flush_on(spdlog::level::debug);
    logger->set_level(spdlog::level::info);
  });
  return logger;
}

void Write(spdlog::level::level_enum level, const char* name, const std::string& msg,
           nlohmann::json fields) {
  auto logger = Logger();
  if (!logger->should_log(level)) return;
  nlohmann::json line = nlohmann::json::object();
  line["ts"] = FormatRfc3339Millis(Env::Default()->NowUnixMillis());
  line["level"] = name;
  line["msg"] = msg;
  if (fields.is_object()) {
    for (auto& [k, v] : fields.items()) line[k] = std::move(v);
  }
  if (const Redactor* redactor = log_redactor.load(std::memory_order_acquire)) {
    redactor->RedactJson(&line);
  }
  logger->log(level, "{}", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

void SetLogRedactor(const Redactor* redactor) {
  log_redactor.store(redactor, std::memory_order_release);
}

void InitJsonLog(const std::string& level) {
  auto logger = Logger();
  if (level == "debug") {
    logger->set_level(spdlog::level::debug);
  } else if (level == "warn") {
    logger->set_level(spdlog::level::warn);
  } else if (level == "error") {
    logger->set_level(spdlog::level::err);
  } else {
    logger->set_level(spdlog::level::info);
  }
}

void LogInfo(const std::string& msg, nlohmann::json fields) {
  Write(spdlog::level::info, "info", msg, std::move(fields));
}
void LogWarn(const std::string& msg, nlohmann::json fields) {
  Write(spdlog::level::warn, "warn", msg, std::move(fields));
}
void LogError(const std::string& msg, nlohmann::json fields) {
  Write(spdlog::level::err, "error", msg, std::move(fields));
}
void LogDebug(const std::string& msg, nlohmann::json fields) {
  Write(spdlog::level::debug, "debug", msg, std::move(fields));
}

}  // namespace agentckpt
