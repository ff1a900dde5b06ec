#include "checkpoint/json_value.h"

#include <simdjson.h>

#include "checkpoint/json_reader.h"

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

}  // namespace

StatusOr<json> ParseJsonValue(std::string_view text) {
  auto root = internal::ParseJson(text);
  if (!root.ok()) return root.status();
  return Convert(*root);
}

}  // namespace agentckpt
