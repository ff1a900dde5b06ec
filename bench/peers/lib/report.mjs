// The console tables and the Markdown report.

import fs from 'node:fs';
import path from 'node:path';
import { PEERS, SIDES } from './sides.mjs';

const fmt = (ms) => ms.toFixed(3);
const ratio = (peer, ours) => (ours > 0 ? (peer / ours).toFixed(2) : 'n/a');
const COLUMNS = [['write', 'p50'], ['write', 'p99'], ['load', 'p50'], ['load', 'p99']];

// Rows for one fixture of one run: [label, 4 figures in ms, 4 ratios peer / agentckpt].
function rows(run, fixture) {
  const ours = run.sides.agentckpt[fixture];
  return ['agentckpt', ...PEERS].map((side) => {
    const r = run.sides[side][fixture];
    const figures = COLUMNS.map(([op, p]) => fmt(r[op][p]));
    const ratios = side === 'agentckpt'
      ? COLUMNS.map(() => '1.00')
      : COLUMNS.map(([op, p]) => ratio(r[op][p], ours[op][p]));
    return [SIDES[side].label, ...figures, ...ratios];
  });
}

const HEADER = ['side', 'write p50', 'write p99', 'load p50', 'load p99',
  'write p50 ratio', 'write p99 ratio', 'load p50 ratio', 'load p99 ratio'];

function sampleCounts(run, fixture) {
  return ['agentckpt', ...PEERS].map((s) => `${run.sides[s][fixture].write.n}`).join('/');
}

export function renderConsole(index, opts, run) {
  let out = '';
  for (const fixture of opts.fixtureNames) {
    out += `\nrun ${index}, ${fixture}: milliseconds; ratio = peer / agentckpt ` +
      `(above 1: agentckpt is faster); measured writes ${sampleCounts(run, fixture)}\n`;
    const table = [HEADER, ...rows(run, fixture)];
    const widths = HEADER.map((_, c) => Math.max(...table.map((r) => r[c].length)));
    for (const r of table) {
      out += r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
        .join('  ') + '\n';
    }
  }
  return out;
}

function markdownTable(run, fixture) {
  const lines = [`| ${HEADER.join(' | ')} |`, `|${HEADER.map((_, c) => (c ? '---:' : '---')).join('|')}|`];
  for (const r of rows(run, fixture)) lines.push(`| ${r.join(' | ')} |`);
  return lines.join('\n');
}

function goalLine(run, fixture) {
  const ours = run.sides.agentckpt[fixture];
  const parts = ['write', 'load'].map((op) => {
    const best = PEERS.map((s) => [s, run.sides[s][fixture][op].p50]).sort((a, b) => a[1] - b[1])[0];
    const verdict = ours[op].p50 <= best[1] ? 'at least as fast as' : 'slower than';
    return `${op} p50 ${fmt(ours[op].p50)} ms is ${verdict} the fastest peer ` +
      `(${SIDES[best[0]].label}, ${fmt(best[1])} ms)`;
  });
  return `agentckpt ${parts.join('; ')}.`;
}

// One line per side: write and load p50/p99 of every run on `fixture`, with the ratios.
function summary(runs, fixture) {
  const head = ['side', ...runs.map((_, i) => `run ${i + 1}: write p50 / p99 (ratio)`),
    ...runs.map((_, i) => `run ${i + 1}: load p50 / p99 (ratio)`)];
  const lines = [`Summary, ${fixture}, milliseconds; ratio = peer / agentckpt at p50 and p99 ` +
    '(above 1: agentckpt is faster).', '',
  `| ${head.join(' | ')} |`, `|${head.map((_, c) => (c ? '---:' : '---')).join('|')}|`];
  for (const side of ['agentckpt', ...PEERS]) {
    const cell = (run, op) => {
      const r = run.sides[side][fixture][op];
      const ours = run.sides.agentckpt[fixture][op];
      const ratios = side === 'agentckpt' ? '' :
        ` (${ratio(r.p50, ours.p50)} / ${ratio(r.p99, ours.p99)})`;
      return `${fmt(r.p50)} / ${fmt(r.p99)}${ratios}`;
    };
    lines.push(`| ${[SIDES[side].label, ...runs.map((r) => cell(r, 'write')),
      ...runs.map((r) => cell(r, 'load'))].join(' | ')} |`);
  }
  lines.push('');
  return lines;
}

function versions(runs) {
  const first = runs[0].sides;
  const fixture = Object.keys(first.langgraph)[0];
  const lines = [];
  for (const side of PEERS) {
    const r = first[side][fixture];
    for (const [name, v] of Object.entries(r.packages)) lines.push(`| ${name} | ${v} |`);
    lines.push(`| SQLite inside ${SIDES[side].label} | ${r.sqlite} (journal_mode=${r.pragmas.journal_mode}, ` +
      `synchronous=${r.pragmas.synchronous}, checked after the run) |`);
  }
  return lines;
}

// `repo`: the repository root; paths inside it are shown relative to it.
export function renderMarkdown({ repo, opts, machine, runs, fsync, startedAt, finishedAt }) {
  const rel = (p) => (p.startsWith(repo + path.sep) ? path.relative(repo, p) : p);
  const size = (f) => `${f} (${fs.statSync(path.join(opts.fixtures, f)).size} bytes)`;
  const md = [];
  md.push('# agentckpt against peer checkpointers', '');
  md.push(`Generated ${startedAt.toISOString()} to ${finishedAt.toISOString()} by the command ` +
    `below; ${runs.length} run(s) in one invocation.`, '');
  md.push(...summary(runs, opts.fixtureNames[0]));
  md.push('## How it was measured', '');
  md.push(`- Command: \`${opts.command ?? process.argv.join(' ')}\``);
  md.push(`- Document: the same fixtures for every side, ${opts.fixtureNames.map(size).join(' and ')}, ` +
    `from \`${rel(opts.fixtures)}\`; the ratios that matter are those on checkpoint-16k.json.`);
  md.push(`- Databases: fresh SQLite files in one directory, \`${rel(opts.dir)}\` (file system ` +
    `${machine.fsType}), every side with WAL and synchronous=FULL (a write returns after its fsync).`);
  md.push(`- Each iteration writes a new version of the document (new sequenceNumber and ` +
    `checkpointId, prepared outside the timing) and then loads the latest one back; the loaded ` +
    `document is checked to be the one just written (outside the timing).`);
  md.push(`- ${opts.iterations} measured iterations per side and fixture. Warm-up not measured: ` +
    `${opts.warmup} iterations for the Node peers (JIT), 20 for store_bench (fixed in the program).`);
  md.push('- The sides run one after the other, never at the same time; each run rotates their ' +
    'order. Percentiles: nearest rank, as bench/common/percentiles.h.');
  md.push(`- Revision: ${machine.revision}.`, '');
  md.push('## Machine and versions', '');
  md.push(`- ${machine.nproc} CPUs (nproc), ${machine.cpu}, ${machine.memGiB} GiB RAM, ${machine.kernel}`);
  md.push(`- Load average at start ${machine.loadavg}, at end ${machine.loadavgEnd}. The machine was ` +
    'shared with other work while measuring: absolute figures are noisy, compare within a run.');
  md.push(`- Node ${machine.node}; agentckpt links the system SQLite ${machine.systemSqlite}.`, '');
  md.push('| package | version |', '|---|---|', ...versions(runs), '');
  md.push('## What each side does', '');
  for (const side of ['agentckpt', ...PEERS]) {
    md.push(`- **${SIDES[side].label}**`);
    md.push(`  - write: ${SIDES[side].write}`);
    md.push(`  - load-latest: ${SIDES[side].load}`);
  }
  md.push('');
  md.push('## Results', '');
  md.push('Milliseconds. Ratio = peer / agentckpt for the same figure in the same run ' +
    '(above 1: agentckpt is faster).', '');
  runs.forEach((run, i) => {
    for (const fixture of opts.fixtureNames) {
      md.push(`### Run ${i + 1}, ${fixture}`, '');
      md.push(`Order (with the 1-minute load average when each side started): ` +
        `${run.order.map((s) => `${SIDES[s].label} (${run.loadavg[s].toFixed(2)})`).join(', ')}. ` +
        `Measured writes: ${sampleCounts(run, fixture)}.`, '');
      md.push(markdownTable(run, fixture), '');
      const seal = run.sides.agentckpt[fixture].seal;
      if (seal) {
        md.push(`agentckpt's write includes sealing (canonical JSON + SHA-256, no I/O): ` +
          `p50 ${fmt(seal.p50)} ms, p99 ${fmt(seal.p99)} ms.`, '');
      }
      const floor = run.sides.agentckpt[fixture].baseline;
      if (floor) {
        md.push(`The disk's fsync floor, measured by store_bench just before its side ` +
          `(16 KiB pwrite + fdatasync): p50 ${fmt(floor.p50)} ms, p99 ${fmt(floor.p99)} ms.`, '');
      }
      md.push(goalLine(run, fixture), '');
    }
  });
  md.push('## Durability check', '');
  if (fsync) {
    md.push(`fsync + fdatasync calls per write, counted with \`strace -f -c\` over a separate ` +
      `short run (${opts.fsyncIterations} writes of ${opts.fixtureNames[0]} per peer; store_bench ` +
      'writes both fixtures with its warm-up); the count includes opening the database.', '');
    md.push('| side | writes | fsync + fdatasync calls | per write |', '|---|---:|---:|---:|');
    for (const [side, f] of Object.entries(fsync)) {
      md.push(`| ${SIDES[side].label} | ${f.writes} | ${f.calls} | ${(f.calls / f.writes).toFixed(2)} |`);
    }
  } else {
    md.push('Not run (strace not available or --fsync-check off).');
  }
  md.push('');
  return md.join('\n');
}
