// Runs agentckpt's store_bench and the peer checkpointers in one run on the same document and the
// same disk directory, prints the tables and writes a Markdown report.
//
//   node run.mjs --store-bench build/bin/store_bench --fixtures tests/fixtures --dir DIR
//                [--iterations 2000] [--warmup 200] [--repeat 1] [--out FILE]
//                [--fixture-names checkpoint-16k.json,checkpoint-max.json]
//                [--fsync-check auto|on|off] [--fsync-iterations 100] [--command TEXT]
//
// The sides run one after the other (never at the same time); each repetition rotates the order.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describeMachine } from './lib/machine.mjs';
import { renderConsole, renderMarkdown } from './lib/report.mjs';
import { PEERS, SIDES } from './lib/sides.mjs';
import { parseFsyncBaseline, parseStoreBench } from './lib/store_bench.mjs';
import { parseStraceCounts, straceAvailable } from './lib/fsync_check.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function parseArgs(argv) {
  const opts = {
    storeBench: path.join(REPO, 'build/bin/store_bench'),
    fixtures: process.env.AGENTCKPT_FIXTURES_DIR ?? path.join(REPO, 'tests/fixtures'),
    dir: null, iterations: 2000, warmup: 200, repeat: 1, out: null,
    fixtureNames: ['checkpoint-16k.json', 'checkpoint-max.json'],
    fsyncCheck: 'auto', fsyncIterations: 100, command: null,
  };
  const keys = {
    '--store-bench': (v) => { opts.storeBench = path.resolve(v); },
    '--fixtures': (v) => { opts.fixtures = path.resolve(v); },
    '--dir': (v) => { opts.dir = path.resolve(v); },
    '--iterations': (v) => { opts.iterations = Number.parseInt(v, 10); },
    '--warmup': (v) => { opts.warmup = Number.parseInt(v, 10); },
    '--repeat': (v) => { opts.repeat = Number.parseInt(v, 10); },
    '--out': (v) => { opts.out = path.resolve(v); },
    '--fixture-names': (v) => { opts.fixtureNames = v.split(',').filter(Boolean); },
    '--fsync-check': (v) => { opts.fsyncCheck = v; },
    '--fsync-iterations': (v) => { opts.fsyncIterations = Number.parseInt(v, 10); },
    '--command': (v) => { opts.command = v; },
  };
  for (let i = 0; i < argv.length; i += 2) {
    const set = keys[argv[i]];
    if (!set || argv[i + 1] === undefined) throw new Error(`bad option ${argv[i]} (see run.mjs header)`);
    set(argv[i + 1]);
  }
  if (!opts.dir) throw new Error('--dir is required');
  if (!(opts.iterations >= 1000)) throw new Error('--iterations must be at least 1000');
  if (!(opts.repeat >= 1) || !(opts.warmup >= 0)) throw new Error('bad --repeat/--warmup');
  if (!['auto', 'on', 'off'].includes(opts.fsyncCheck)) throw new Error('bad --fsync-check');
  opts.fixtureNames = opts.fixtureNames.filter((n) => n === 'checkpoint-16k.json').concat(
    opts.fixtureNames.filter((n) => n !== 'checkpoint-16k.json'));
  return opts;
}

// Runs a command to completion; resolves with its stdout, rejects with its stderr on failure.
function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${path.basename(cmd)} ${args.join(' ')} failed (${code ?? signal}):\n${err.slice(-2000)}`));
    });
  });
}

function peerArgs(opts, side, fixture, iterations, warmup) {
  return [SIDES[side].script, '--fixture', path.join(opts.fixtures, fixture), '--dir', opts.dir,
    '--iterations', String(iterations), '--warmup', String(warmup)];
}

function parsePeerResult(stdout) {
  const line = stdout.split('\n').reverse().find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`no RESULT line in peer output:\n${stdout.slice(-2000)}`);
  return JSON.parse(line.slice('RESULT '.length));
}

async function measureSide(opts, side) {
  if (side === 'agentckpt') {
    const out = await run(opts.storeBench, ['--iterations', String(opts.iterations),
      '--fixtures', opts.fixtures, '--dir', opts.dir]);
    const all = parseStoreBench(out);
    const baseline = parseFsyncBaseline(out);
    return Object.fromEntries(opts.fixtureNames.map((f) => {
      if (!all[f]) throw new Error(`store_bench printed nothing for ${f}`);
      return [f, { ...all[f], baseline }];
    }));
  }
  const byFixture = {};
  for (const fixture of opts.fixtureNames) {
    byFixture[fixture] = parsePeerResult(await run(process.execPath,
      peerArgs(opts, side, fixture, opts.iterations, opts.warmup)));
  }
  return byFixture;
}

// fsync/fdatasync calls per write for each side, counted by strace over a short run of the
// first fixture (the count includes opening and setting up the database).
async function fsyncCheck(opts) {
  const n = opts.fsyncIterations;
  const traceFile = path.join(opts.dir, `strace-${process.pid}.txt`);
  const strace = (cmd, args) => run('strace', ['-f', '-qq', '-c', '-e', 'trace=fsync,fdatasync',
    '-o', traceFile, cmd, ...args]);
  const result = {};
  const out = await strace(opts.storeBench, ['--iterations', String(n), '--fixtures', opts.fixtures,
    '--dir', opts.dir]);
  // store_bench writes n + 20 warm-up documents for each of its two fixtures; its disk baseline
  // (when it prints one) does n + 20 fdatasync calls of its own, not counted here.
  const probe = parseFsyncBaseline(out) ? n + 20 : 0;
  result.agentckpt = {
    writes: 2 * (n + 20), calls: parseStraceCounts(fs.readFileSync(traceFile, 'utf8')) - probe,
  };
  for (const side of PEERS) {
    await strace(process.execPath, peerArgs(opts, side, opts.fixtureNames[0], n, 0));
    result[side] = { writes: n, calls: parseStraceCounts(fs.readFileSync(traceFile, 'utf8')) };
  }
  fs.rmSync(traceFile, { force: true });
  return result;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  fs.mkdirSync(opts.dir, { recursive: true });
  const machine = describeMachine(opts.dir, REPO);
  const startedAt = new Date();
  const order = ['langgraph', 'mastra', 'agentckpt'];
  const runs = [];
  for (let r = 0; r < opts.repeat; ++r) {
    const sides = {};
    const loadavg = {};
    const rotated = order.slice(r % 3).concat(order.slice(0, r % 3));
    for (const side of rotated) {
      process.stderr.write(`run ${r + 1}/${opts.repeat}: ${SIDES[side].label} ...\n`);
      loadavg[side] = os.loadavg()[0];
      sides[side] = await measureSide(opts, side);
    }
    runs.push({ order: rotated, sides, loadavg });
    process.stdout.write(renderConsole(runs.length, opts, runs.at(-1)));
  }
  let fsync = null;
  const haveStrace = opts.fsyncCheck !== 'off' && straceAvailable();
  if (opts.fsyncCheck === 'on' && !haveStrace) throw new Error('--fsync-check on needs strace');
  if (haveStrace) {
    process.stderr.write('durability check: counting fsync calls per write with strace ...\n');
    fsync = await fsyncCheck(opts);
  }
  const finishedAt = new Date();
  machine.loadavgEnd = describeMachine(opts.dir, REPO).loadavg;
  if (opts.out) {
    fs.mkdirSync(path.dirname(opts.out), { recursive: true });
    fs.writeFileSync(opts.out, renderMarkdown({ repo: REPO, opts, machine, runs, fsync, startedAt, finishedAt }));
    process.stdout.write(`\nwrote ${opts.out}\n`);
  }
  if (fsync) {
    for (const [side, f] of Object.entries(fsync)) {
      process.stdout.write(`fsync per write, ${SIDES[side].label}: ${(f.calls / f.writes).toFixed(2)}\n`);
    }
  }
}

main().catch((e) => {
  process.stderr.write(`bench-peers: ${e.stack ?? e}\n`);
  process.exit(1);
});
