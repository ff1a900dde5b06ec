// A process's resident set size, for the bench programs that report the memory of a process they
// started (the sidecar, the nats-server).
#pragma once

#include <sys/types.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace agentckpt::bench {

// VmRSS of /proc/<pid>/status in kB; 0 when the process or the line is not there.
inline long ResidentSetKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

}  // namespace agentckpt::bench
