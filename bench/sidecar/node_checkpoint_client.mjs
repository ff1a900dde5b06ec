// The Node client of sidecar_http_bench: POST /v1/checkpoints as an agent written in JavaScript
// would, over one kept-alive connection, with either transport:
//   fetch  Node's built-in fetch (undici);
//   http   node:http with a keep-alive agent (what the TypeScript client uses for http://).
// After the checkpoints it times as many GET /healthz through the same transport and connection:
// a request the sidecar answers without touching the store, so the client's own share of a round
// trip (its transport, its event loop, its garbage collector) can be told from the sidecar's.
// Each is timed twice in the same process: CALLS calls after 20 warm-up calls (a fresh process),
// then CALLS calls once STEADY_AFTER calls have been made (a process that has made requests for a
// while). V8 compiles a function's hot paths in tiers as they are called, and undici's fetch
// keeps getting faster for a few thousand calls: on a 2-core machine GET /healthz through fetch
// went from p50 0.34 / p99 4.2 ms in the first thousand calls to p50 0.08 / p99 0.5-0.9 ms after
// three thousand, with the sidecar's own time unchanged. A long-running agent is in the second
// state; the first is what a process sees in its first seconds.
// The client's own garbage collector is watched too (perf_hooks 'gc' entries, V8's own timing of
// each pause): for every timed POST, how many milliseconds of the client's GC pauses fell inside
// its round trip.
// Usage: node [node flags] node_checkpoint_client.mjs PORT CALLS [fetch|http] [STEADY_AFTER (default 5000)]
// Prints one JSON line: {"node" (its version), "execArgv" (node flags), "calls", "transport",
// "steadyAfter", "clientMs": [...], "clientGcMs": [...], "serverMs": [...], "healthzMs": [...],
// "steady": {"clientMs", "clientGcMs", "serverMs", "healthzMs"}}.
import http from 'node:http';
import {PerformanceObserver} from 'node:perf_hooks';

const [port, callsArg, transportArg, steadyArg] = process.argv.slice(2);
const calls = Number(callsArg ?? 1000);
const steadyAfter = Number(steadyArg ?? 5000);
const transport = transportArg ?? 'fetch';
if (transport !== 'fetch' && transport !== 'http') {
  console.error(`unknown transport ${transport} (fetch or http)`);
  process.exit(2);
}
const url = `http://127.0.0.1:${port}/v1/checkpoints`;
const healthzUrl = `http://127.0.0.1:${port}/healthz`;
const payload = '{"trigger":"manual"}';
const agent = new http.Agent({keepAlive: true, maxSockets: 1});
const gcPauses = [];  // [start, end] of each of this process's GC pauses, performance.now() ms
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push([e.startTime, e.startTime + e.duration]);
}).observe({entryTypes: ['gc']});

async function postWithFetch() {
  const res = await fetch(url, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: payload,
  });
  return {status: res.status, body: await res.json()};
}

// Reads a node:http response to its end and resolves {status, body} with the body parsed.
function readJson(res, resolve, reject) {
  const chunks = [];
  res.on('data', (c) => chunks.push(c));
  res.on('end', () => {
    try {
      resolve({status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString())});
    } catch (err) {
      reject(err);
    }
  });
  res.on('error', reject);
}

function postWithHttp() {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      agent,
      headers: {'content-type': 'application/json', 'content-length': Buffer.byteLength(payload)},
    }, (res) => readJson(res, resolve, reject));
    req.on('error', reject);
    req.end(payload);
  });
}

async function getWithFetch() {
  const res = await fetch(healthzUrl);
  return {status: res.status, body: await res.json()};
}

function getWithHttp() {
  return new Promise((resolve, reject) => {
    http.get(healthzUrl, {agent}, (res) => readJson(res, resolve, reject)).on('error', reject);
  });
}

const post = transport === 'fetch' ? postWithFetch : postWithHttp;
const get = transport === 'fetch' ? getWithFetch : getWithHttp;
// Makes `count` calls of `call`, checks each status against `want`, and returns the round trips
// (ms), the [start, end] of each, and, when `withServerMs`, the sidecar's durationMs of each.
async function timeCalls(count, call, want, what, withServerMs) {
  const clientMs = [];
  const spans = [];
  const serverMs = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    const {status, body} = await call();
    const end = performance.now();
    if (status !== want) {
      console.error(`${what} ${i}: HTTP ${status} ${JSON.stringify(body)}`);
      process.exit(1);
    }
    clientMs.push(end - start);
    spans.push([start, end]);
    if (withServerMs) serverMs.push(body.durationMs);
  }
  return {clientMs, spans, serverMs};
}

// For each [start, end], the milliseconds of this process's GC pauses inside it.
function gcInside(spans) {
  return spans.map(([start, end]) => gcPauses.reduce(
      (sum, [gs, ge]) => sum + Math.max(0, Math.min(end, ge) - Math.max(start, gs)), 0));
}

const postOf = (n) => timeCalls(n, post, 201, 'POST /v1/checkpoints', true);
const getOf = (n) => timeCalls(n, get, 200, 'GET /healthz', false);
await postOf(20);  // warm-up, not counted
const first = await postOf(calls);
await getOf(20);
const firstHealthz = await getOf(calls);
// Both requests are made alike until STEADY_AFTER calls in all, then timed again.
const made = 2 * (calls + 20);
for (let i = made; i < steadyAfter; i += 2) {
  await postOf(1);
  await getOf(1);
}
const steady = await postOf(calls);
const steadyHealthz = await getOf(calls);
agent.destroy();
await new Promise((resolve) => setTimeout(resolve, 20));  // the last GC entries are delivered
console.log(JSON.stringify({
  node: process.version,
  execArgv: process.execArgv,
  calls,
  transport,
  steadyAfter,
  clientMs: first.clientMs,
  clientGcMs: gcInside(first.spans),
  serverMs: first.serverMs,
  healthzMs: firstHealthz.clientMs,
  steady: {
    clientMs: steady.clientMs,
    clientGcMs: gcInside(steady.spans),
    serverMs: steady.serverMs,
    healthzMs: steadyHealthz.clientMs,
  },
}));
