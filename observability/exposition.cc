#include "observability/exposition.h"

#include <charconv>
#include <cmath>

namespace agentckpt {

std::string FormatMetricValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Plain decimals ("0.0005", not "5e-04") in the range metrics live in; the shortest form
  // (possibly with an exponent) outside it.
  const double magnitude = std::fabs(v);
  const bool plain = v == 0 || (magnitude >= 1e-6 && magnitude < 1e15);
  char buf[128];
  auto [end, ec] = plain ? std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed)
                         : std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return "NaN";
  return std::string(buf, end);
}

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void AppendMetricHeader(const char* name, const char* type, const char* help, std::string* out) {
  *out += std::string("# HELP ") + name + " " + help + "\n";
  *out += std::string("# TYPE ") + name + " " + type + "\n";
}

void AppendSample(const std::string& name, const std::string& labels, double value,
                  std::string* out) {
  *out += name;
  if (!labels.empty()) *out += "{" + labels + "}";
  *out += " " + FormatMetricValue(value) + "\n";
}

void AppendCounterByLabel(const char* name, const char* label, const char* help,
                          const std::map<std::string, uint64_t>& values, std::string* out) {
  AppendMetricHeader(name, "counter", help, out);
  for (const auto& [k, v] : values) {
    AppendSample(name, std::string(label) + "=\"" + EscapeLabelValue(k) + "\"",
                 static_cast<double>(v), out);
  }
}

}  // namespace agentckpt
