#include "store/firestore/firestore_value.h"

#include <cstdio>
#include <exception>

#include "checkpoint/checkpoint_json.h"
#include "common/status_macros.h"
#include "common/time_format.h"

namespace agentckpt {
namespace {

using nlohmann::json;

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

StatusOr<json> DecodeTimestamp(const json& v, const std::string& path) {
  if (!v.is_string()) return InvalidArgumentError(path + ": timestampValue must be a string");
  auto ms = ParseRfc3339Millis(v.get<std::string>());
  if (!ms.ok()) return InvalidArgumentError(path + ": " + ms.status().message());
  return json(FormatRfc3339Millis(*ms));
}

StatusOr<json> DecodeInteger(const json& v, const std::string& path) {
  // Firestore writes int64 as a decimal string; accept a JSON number too.
  if (v.is_number_integer()) return v;
  if (!v.is_string()) return InvalidArgumentError(path + ": integerValue must be a string");
  const std::string s = v.get<std::string>();
  // Only an optional '-' and digits: std::stoull alone would skip leading space and accept a
  // sign, so " -1" would wrap to 18446744073709551615.
  size_t digits = !s.empty() && s[0] == '-' ? 1 : 0;
  if (digits == s.size() || s.find_first_not_of("0123456789", digits) != std::string::npos) {
    return InvalidArgumentError(path + ": integerValue \"" + s + "\" is not a 64-bit integer");
  }
  try {
    size_t used = 0;
    if (!s.empty() && s[0] != '-') {
      unsigned long long u = std::stoull(s, &used);
      if (used == s.size()) return json(static_cast<uint64_t>(u));
    } else {
      long long i = std::stoll(s, &used);
      if (used == s.size()) return json(static_cast<int64_t>(i));
    }
  } catch (const std::exception&) {
  }
  return InvalidArgumentError(path + ": integerValue \"" + s + "\" is not a 64-bit integer");
}

}  // namespace

bool IsTimestampKey(std::string_view key) {
  return key == "timestamp" || key == "startedAt" || key == "expireAt" || key == "updatedAt";
}

StatusOr<json> JsonToFirestoreValue(const json& value, std::string_view key) {
  switch (value.type()) {
    case json::value_t::null:
      return json{{"nullValue", nullptr}};
    case json::value_t::boolean:
      return json{{"booleanValue", value.get<bool>()}};
    case json::value_t::number_integer:
      return json{{"integerValue", std::to_string(value.get<int64_t>())}};
    case json::value_t::number_unsigned:
      return json{{"integerValue", std::to_string(value.get<uint64_t>())}};
    case json::value_t::string: {
      const std::string& s = value.get_ref<const std::string&>();
      if (IsTimestampKey(key)) {
        auto ms = ParseRfc3339Millis(s);
        if (!ms.ok()) return InvalidArgumentError(std::string(key) + ": " + ms.status().message());
        return json{{"timestampValue", FormatRfc3339Millis(*ms)}};
      }
      return json{{"stringValue", s}};
    }
    case json::value_t::array: {
      json values = json::array();
      for (const json& e : value) {
        ASSIGN_OR_RETURN(json v, JsonToFirestoreValue(e, ""));
        values.push_back(std::move(v));
      }
      json arr = json::object();
      if (!values.empty()) arr["values"] = std::move(values);
      return json{{"arrayValue", std::move(arr)}};
    }
    case json::value_t::object: {
      ASSIGN_OR_RETURN(json fields, JsonToFirestoreFields(value));
      json map = json::object();
      if (!fields.empty()) map["fields"] = std::move(fields);
      return json{{"mapValue", std::move(map)}};
    }
    default:
      return InvalidArgumentError(std::string(key) + ": unsupported JSON value type " +
                                  value.type_name());
  }
}

StatusOr<json> JsonToFirestoreFields(const json& object) {
  if (!object.is_object()) return InvalidArgumentError("expected a JSON object");
  json fields = json::object();
  for (auto it = object.begin(); it != object.end(); ++it) {
    ASSIGN_OR_RETURN(json v, JsonToFirestoreValue(it.value(), it.key()));
    fields[it.key()] = std::move(v);
  }
  return fields;
}

StatusOr<json> FirestoreValueToJson(const json& value, const std::string& path) {
  if (!value.is_object() || value.size() != 1) {
    return InvalidArgumentError(path + ": a Firestore value must be an object with one member");
  }
  const std::string& kind = value.begin().key();
  const json& v = value.begin().value();
  if (kind == "nullValue") return json(nullptr);
  if (kind == "booleanValue") {
    if (!v.is_boolean()) return InvalidArgumentError(path + ": booleanValue must be a boolean");
    return v;
  }
  if (kind == "integerValue") return DecodeInteger(v, path);
  if (kind == "doubleValue") {
    if (!v.is_number()) return InvalidArgumentError(path + ": doubleValue must be a number");
    return v;
  }
  if (kind == "stringValue") {
    if (!v.is_string()) return InvalidArgumentError(path + ": stringValue must be a string");
    return v;
  }
  if (kind == "timestampValue") return DecodeTimestamp(v, path);
  if (kind == "arrayValue") {
    if (!v.is_object()) return InvalidArgumentError(path + ": arrayValue must be an object");
    json out = json::array();
    auto values = v.find("values");
    if (values == v.end()) return out;
    if (!values->is_array()) return InvalidArgumentError(path + ": values must be an array");
    for (size_t i = 0; i < values->size(); ++i) {
      ASSIGN_OR_RETURN(json e,
                       FirestoreValueToJson((*values)[i], path + "[" + std::to_string(i) + "]"));
      out.push_back(std::move(e));
    }
    return out;
  }
  if (kind == "mapValue") {
    if (!v.is_object()) return InvalidArgumentError(path + ": mapValue must be an object");
    auto fields = v.find("fields");
    if (fields == v.end()) return json::object();
    return FirestoreFieldsToJson(*fields, path);
  }
  return InvalidArgumentError(path + ": unsupported Firestore value kind " + kind);
}

StatusOr<json> FirestoreFieldsToJson(const json& fields, const std::string& path) {
  if (fields.is_null()) return json::object();
  if (!fields.is_object()) return InvalidArgumentError(path + ": fields must be an object");
  json out = json::object();
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    ASSIGN_OR_RETURN(
        json v, FirestoreValueToJson(it.value(), path.empty() ? it.key() : path + "." + it.key()));
    out[it.key()] = std::move(v);
  }
  return out;
}

StatusOr<json> CheckpointToFirestoreFields(const SealedCheckpoint& sealed) {
  if (sealed.doc.content_sha256.empty()) {
    return InvalidArgumentError("contentSha256: the checkpoint is not sealed");
  }
  return JsonToFirestoreFields(CheckpointToJsonValue(sealed.doc, /*include_hash=*/true));
}

StatusOr<Checkpoint> CheckpointFromFirestoreFields(const json& fields) {
  auto doc = FirestoreFieldsToJson(fields, "");
  if (!doc.ok()) return DataLossError("stored document does not decode: " + doc.status().message());
  return VerifyDocumentJson(doc->dump());
}

StatusOr<int64_t> ParseRfc3339Micros(std::string_view text) {
  ASSIGN_OR_RETURN(int64_t ms, ParseRfc3339Millis(text));
  int64_t micros = FloorDiv(ms, 1000) * 1'000'000;
  size_t t = text.find_first_of("Tt");
  size_t dot = text.find('.', t == std::string_view::npos ? 0 : t);
  if (dot != std::string_view::npos) {
    int64_t frac = 0;
    int digits = 0;
    for (size_t i = dot + 1; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (digits < 6) {
        frac = frac * 10 + (text[i] - '0');
        ++digits;
      }
    }
    for (; digits < 6; ++digits) frac *= 10;
    micros += frac;
  }
  return micros;
}

std::string FormatRfc3339Micros(int64_t unix_micros) {
  std::string s = FormatRfc3339Millis(FloorDiv(unix_micros, 1000));
  int64_t sub = unix_micros - FloorDiv(unix_micros, 1000) * 1000;
  char extra[8];
  std::snprintf(extra, sizeof(extra), "%03d", static_cast<int>(sub));
  s.insert(s.size() - 1, extra);
  return s;
}

}  // namespace agentckpt
