#include "observability/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "observability/exposition.h"

namespace agentckpt {
namespace {

// The fields of /proc/self/stat after the command name (which may hold spaces and parentheses),
// numbered from 3 (state) as in proc(5).
bool ReadStatFields(std::vector<std::string>* fields) {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 1));
  fields->assign(3, "");
  for (std::string f; rest >> f;) fields->push_back(f);
  return fields->size() > 24;
}

// The boot time (Unix seconds) from /proc/stat's btime line; 0 when absent.
double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t = 0;
      in >> t;
      return t;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

double CountOpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  double n = 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n - 1;  // the directory stream's own descriptor
}

}  // namespace

bool ReadProcessStats(ProcessStats* stats) {
  std::vector<std::string> f;
  if (!ReadStatFields(&f)) return false;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  if (ticks <= 0 || page <= 0) return false;
  try {
    stats->cpu_seconds = (std::stod(f[14]) + std::stod(f[15])) / ticks;
    stats->start_time_seconds = BootTimeSeconds() + std::stod(f[22]) / ticks;
    stats->virtual_bytes = std::stod(f[23]);
    stats->resident_bytes = std::stod(f[24]) * page;
  } catch (const std::exception&) {
    return false;
  }
  stats->open_fds = CountOpenFds();
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    stats->max_fds = limit.rlim_cur == RLIM_INFINITY ? 0 : static_cast<double>(limit.rlim_cur);
  }
  return true;
}

void AppendProcessMetrics(std::string* out) {
  ProcessStats s;
  if (!ReadProcessStats(&s)) return;
  AppendMetricHeader("process_cpu_seconds_total", "counter",
                     "Total user and system CPU time spent in seconds.", out);
  AppendSample("process_cpu_seconds_total", "", s.cpu_seconds, out);
  AppendMetricHeader("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
                     out);
  AppendSample("process_resident_memory_bytes", "", s.resident_bytes, out);
  AppendMetricHeader("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", out);
  AppendSample("process_virtual_memory_bytes", "", s.virtual_bytes, out);
  AppendMetricHeader("process_start_time_seconds", "gauge",
                     "Start time of the process since the Unix epoch in seconds.", out);
  AppendSample("process_start_time_seconds", "", s.start_time_seconds, out);
  AppendMetricHeader("process_open_fds", "gauge", "Number of open file descriptors.", out);
  AppendSample("process_open_fds", "", s.open_fds, out);
  AppendMetricHeader("process_max_fds", "gauge", "Maximum number of open file descriptors.", out);
  AppendSample("process_max_fds", "", s.max_fds, out);
}

}  // namespace agentckpt
