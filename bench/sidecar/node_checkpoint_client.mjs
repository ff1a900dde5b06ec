// The Node client of sidecar_http_bench: POST /v1/checkpoints with fetch (Node's built-in
// undici client, which keeps connections alive), as an agent written in JavaScript would.
// Usage: node node_checkpoint_client.mjs PORT CALLS
// Prints one JSON line: {"calls", "clientMs": [...], "serverMs": [...]}.
const [port, callsArg] = process.argv.slice(2);
const calls = Number(callsArg ?? 1000);
const url = `http://127.0.0.1:${port}/v1/checkpoints`;
const clientMs = [];
const serverMs = [];
for (let i = 0; i < calls + 20; i++) {  // the first 20 warm up and are not counted
  const start = process.hrtime.bigint();
  const res = await fetch(url, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: '{"trigger":"manual"}',
  });
  const body = await res.json();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (res.status !== 201) {
    console.error(`call ${i}: HTTP ${res.status} ${JSON.stringify(body)}`);
    process.exit(1);
  }
  if (i < 20) continue;
  clientMs.push(ms);
  serverMs.push(body.durationMs);
}
console.log(JSON.stringify({calls, clientMs, serverMs}));
