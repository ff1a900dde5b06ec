#include "checkpoint/json_reader.h"

#include <limits>

#include "common/time_format.h"

namespace agentckpt::internal {

ObjectReader::ObjectReader(const nlohmann::json& j, std::string path)
    : j_(j), path_(std::move(path)) {
  if (!j_.is_object()) {
    status_ = InvalidArgumentError((path_.empty() ? std::string("document") : path_) +
                                   ": expected an object");
  }
}

std::string ObjectReader::FieldPath(const char* key) const {
  return path_.empty() ? std::string(key) : path_ + "." + key;
}

void ObjectReader::Fail(const std::string& field_path, const std::string& reason) {
  if (status_.ok()) status_ = InvalidArgumentError(field_path + ": " + reason);
}

const nlohmann::json* ObjectReader::Get(const char* key) {
  if (!status_.ok()) return nullptr;
  seen_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) {
    Fail(FieldPath(key), "missing field");
    return nullptr;
  }
  return &*it;
}

const nlohmann::json* ObjectReader::Member(const char* key, bool optional) {
  if (!status_.ok()) return nullptr;
  seen_.insert(key);
  auto it = j_.find(key);
  if (it == j_.end()) {
    if (!optional) Fail(FieldPath(key), "missing field");
    return nullptr;
  }
  return &*it;
}

bool ObjectReader::String(const char* key, std::string* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return false;
  if (!v->is_string()) {
    Fail(FieldPath(key), "expected a string");
    return false;
  }
  *out = v->get_ref<const std::string&>();
  return true;
}

bool ObjectReader::Int(const char* key, int64_t min, int64_t max, int64_t* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return false;
  int64_t value;
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      Fail(FieldPath(key), "integer out of range");
      return false;
    }
    value = static_cast<int64_t>(u);
  } else if (v->is_number_integer()) {
    value = v->get<int64_t>();
  } else {
    Fail(FieldPath(key), "expected an integer");
    return false;
  }
  if (value < min || value > max) {
    Fail(FieldPath(key), "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                             ", got " + std::to_string(value));
    return false;
  }
  *out = value;
  return true;
}

bool ObjectReader::UInt(const char* key, uint64_t* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return false;
  if (v->is_number_unsigned()) {
    *out = v->get<uint64_t>();
    return true;
  }
  if (v->is_number_integer()) {
    Fail(FieldPath(key), "must not be negative");
  } else {
    Fail(FieldPath(key), "expected a non-negative integer");
  }
  return false;
}

bool ObjectReader::Bool(const char* key, bool* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return false;
  if (!v->is_boolean()) {
    Fail(FieldPath(key), "expected true or false");
    return false;
  }
  *out = v->get<bool>();
  return true;
}

bool ObjectReader::Timestamp(const char* key, int64_t* out) {
  std::string text;
  if (!String(key, &text)) return false;
  StatusOr<int64_t> ms = ParseRfc3339Millis(text);
  if (!ms.ok()) {
    Fail(FieldPath(key), ms.status().message());
    return false;
  }
  *out = *ms;
  return true;
}

bool ObjectReader::StringArray(const char* key, std::vector<std::string>* out) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return false;
  if (!v->is_array()) {
    Fail(FieldPath(key), "expected an array of strings");
    return false;
  }
  std::vector<std::string> items;
  items.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    const auto& item = (*v)[i];
    if (!item.is_string()) {
      Fail(FieldPath(key) + "[" + std::to_string(i) + "]", "expected a string");
      return false;
    }
    items.push_back(item.get_ref<const std::string&>());
  }
  *out = std::move(items);
  return true;
}

void ObjectReader::RejectUnknown() {
  if (!status_.ok()) return;
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    if (seen_.count(it.key()) == 0) {
      Fail(FieldPath(it.key().c_str()), "unknown field");
      return;
    }
  }
}

}  // namespace agentckpt::internal
