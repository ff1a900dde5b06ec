#include "checkpoint/json_value.h"

#include <simdjson.h>

#include <charconv>

#include "checkpoint/json_reader.h"
#include "common/json_string.h"

namespace agentckpt {
namespace {

using nlohmann::json;
using simdjson::dom::element;
using simdjson::dom::element_type;

// Every getter below matches the element's type, so none can fail. Depth is bounded by simdjson's parser (1024 levels), so the recursion is too.
json Convert(element e) {
  switch (e.type()) {
    case element_type::OBJECT: {
      json o = json::object();
      simdjson::dom::object members = e.get_object().value_unsafe();
      for (auto field : members) {
        o[std::string(field.key)] = Convert(field.value);
      }
      return o;
    }
    case element_type::ARRAY: {
      json a = json::array();
      simdjson::dom::array items = e.get_array().value_unsafe();
      for (element v : items) a.push_back(Convert(v));
      return a;
    }
    case element_type::STRING:
      return json(std::string(e.get_string().value_unsafe()));
    case element_type::INT64: {
      // As nlohmann's parser: a non-negative integer is unsigned.
      const int64_t v = e.get_int64().value_unsafe();
      return v >= 0 ? json(static_cast<uint64_t>(v)) : json(v);
    }
    case element_type::UINT64:
      return json(e.get_uint64().value_unsafe());
    case element_type::DOUBLE:
      return json(e.get_double().value_unsafe());
    case element_type::BOOL:
      return json(e.get_bool().value_unsafe());
    case element_type::NULL_VALUE:
      return json(nullptr);
  }
  return json(nullptr);
}

// Appends `v` compactly as nlohmann's dump() does; false (with `out` partly written) when a
// string in it is not well-formed UTF-8. Depth is that of a value already built, as in dump().
bool Write(const json& v, std::string* out) {
  switch (v.type()) {
    case json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [key, member] : v.items()) {
        if (!first) out->push_back(',');
        first = false;
        if (!AppendJsonString(key, out)) return false;
        out->push_back(':');
        if (!Write(member, out)) return false;
      }
      out->push_back('}');
      return true;
    }
    case json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const json& item : v) {
        if (!first) out->push_back(',');
        first = false;
        if (!Write(item, out)) return false;
      }
      out->push_back(']');
      return true;
    }
    case json::value_t::string:
      return AppendJsonString(v.get_ref<const std::string&>(), out);
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: {
      char digits[24];
      auto r = v.is_number_unsigned()
                   ? std::to_chars(digits, digits + sizeof(digits), v.get<uint64_t>())
                   : std::to_chars(digits, digits + sizeof(digits), v.get<int64_t>());
      out->append(digits, r.ptr);
      return true;
    }
    case json::value_t::boolean:
      out->append(v.get<bool>() ? "true" : "false");
      return true;
    case json::value_t::null:
      out->append("null");
      return true;
    default:  // doubles (nlohmann's own shortest form), binary, discarded
      out->append(v.dump(-1, ' ', false, json::error_handler_t::replace));
      return true;
  }
}

}  // namespace

std::string DumpJsonValue(const json& value) {
  std::string out;
  if (Write(value, &out)) return out;
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

StatusOr<json> ParseJsonValue(std::string_view text) {
  auto root = internal::ParseJson(text);
  if (!root.ok()) return root.status();
  return Convert(*root);
}

}  // namespace agentckpt
