// Latency recording for the bench programs: collect samples, print p50/p90/p99/max.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace agentckpt::bench {

class Latencies {
 public:
  void Add(double micros) { samples_.push_back(micros); }
  double Percentile(double p) {
    if (samples_.empty()) return 0;
    std::sort(samples_.begin(), samples_.end());
    size_t idx = static_cast<size_t>(p / 100.0 * static_cast<double>(samples_.size() - 1) + 0.5);
    return samples_[std::min(idx, samples_.size() - 1)];
  }
  size_t count() const { return samples_.size(); }
  // One line: "<name>  n=…  p50=… ms  p90=…  p99=…  max=…"
  void Print(const std::string& name) {
    std::printf("%-40s n=%-6zu p50=%8.3f ms  p90=%8.3f ms  p99=%8.3f ms  max=%8.3f ms\n",
                name.c_str(), count(), Percentile(50) / 1000, Percentile(90) / 1000,
                Percentile(99) / 1000, Percentile(100) / 1000);
    std::fflush(stdout);
  }

 private:
  std::vector<double> samples_;
};

inline double MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace agentckpt::bench
