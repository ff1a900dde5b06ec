// The standard process metrics of Prometheus client libraries, read from Linux's /proc:
// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds and process_max_fds. Thread-safe (reads only).
#pragma once

#include <string>

namespace agentckpt {

struct ProcessStats {
  double cpu_seconds = 0;         // user + system CPU time
  double resident_bytes = 0;      // resident set size
  double virtual_bytes = 0;       // virtual memory size
  double start_time_seconds = 0;  // Unix time the process started
  double open_fds = 0;            // entries of /proc/self/fd
  double max_fds = 0;             // the soft RLIMIT_NOFILE
};

// Reads this process's figures. Returns false (and leaves `stats` partly filled) when /proc
// cannot be read, e.g. not on Linux.
bool ReadProcessStats(ProcessStats* stats);

// Appends the six families for this process; appends nothing when /proc cannot be read.
void AppendProcessMetrics(std::string* out);

}  // namespace agentckpt
