#include "checkpoint/json_reader.h"

#include <cstring>

#include "common/time_format.h"

namespace agentckpt::internal {

using simdjson::dom::element;
using simdjson::dom::element_type;

StatusOr<element> ParseJson(std::string_view text) {
  thread_local simdjson::dom::parser parser;
  element root;
  auto error = parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(root);
  if (error) {
    return InvalidArgumentError(std::string("document: not valid JSON (or not UTF-8): ") +
                                simdjson::error_message(error));
  }
  return root;
}

ObjectReader::ObjectReader(element e, std::string path) : path_(std::move(path)) {
  if (e.get_object().get(obj_)) {
    status_ = InvalidArgumentError((path_.empty() ? std::string("document") : path_) +
                                   ": expected an object");
  }
}

std::string ObjectReader::FieldPath(std::string_view key) const {
  std::string p = path_;
  if (!p.empty()) p += '.';
  p.append(key);
  return p;
}

void ObjectReader::Fail(const std::string& field_path, const std::string& reason) {
  if (status_.ok()) status_ = InvalidArgumentError(field_path + ": " + reason);
}

bool ObjectReader::Member(const char* key, bool optional, element* out) {
  if (!status_.ok()) return false;
  seen_.push_back(key);
  if (obj_.at_key(key).get(*out)) {
    if (!optional) Fail(FieldPath(key), "missing field");
    return false;
  }
  return true;
}

bool ObjectReader::Get(const char* key, element* out) { return Member(key, false, out); }

bool ObjectReader::String(const char* key, std::string* out) {
  element v;
  if (!Get(key, &v)) return false;
  std::string_view sv;
  if (v.get_string().get(sv)) {
    Fail(FieldPath(key), "expected a string");
    return false;
  }
  out->assign(sv.data(), sv.size());
  return true;
}

bool ObjectReader::Int(const char* key, int64_t min, int64_t max, int64_t* out) {
  element v;
  if (!Get(key, &v)) return false;
  if (v.type() == element_type::UINT64) {
    Fail(FieldPath(key), "integer out of range");
    return false;
  }
  int64_t value;
  if (v.type() != element_type::INT64 || v.get_int64().get(value)) {
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
  element v;
  if (!Get(key, &v)) return false;
  if (v.type() == element_type::INT64) {
    int64_t value = 0;
    if (v.get_int64().get(value) || value < 0) {
      Fail(FieldPath(key), "must not be negative");
      return false;
    }
    *out = static_cast<uint64_t>(value);
    return true;
  }
  if (v.type() == element_type::UINT64 && !v.get_uint64().get(*out)) return true;
  Fail(FieldPath(key), "expected a non-negative integer");
  return false;
}

bool ObjectReader::Bool(const char* key, bool* out) {
  element v;
  if (!Get(key, &v)) return false;
  if (v.get_bool().get(*out)) {
    Fail(FieldPath(key), "expected true or false");
    return false;
  }
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
  element v;
  if (!Get(key, &v)) return false;
  simdjson::dom::array arr;
  if (v.get_array().get(arr)) {
    Fail(FieldPath(key), "expected an array of strings");
    return false;
  }
  std::vector<std::string> items;
  items.reserve(arr.size());
  size_t i = 0;
  for (element item : arr) {
    std::string_view sv;
    if (item.get_string().get(sv)) {
      Fail(FieldPath(key) + "[" + std::to_string(i) + "]", "expected a string");
      return false;
    }
    items.emplace_back(sv);
    ++i;
  }
  *out = std::move(items);
  return true;
}

void ObjectReader::RejectUnknown() {
  if (!status_.ok()) return;
  std::vector<std::string_view> keys;
  for (auto field : obj_) {
    bool known = false;
    for (const char* k : seen_) known = known || field.key == k;
    if (!known) {
      Fail(FieldPath(field.key), "unknown field");
      return;
    }
    for (std::string_view k : keys) {
      if (k == field.key) {
        Fail(FieldPath(field.key), "duplicate field");
        return;
      }
    }
    keys.push_back(field.key);
  }
}

}  // namespace agentckpt::internal
