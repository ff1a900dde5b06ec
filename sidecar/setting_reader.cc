// SettingReader (config.h): one setting's value from its flag or its environment variable.
#include <charconv>
#include <cstdlib>

#include "sidecar/config.h"

namespace agentckpt {
namespace {

const SettingSpec& SpecOf(const std::string& flag) {
  for (const SettingSpec& s : SettingSpecs()) {
    if (s.flag == flag) return s;
  }
  std::abort();  // a setting name not in the table is a programming error
}

}  // namespace

SettingReader::SettingReader(const std::map<std::string, std::string>& flags, const EnvLookup& env)
    : flags_(flags), env_(env) {}

std::optional<std::string> SettingReader::Raw(const std::string& flag) const {
  auto it = flags_.find(flag);
  if (it != flags_.end()) return it->second;
  auto v = env_(SpecOf(flag).env);
  if (v && !v->empty()) return v;
  return std::nullopt;
}

Status SettingReader::String(const std::string& flag, std::string* out) const {
  auto v = Raw(flag);
  if (v) *out = *v;
  return OkStatus();
}

Status SettingReader::Int(const std::string& flag, int64_t lo, int64_t hi, int64_t* out) const {
  auto v = Raw(flag);
  if (!v) return OkStatus();
  int64_t parsed = 0;
  const char* end = v->data() + v->size();
  auto [ptr, ec] = std::from_chars(v->data(), end, parsed);
  if (ec != std::errc() || ptr != end || parsed < lo || parsed > hi) {
    return Bad(flag, "expected an integer from " + std::to_string(lo) + " to " +
                         std::to_string(hi) + ", got \"" + *v + "\"");
  }
  *out = parsed;
  return OkStatus();
}

Status SettingReader::Int32(const std::string& flag, int64_t lo, int64_t hi, int* out) const {
  int64_t v = *out;
  Status s = Int(flag, lo, hi, &v);
  *out = static_cast<int>(v);
  return s;
}

Status SettingReader::Bool(const std::string& flag, bool* out) const {
  auto v = Raw(flag);
  if (!v) return OkStatus();
  if (*v == "true" || *v == "1" || *v == "yes") {
    *out = true;
  } else if (*v == "false" || *v == "0" || *v == "no") {
    *out = false;
  } else {
    return Bad(flag, "expected true or false, got \"" + *v + "\"");
  }
  return OkStatus();
}

Status SettingReader::Bad(const std::string& flag, const std::string& why) {
  const SettingSpec& spec = SpecOf(flag);
  return InvalidArgumentError(spec.env + " (--" + spec.flag + "): " + why);
}

}  // namespace agentckpt
