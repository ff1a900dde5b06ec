// Building blocks of the Prometheus text exposition format (version 0.0.4) shared by the
// metrics registry (metrics.h) and the process collector (process_metrics.h). Pure functions:
// thread-safe, never throw.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace agentckpt {

// The shortest text that reads back as the same double ("0.1", not "0.10000000000000001"), as a
// plain decimal from 1e-6 to 1e15 ("0.0005", not "5e-04"), so bucket bounds match queries such
// as le="0.1"; "+Inf", "-Inf", "NaN" for the non-finite ones.
std::string FormatMetricValue(double v);

// `v` escaped as a label value (backslash, double quote, newline).
std::string EscapeLabelValue(const std::string& v);

// Appends the "# HELP" and "# TYPE" lines of a family.
void AppendMetricHeader(const char* name, const char* type, const char* help, std::string* out);

// Appends one sample line; `labels` is the inside of the braces (e.g. `trigger="manual"`), empty
// for none.
void AppendSample(const std::string& name, const std::string& labels, double value,
                  std::string* out);

// Appends a whole counter family with one label: header, then one sample per entry.
void AppendCounterByLabel(const char* name, const char* label, const char* help,
                          const std::map<std::string, uint64_t>& values, std::string* out);

}  // namespace agentckpt
