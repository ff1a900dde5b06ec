// Reads the output of build/bin/store_bench (bench/store/store_bench.cc), lines like
//   checkpoint-16k.json put (seal+fsync)   n=2000   p50=   0.300 ms  p90= ... p99= ... max= ...

const LINE = new RegExp(
  String.raw`^(\S+) (seal \(no I/O\)|put \(seal\+fsync\)|latest-verified)\s+n=(\d+)\s+` +
    String.raw`p50=\s*([\d.]+) ms\s+p90=\s*([\d.]+) ms\s+p99=\s*([\d.]+) ms\s+max=\s*([\d.]+) ms`);

const KIND = { 'seal (no I/O)': 'seal', 'put (seal+fsync)': 'write', 'latest-verified': 'load' };

// Returns {"checkpoint-16k.json": {seal, write, load}, ...}, each {n, p50, p90, p99, max} in ms.
export function parseStoreBench(text) {
  const out = {};
  for (const line of text.split('\n')) {
    const m = LINE.exec(line.trim());
    if (!m) continue;
    const [, fixture, label, n, p50, p90, p99, max] = m;
    out[fixture] ??= {};
    out[fixture][KIND[label]] = {
      n: Number(n), p50: Number(p50), p90: Number(p90), p99: Number(p99), max: Number(max),
    };
  }
  for (const [fixture, r] of Object.entries(out)) {
    if (!r.write || !r.load) throw new Error(`store_bench output incomplete for ${fixture}`);
  }
  if (Object.keys(out).length === 0) throw new Error(`no figures in store_bench output:\n${text}`);
  return out;
}

// The disk's fsync floor store_bench measures first (16 KiB pwrite + fdatasync), or null.
const BASELINE = new RegExp(
  String.raw`^baseline: 16 KiB pwrite \+ fdatasync\s+n=(\d+)\s+p50=\s*([\d.]+) ms\s+` +
    String.raw`p90=\s*([\d.]+) ms\s+p99=\s*([\d.]+) ms`);

export function parseFsyncBaseline(text) {
  for (const line of text.split('\n')) {
    const m = BASELINE.exec(line.trim());
    if (m) return { n: Number(m[1]), p50: Number(m[2]), p99: Number(m[4]) };
  }
  return null;
}
