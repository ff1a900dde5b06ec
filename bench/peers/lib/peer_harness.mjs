// The measuring loop shared by the peer benchmarks, and the command line they accept.
//
// Each iteration builds the next document (outside the timing), writes it, then loads the latest
// one back and checks that it is the document just written (the check is outside the timing).
// The first `warmup` iterations are not measured. The result is printed as one line
// "RESULT {json}" on stdout; the orchestrator (run.mjs) reads it.

import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { summarize } from './stats.mjs';

// --fixture FILE --dir DIR [--iterations N] [--warmup N]
export function parsePeerArgs(argv) {
  const opts = { iterations: 2000, warmup: 200, fixture: null, dir: null };
  for (let i = 0; i < argv.length; i += 2) {
    const [key, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`missing value for ${key}`);
    if (key === '--iterations') opts.iterations = Number.parseInt(value, 10);
    else if (key === '--warmup') opts.warmup = Number.parseInt(value, 10);
    else if (key === '--fixture') opts.fixture = value;
    else if (key === '--dir') opts.dir = value;
    else throw new Error(`unknown option ${key}`);
  }
  if (!opts.fixture || !opts.dir) throw new Error('--fixture and --dir are required');
  if (!(opts.iterations > 0) || !(opts.warmup >= 0)) throw new Error('bad --iterations/--warmup');
  return opts;
}

// The fixture parsed once; each iteration gets a shallow copy with its own sequenceNumber and
// checkpointId, as store_bench does for agentckpt.
export function loadFixture(file) {
  const base = JSON.parse(fs.readFileSync(file, 'utf8'));
  return (i) => ({ ...base, sequenceNumber: i + 1, checkpointId: randomUUID() });
}

// A fresh database path in `dir` for this process; `remove` deletes it and its WAL files.
export function databasePath(dir, side, fixture) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${side}-${process.pid}-${path.basename(fixture)}.db`);
  const remove = () => {
    for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(file + suffix, { force: true });
  };
  remove();
  return { file, remove };
}

// Runs the loop. `side` supplies: write(i, doc) -> Promise, load() -> Promise<doc or null>
// returning the stored fixture document, and `prepare(i, doc)` (optional, untimed) building
// what write() gets.
export async function measure(opts, makeDoc, side) {
  const writes = [];
  const loads = [];
  const total = opts.warmup + opts.iterations;
  for (let i = 0; i < total; ++i) {
    const doc = makeDoc(i);
    const input = side.prepare ? side.prepare(i, doc) : doc;
    const t0 = performance.now();
    await side.write(i, input);
    const t1 = performance.now();
    const loaded = await side.load();
    const t2 = performance.now();
    if (!loaded || loaded.sequenceNumber !== i + 1 || loaded.checkpointId !== doc.checkpointId) {
      throw new Error(`load-latest after write ${i + 1} returned sequence ${loaded?.sequenceNumber}`);
    }
    if (i < opts.warmup) continue;
    writes.push((t1 - t0) * 1000);
    loads.push((t2 - t1) * 1000);
  }
  return { write: summarize(writes), load: summarize(loads) };
}

export function packageVersion(name) {
  const url = new URL(`../node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(fs.readFileSync(url, 'utf8')).version;
}

export function report(result) {
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}
