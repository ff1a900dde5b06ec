// Counting fsync and fdatasync calls with `strace -c`: the evidence that every write of every
// side reaches the disk.

import { execFileSync } from 'node:child_process';

export function straceAvailable() {
  try {
    execFileSync('strace', ['-qq', '-e', 'trace=none', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// Total calls of fsync and fdatasync in a `strace -c` summary.
export function parseStraceCounts(text) {
  let calls = 0;
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    const name = cols.at(-1);
    if (name === 'fsync' || name === 'fdatasync') calls += Number(cols[3]);
  }
  return calls;
}
