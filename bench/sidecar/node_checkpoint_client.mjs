// The Node client of sidecar_http_bench: POST /v1/checkpoints as an agent written in JavaScript
// would, over one kept-alive connection, with either transport:
//   fetch  Node's built-in fetch (undici);
//   http   node:http with a keep-alive agent (what the TypeScript client uses for http://).
// After the checkpoints it times as many GET /healthz through the same transport and connection:
// a request the sidecar answers without touching the store, so the client's own share of a round
// trip (its transport, its event loop, its garbage collector) can be told from the sidecar's.
// Usage: node node_checkpoint_client.mjs PORT CALLS [fetch|http]
// Prints one JSON line: {"calls", "transport", "clientMs": [...], "serverMs": [...],
// "healthzMs": [...]}.
import http from 'node:http';

const [port, callsArg, transportArg] = process.argv.slice(2);
const calls = Number(callsArg ?? 1000);
const transport = transportArg ?? 'fetch';
if (transport !== 'fetch' && transport !== 'http') {
  console.error(`unknown transport ${transport} (fetch or http)`);
  process.exit(2);
}
const url = `http://127.0.0.1:${port}/v1/checkpoints`;
const healthzUrl = `http://127.0.0.1:${port}/healthz`;
const payload = '{"trigger":"manual"}';
const agent = new http.Agent({keepAlive: true, maxSockets: 1});

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
const clientMs = [];
const serverMs = [];
for (let i = 0; i < calls + 20; i++) {  // the first 20 warm up and are not counted
  const start = process.hrtime.bigint();
  const {status, body} = await post();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (status !== 201) {
    console.error(`call ${i}: HTTP ${status} ${JSON.stringify(body)}`);
    process.exit(1);
  }
  if (i < 20) continue;
  clientMs.push(ms);
  serverMs.push(body.durationMs);
}
const healthzMs = [];
for (let i = 0; i < calls + 20; i++) {
  const start = process.hrtime.bigint();
  const {status, body} = await get();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (status !== 200) {
    console.error(`GET /healthz ${i}: HTTP ${status} ${JSON.stringify(body)}`);
    process.exit(1);
  }
  if (i >= 20) healthzMs.push(ms);
}
agent.destroy();
console.log(JSON.stringify({calls, transport, clientMs, serverMs, healthzMs}));
