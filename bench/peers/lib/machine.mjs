// What the figures were measured on: machine, kernel, file system of the database directory,
// Node, the repository revision.

import fs from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';

function tryRun(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export function describeMachine(dbDir, repoDir) {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? 'unknown';
  const head = tryRun('git', ['-C', repoDir, 'rev-parse', '--short', 'HEAD']);
  const dirty = tryRun('git', ['-C', repoDir, 'status', '--porcelain', '--untracked-files=no']);
  return {
    nproc: tryRun('nproc', []) ?? String(os.cpus().length),
    cpu: model,
    memGiB: (os.totalmem() / 2 ** 30).toFixed(1),
    kernel: `${os.type()} ${os.release()}`,
    loadavg: os.loadavg().map((x) => x.toFixed(2)).join(' '),
    fsType: tryRun('stat', ['-f', '-c', '%T', dbDir]) ?? 'unknown',
    node: process.version,
    systemSqlite: tryRun('pkg-config', ['--modversion', 'sqlite3']) ?? 'unknown',
    revision: head ? `${head}${dirty ? ' (with uncommitted changes)' : ''}` : 'unknown',
  };
}
