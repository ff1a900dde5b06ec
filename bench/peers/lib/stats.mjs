// Latency samples and percentiles, computed the same way as bench/common/percentiles.h
// (nearest rank on the sorted samples: index round(p/100 * (n-1))).

export function percentile(sortedMicros, p) {
  if (sortedMicros.length === 0) return 0;
  const idx = Math.floor((p / 100) * (sortedMicros.length - 1) + 0.5);
  return sortedMicros[Math.min(idx, sortedMicros.length - 1)];
}

// Summary of microsecond samples, in milliseconds: {n, p50, p90, p99, max}.
export function summarize(micros) {
  const sorted = Float64Array.from(micros).sort();
  const ms = (p) => percentile(sorted, p) / 1000;
  return { n: sorted.length, p50: ms(50), p90: ms(90), p99: ms(99), max: ms(100) };
}
