// JSON-lines logging on stdout through spdlog: one JSON object per line with "ts" (RFC 3339 ms),
// "level" and the caller's fields. Thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace agentckpt {

class Redactor;

// Creates the stdout logger (idempotent). `level` is debug, info, warn or error.
void InitJsonLog(const std::string& level);

// Redacts every line from now on: the message and every string field (redact/redactor.h).
// `redactor` must stay alive until it is replaced (null: no redaction, the default).
void SetLogRedactor(const Redactor* redactor);

// Writes one line: {"ts":..., "level":..., "msg": msg, ...fields}. Flushed at once.
void LogInfo(const std::string& msg, nlohmann::json fields = nlohmann::json::object());
void LogWarn(const std::string& msg, nlohmann::json fields = nlohmann::json::object());
void LogError(const std::string& msg, nlohmann::json fields = nlohmann::json::object());
void LogDebug(const std::string& msg, nlohmann::json fields = nlohmann::json::object());

}  // namespace agentckpt
