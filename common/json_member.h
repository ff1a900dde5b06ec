// Reading one member of a JSON object received from elsewhere (a server's reply), never throwing.
// nlohmann::json's value(key, default) throws type_error when the member holds another type than
// the default's (a number where a string is expected) and when the value is not an object, so a
// malformed reply would throw across the adapter that parsed it. Header only (the caller links
// nlohmann_json); pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

namespace agentckpt {

// obj[key] when `obj` is an object whose member `key` holds a T (std::string: a string; an
// unsigned integer type: a non-negative integer that fits; a signed integer type: an integer
// that fits; double: any number; bool: a boolean; nlohmann::json: anything), else `fallback`.
template <typename T>
T JsonMemberOr(const nlohmann::json& obj, const char* key, T fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if constexpr (std::is_same_v<T, nlohmann::json>) {
    return *it;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->template get<std::string>() : fallback;
  } else if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? it->template get<bool>() : fallback;
  } else if constexpr (std::is_same_v<T, double>) {
    return it->is_number() ? it->template get<double>() : fallback;
  } else if constexpr (std::is_unsigned_v<T>) {
    if (!it->is_number_unsigned()) return fallback;
    const uint64_t v = it->template get<uint64_t>();
    return v > static_cast<uint64_t>(std::numeric_limits<T>::max()) ? fallback : static_cast<T>(v);
  } else {
    static_assert(std::is_integral_v<T>, "JsonMemberOr reads strings, numbers, bools, json");
    if (!it->is_number_integer()) return fallback;
    if (it->is_number_unsigned()) {
      const uint64_t v = it->template get<uint64_t>();
      return v > static_cast<uint64_t>(std::numeric_limits<T>::max()) ? fallback
                                                                      : static_cast<T>(v);
    }
    const int64_t v = it->template get<int64_t>();
    return v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()
               ? fallback
               : static_cast<T>(v);
  }
}

// obj[key] when it is an object, else an empty object.
inline nlohmann::json JsonObjectMember(const nlohmann::json& obj, const char* key) {
  nlohmann::json member = JsonMemberOr(obj, key, nlohmann::json::object());
  return member.is_object() ? member : nlohmann::json::object();
}

}  // namespace agentckpt
