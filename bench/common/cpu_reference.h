// A reference for the machine's own speed, to run between the samples of a CPU-bound figure.
//
// CpuReferenceMicros runs a fixed loop that touches no memory beyond registers and makes no
// system call, so its time moves only with the CPU itself. On a virtual machine whose virtual CPU
// runs several times slower for tens of milliseconds at a time (seen on the 2-core machines this
// project is measured on, and reported by the guest as neither steal nor I/O wait), the samples of
// those moments are slow too. SlowTogether counts the samples that were slow when the reference
// next to them was, so that a figure's p99 can say which of its outliers were the machine's.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/common/percentiles.h"

namespace agentckpt::bench {

// About 1 ms of xorshift steps on a ~3 GHz core. Returns the loop's wall time in microseconds.
inline double CpuReferenceMicros(int steps = 400'000) {
  auto start = std::chrono::steady_clock::now();
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < steps; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    asm volatile("" : "+r"(x));  // keeps each step: the loop cannot be folded away
  }
  return MicrosSince(start);
}

struct SlowTogether {
  int slow_samples = 0;         // samples over `factor` times their median
  int with_slow_reference = 0;  // of those, with a reference run just before or after over
                                // `factor` times the reference's median
};

// `samples[i]` was measured between `reference[i]` (just before) and `reference[i + 1]` (just
// after); `reference` has one more element than `samples`.
inline SlowTogether CountSlowTogether(const std::vector<double>& samples,
                                      const std::vector<double>& reference, double factor) {
  SlowTogether out;
  if (samples.empty() || reference.size() != samples.size() + 1) return out;
  Latencies s, r;
  for (double v : samples) s.Add(v);
  for (double v : reference) r.Add(v);
  const double s_median = s.Percentile(50), r_median = r.Percentile(50);
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i] <= factor * s_median) continue;
    ++out.slow_samples;
    if (reference[i] > factor * r_median || reference[i + 1] > factor * r_median) {
      ++out.with_slow_reference;
    }
  }
  return out;
}

}  // namespace agentckpt::bench
