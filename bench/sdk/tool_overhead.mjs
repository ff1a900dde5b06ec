// The overhead of AgentCkptLedgerCallback on a LangChain tool call: p50/p99 of tool.invoke()
// without the handler, with it (end sent in the background, the default), with it and awaitEnd,
// next to one durable round trip alone (a ledger begin). A real nats-server and `agentckpt run`
// (SQLite, CKPT_DURABILITY=sync) are started by tests/sdk/harness.mjs.
//
//   node tool_overhead.mjs [--iterations N] [--warmup N] [--dir DIR]
// AGENTCKPT_BIN names the binary (default build/bin/agentckpt); DIR holds the store (default
// build/bench-sdk; use a disk, not tmpfs, for figures that mean anything).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { tmpdir, cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { z } from "zod";
import { tool } from "@langchain/core/tools";
import { AgentCkptClient } from "@agentckpt/client";
import { AgentCkptLedgerCallback } from "@agentckpt/client/langgraph";
import { SidecarEnv, sourceDir } from "../../tests/sdk/harness.mjs";

const { values: opt } = parseArgs({
  options: {
    iterations: { type: "string", default: "2000" },
    warmup: { type: "string", default: "200" },
    dir: { type: "string", default: join(sourceDir, "build", "bench-sdk") },
  },
});
const iterations = Number(opt.iterations);
const warmup = Number(opt.warmup);

// Nearest-rank percentile, as bench/common/percentiles.h.
function pct(sorted, p) {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}
const ms = (v) => v.toFixed(3);

async function measure(label, fn) {
  for (let i = 0; i < warmup; i++) await fn(`w${i}`);
  const samples = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    await fn(`m${i}`);
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  samples.sort((a, b) => a - b);
  const row = { label, p50: pct(samples, 50), p90: pct(samples, 90), p99: pct(samples, 99), max: samples.at(-1) };
  console.log(`${label.padEnd(44)} ${ms(row.p50).padStart(8)} ${ms(row.p90).padStart(8)} ${ms(row.p99).padStart(8)} ${ms(row.max).padStart(8)}`);
  return row;
}

mkdirSync(opt.dir, { recursive: true });
const storeDir = mkdtempSync(join(resolve(opt.dir), "run-"));
let fsType = "?";
try {
  fsType = execFileSync("stat", ["-f", "-c", "%T", storeDir], { encoding: "utf8" }).trim();
} catch {}
const env = await SidecarEnv.create({
  agentId: "agent-bench-sdk",
  env: { CKPT_STORE: "sqlite://" + join(storeDir, "store.db"), CKPT_DURABILITY: "sync" },
});
try {
  await env.startSidecar();
  const client = new AgentCkptClient({ baseUrl: env.url });
  await client.putContext({
    activeTask: { taskId: "bench", title: "bench", phase: "executing", progress: 0, startedAt: new Date().toISOString() },
    contextSummary: { systemPromptHash: "", gatheringResults: "", planOutline: [], completedSteps: 0, draftContent: "", toolCallLog: [] },
    workspace: null,
  });
  const lookup = tool(async ({ id }) => `record ${id}: ok`, {
    name: "update_record",
    description: "Updates a record",
    schema: z.object({ id: z.string() }),
  });
  const handler = new AgentCkptLedgerCallback(client);
  const handlerAwaitEnd = new AgentCkptLedgerCallback(client, { awaitEnd: true });
  let n = 0;
  const call = (id) => ({ type: "tool_call", id: `call-${n++}-${id}`, name: "update_record", args: { id } });

  console.log(`# agentckpt SDK tool-call overhead: ${iterations} measured iterations after ${warmup} warm-up, one at a time`);
  console.log(`# node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model}), load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  console.log(`# sidecar: CKPT_DURABILITY=sync, SQLite store on ${fsType} (${storeDir}), HTTP on 127.0.0.1 (keep-alive fetch)`);
  console.log(`${"case (ms)".padEnd(44)} ${"p50".padStart(8)} ${"p90".padStart(8)} ${"p99".padStart(8)} ${"max".padStart(8)}`);
  const bare = await measure("tool.invoke, no handler", (id) => lookup.invoke(call(id)));
  const begin = await measure("one durable round trip (ledger begin)", (id) =>
    client.beginToolCall({ toolName: "bench", effect: "write", idempotencyKey: `rt-${id}-${n++}` }));
  const withHandler = await measure("tool.invoke + ledger callback (default)", async (id) => {
    await lookup.invoke(call(id), { callbacks: [handler] });
  });
  await handler.flush();
  const withAwait = await measure("tool.invoke + ledger callback (awaitEnd)", (id) =>
    lookup.invoke(call(id), { callbacks: [handlerAwaitEnd] }));
  if (handler.errors.length || handlerAwaitEnd.errors.length) {
    throw new Error(`handler errors: ${String(handler.errors[0]?.error ?? handlerAwaitEnd.errors[0]?.error)}`);
  }
  const over = (r) => `p50 +${ms(r.p50 - bare.p50)} ms (${(r.p50 - bare.p50) / begin.p50 > 0 ? ((r.p50 - bare.p50) / begin.p50).toFixed(2) : "0"} round trips), p99 +${ms(r.p99 - bare.p99)} ms`;
  console.log(`# overhead, default: ${over(withHandler)}`);
  console.log(`# overhead, awaitEnd: ${over(withAwait)}`);
} finally {
  await env.close();
  rmSync(storeDir, { recursive: true, force: true });
}
