// One durably recorded agent step, side by side in one run (docs/performance-peers.md, "One
// durable step"):
//
//   agentckpt:  PATCH /v1/context with a ~1 KB merge patch of the 16k reference context (the
//               step's change), sent with fetch (keep-alive) to a sidecar at default settings
//               (CKPT_DURABILITY=sync, SQLite): the reply says durable:true, so the change is in
//               the fsynced journal.
//   agentckpt client: the same change through @agentckpt/client's patchContext (--client: the
//               path of its built dist/index.js), which sends over node:http for an http://
//               sidecar: what an agent written in TypeScript with the project's client sends.
//   LangGraph:  what durability="sync" makes a graph step wait for: SqliteSaver.putWrites of the
//               step's writes, then SqliteSaver.put of the new checkpoint, whose channel_values
//               hold the context after the change (WAL, synchronous=FULL on the saver's handle).
//
// The sides take turns step by step, in an order shuffled each step (--seed), so all see the same
// disk and machine. The script
// starts its own nats-server and sidecar (stopped by pid at the end).
//
// Warm-up: every side runs in this Node process (LangGraph's saver in it, agentckpt's HTTP
// clients from it), and V8 compiles hot code in tiers over thousands of calls; undici's fetch
// keeps getting faster for about 3,000 requests (docs/performance.md, "A fresh Node process and a
// long-running one"). 5,000 untimed steps of all the sides first compare them as in an agent
// that has run for a while; --warmup 200 shows a process in its first seconds.
//
//   node step.mjs --agentckpt BIN --fixture FILE --dir DIR [--iterations 2000] [--warmup 5000]
//                 [--seed N] [--client clients/typescript/dist/index.js]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { summarize } from './lib/stats.mjs';
import { packageVersion } from './lib/peer_harness.mjs';

const opts = { iterations: 2000, warmup: 5000 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const key = argv[i].replace(/^--/, '');
  opts[key] = ['iterations', 'warmup'].includes(key) ? Number(argv[i + 1]) : argv[i + 1];
}
for (const k of ['agentckpt', 'fixture', 'dir']) {
  if (!opts[k]) throw new Error(`--${k} is required`);
}

const freePort = () => new Promise((resolve, reject) => {
  const srv = net.createServer();
  srv.once('error', reject);
  srv.listen(0, '127.0.0.1', () => {
    const { port } = srv.address();
    srv.close(() => resolve(port));
  });
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const work = fs.mkdtempSync(path.join(opts.dir, 'step-'));
const children = [];
const stopAll = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
};
process.on('exit', stopAll);

const natsPort = await freePort();
const nats = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(natsPort), '-sd',
  path.join(work, 'js')], { stdio: 'ignore' });
children.push(nats);
const httpPort = await freePort();
const sidecar = spawn(opts.agentckpt, ['run'], {
  stdio: ['ignore', 'ignore', fs.openSync(path.join(work, 'sidecar.err'), 'w')],
  env: {
    ...process.env,
    AGENT_ID: 'agent-step-bench',
    NATS_URL: `nats://127.0.0.1:${natsPort}`,
    CKPT_STORE: `sqlite://${path.join(work, 'agentckpt.db')}`,
    CKPT_HTTP_ADDR: `127.0.0.1:${httpPort}`,
    CKPT_LOG_LEVEL: 'warn',
  },
});
children.push(sidecar);
const base = `http://127.0.0.1:${httpPort}`;
let ready = false;
for (let i = 0; i < 200 && !ready; ++i) {
  try {
    ready = (await fetch(`${base}/readyz`)).status === 200;
  } catch {
    // not listening yet
  }
  if (!ready) await sleep(50);
}
if (!ready) throw new Error(`sidecar not ready: ${fs.readFileSync(path.join(work, 'sidecar.err'))}`);

const doc = JSON.parse(fs.readFileSync(opts.fixture, 'utf8'));
const context = {
  activeTask: doc.activeTask, contextSummary: doc.contextSummary, workspace: doc.workspace ?? null,
};
const put = await fetch(`${base}/v1/context`, {
  method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(context),
});
if (put.status !== 200) throw new Error(`PUT /v1/context: ${put.status} ${await put.text()}`);

const saver = SqliteSaver.fromConnString(path.join(work, 'langgraph.db'));
saver.setup();
saver.db.pragma('synchronous = FULL');
if (saver.db.pragma('journal_mode', { simple: true }) !== 'wal' ||
    saver.db.pragma('synchronous', { simple: true }) !== 2) {
  throw new Error('SqliteSaver database not durable');
}

const draft = (i) => {
  let s = `step ${i}: `;
  while (s.length < 1000) s += 'the agent wrote more of its draft; ';
  return s.slice(0, 1000);
};
const threadId = 'agent-step-bench';
let parentId;
const state = structuredClone(context);
// node:http with a keep-alive agent: the lighter of Node's two HTTP clients.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const patchWithHttp = (body) => new Promise((resolve, reject) => {
  const req = http.request(`${base}/v1/context`, {
    method: 'PATCH', agent, headers: { 'content-type': 'application/json',
      'content-length': Buffer.byteLength(body) },
  }, (res) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (d) => { text += d; });
    res.on('end', () => resolve({ status: res.statusCode, reply: JSON.parse(text) }));
  });
  req.on('error', reject);
  req.end(body);
});
const samples = { agentckpt: [], agentckptHttp: [], agentckptClient: [], langgraph: [] };
{
  // The graph's first checkpoint (untimed): the writes of step 0 belong to it.
  const first = emptyCheckpoint();
  first.id = uuid6(-1);
  first.channel_values = { context: state };
  first.channel_versions = { context: 0 };
  await saver.put({ configurable: { thread_id: threadId, checkpoint_ns: '' } }, first,
    { source: 'input', step: -1, parents: {} }, { context: 0 });
  parentId = first.id;
}
// The three ways of recording step i, each timed on its own.
const steps = {
  // agentckpt from fetch: the step's change as a merge patch, durable before the reply.
  async agentckpt(i, change) {
    const t0 = performance.now();
    const res = await fetch(`${base}/v1/context`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contextSummary: change }),
    });
    const reply = await res.json();
    const t1 = performance.now();
    if (res.status !== 200 || reply.durable !== true) {
      throw new Error(`PATCH ${i}: ${res.status} ${JSON.stringify(reply)}`);
    }
    return t1 - t0;
  },
  // The same from node:http (a different draft, so that the patch changes the context again).
  async agentckptHttp(i, change) {
    const body = JSON.stringify({ contextSummary: { ...change, draftContent: `${change.draftContent.slice(0, 990)} (again)` } });
    const t0 = performance.now();
    const viaHttp = await patchWithHttp(body);
    const t1 = performance.now();
    if (viaHttp.status !== 200 || viaHttp.reply.durable !== true) {
      throw new Error(`PATCH ${i} (node:http): ${viaHttp.status} ${JSON.stringify(viaHttp.reply)}`);
    }
    return t1 - t0;
  },
  // LangGraph: the step's pending writes, then the checkpoint holding the new state.
  async langgraph(i, change) {
    Object.assign(state.contextSummary, change);
    const checkpoint = emptyCheckpoint();
    checkpoint.id = uuid6(-1);
    checkpoint.ts = new Date().toISOString();
    checkpoint.channel_values = { context: state };
    checkpoint.channel_versions = { context: i + 1 };
    const config = { configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: parentId } };
    const t0 = performance.now();
    await saver.putWrites(config, [['context', { contextSummary: change }]], `task-${i}`);
    const saved = await saver.put(config, checkpoint, { source: 'loop', step: i, parents: {} },
      { context: i + 1 });
    const t1 = performance.now();
    parentId = checkpoint.id;
    if (saved.configurable.checkpoint_id !== checkpoint.id) throw new Error('put returned another id');
    return t1 - t0;
  },
};
// The project's TypeScript client, when --client names it (a third draft, so that the patch
// changes the context again).
if (opts.client) {
  const { AgentCkptClient } = await import(path.resolve(opts.client));
  const client = new AgentCkptClient({ baseUrl: base });
  steps.agentckptClient = async (i, change) => {
    const patch = { contextSummary: { ...change,
      draftContent: `${change.draftContent.slice(0, 990)} (client)` } };
    const t0 = performance.now();
    const reply = await client.patchContext(patch);
    const t1 = performance.now();
    if (reply.durable !== true) {
      throw new Error(`PATCH ${i} (@agentckpt/client): ${JSON.stringify(reply)}`);
    }
    return t1 - t0;
  };
}
// Each step records the sides in an order shuffled anew (mulberry32 from --seed), so that none
// always follows the same one: what a write leaves behind (an fsync just done, the other
// process's work after its reply) does not always land on the same next side.
let seedState = Number(opts.seed ?? 20261126) >>> 0;
const random = () => {
  seedState = (seedState + 0x6d2b79f5) >>> 0;
  let t = seedState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const names = Object.keys(steps);
for (let i = 0; i < opts.warmup + opts.iterations; ++i) {
  const change = { completedSteps: i, draftContent: draft(i) };
  const order = [...names];
  for (let k = order.length - 1; k > 0; k--) {
    const j = Math.floor(random() * (k + 1));
    [order[k], order[j]] = [order[j], order[k]];
  }
  for (const name of order) {
    const ms = await steps[name](i, change);
    if (i >= opts.warmup) samples[name].push(ms * 1000);
  }
}
saver.db.close();
agent.destroy();
stopAll();

const result = {
  iterations: opts.iterations,
  warmup: opts.warmup,
  agentckpt: summarize(samples.agentckpt),
  agentckptHttp: summarize(samples.agentckptHttp),
  ...(opts.client ? { agentckptClient: summarize(samples.agentckptClient) } : {}),
  langgraph: summarize(samples.langgraph),
  packages: Object.fromEntries(['@langchain/langgraph-checkpoint-sqlite', 'better-sqlite3']
    .map((p) => [p, packageVersion(p)])),
  node: process.version,
};
const f = (x) => x.toFixed(3);
const row = (name, s) => `| ${name} | ${f(s.p50)} ms | ${f(s.p90)} ms | ${f(s.p99)} ms | ${f(s.max)} ms |`;
console.log([
  '| one durable step (16k context, ~1 KB change) | p50 | p90 | p99 | max |',
  '|---|---|---|---|---|',
  row('agentckpt: PATCH /v1/context from Node fetch (keep-alive), sync, SQLite', result.agentckpt),
  row('agentckpt: PATCH /v1/context from node:http (keep-alive agent), sync, SQLite',
    result.agentckptHttp),
  ...(opts.client ? [row('agentckpt: patchContext of @agentckpt/client (node:http), sync, SQLite',
    result.agentckptClient)] : []),
  row('LangGraph SqliteSaver: putWrites + put (durability "sync")', result.langgraph),
].join('\n'));
console.log(`RESULT ${JSON.stringify(result)}`);
fs.rmSync(work, { recursive: true, force: true });
