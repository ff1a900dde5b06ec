// The overhead of AgentCkptLedgerCallback on a LangChain tool call: p50/p99 of tool.invoke()
// without the handler, with it (end sent in the background, the default), with it and awaitEnd,
// next to one durable round trip alone (a ledger begin). A real nats-server and `agentckpt run`
// (SQLite, CKPT_DURABILITY=sync) are started by tests/sdk/harness.mjs.
//
//   node tool_overhead.mjs [--iterations N] [--warmup N] [--gap-ms MS] [--seed N] [--dir DIR]
// AGENTCKPT_BIN names the binary (default build/bin/agentckpt); DIR holds the store (default
// build/bench-sdk; use a disk, not tmpfs, for figures that mean anything). The cases are
// interleaved (one call of each per round), so a change in the machine's load hits all of them
// alike, in an order shuffled anew each round (--seed): in a fixed order each case always follows
// the same one, and what a case leaves behind (a store write just fsynced, the sidecar's work after
// a reply, the client's garbage) always lands on the same next case. Before each call the agent
// waits --gap-ms untimed (its own work between tool calls, e.g. the model's turn; 0 = back to
// back). The first --warmup rounds (default 1,000: 5,000 calls) are untimed: V8 compiles the
// client's, LangChain's and node:http's hot code in tiers over thousands of calls, and an agent
// that has run for a while has made them (docs/performance.md, "A fresh Node process and a
// long-running one"); --warmup 20 shows a process in its first seconds.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { z } from "zod";
import { tool } from "@langchain/core/tools";
import { AgentCkptClient } from "@agentckpt/client";
import { AgentCkptLedgerCallback } from "@agentckpt/client/langgraph";
import { SidecarEnv, sourceDir } from "../../tests/sdk/harness.mjs";

const { values: opt } = parseArgs({
  options: {
    iterations: { type: "string", default: "1000" },
    warmup: { type: "string", default: "1000" },
    "gap-ms": { type: "string", default: "0" },
    seed: { type: "string", default: "20261126" },
    dir: { type: "string", default: join(sourceDir, "build", "bench-sdk") },
  },
});
const iterations = Number(opt.iterations);
const warmup = Number(opt.warmup);
const gapMs = Number(opt["gap-ms"]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// mulberry32: a small seeded generator, so that a run's case order can be repeated.
let seedState = Number(opt.seed) >>> 0;
function random() {
  seedState = (seedState + 0x6d2b79f5) >>> 0;
  let t = seedState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function shuffled(n) {
  const order = [...Array(n).keys()];
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

// Nearest-rank percentile, as bench/common/percentiles.h.
function pct(sorted, p) {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}
const ms = (v) => v.toFixed(3);

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
  const update = tool(async ({ id }) => `record ${id}: ok`, {
    name: "update_record",
    description: "Updates a record",
    schema: z.object({ id: z.string() }),
  });
  const handler = new AgentCkptLedgerCallback(client);
  const handlerAwaitEnd = new AgentCkptLedgerCallback(client, { awaitEnd: true });
  // An awaited handler that does nothing: what LangChain's callback dispatch costs by itself, with
  // the same flags as the ledger callback.
  const noop = {
    name: "NoopAwaitedHandler", awaitHandlers: true, raiseError: false, ignoreLLM: true,
    ignoreChain: true, ignoreAgent: false, ignoreRetriever: true, ignoreCustomEvent: true,
    ignoreRetry: true, copy() { return this; },
    async handleToolStart() {}, async handleToolEnd() {}, async handleToolError() {},
  };
  let n = 0;
  const call = () => ({ type: "tool_call", id: `call-${n++}`, name: "update_record", args: { id: String(n) } });
  const cases = [
    ["tool.invoke, no handler", () => update.invoke(call())],
    // The request the handler sends at tool start, made directly: the same fields and sizes.
    ["one durable round trip (ledger begin)", () => {
      const text = JSON.stringify({ id: String(n) });
      return client.beginToolCall({
        toolName: "update_record", effect: "write",
        argsSha256: createHash("sha256").update(text).digest("hex"),
        inputSummary: text, idempotencyKey: `lc:rt-${n++}`,
      });
    }],
    ["tool.invoke + awaited no-op handler", () => update.invoke(call(), { callbacks: [noop] })],
    ["tool.invoke + ledger callback (default)", () => update.invoke(call(), { callbacks: [handler] })],
    ["tool.invoke + ledger callback (awaitEnd)", () => update.invoke(call(), { callbacks: [handlerAwaitEnd] })],
  ];
  const samples = cases.map(() => []);
  for (let round = 0; round < warmup + iterations; round++) {
    for (const c of shuffled(cases.length)) {
      if (gapMs) await sleep(gapMs);
      const t0 = process.hrtime.bigint();
      await cases[c][1]();
      const took = Number(process.hrtime.bigint() - t0) / 1e6;
      if (round >= warmup) samples[c].push(took);
      // Untimed: the default handler's end, sent in the background, is answered before the next
      // case starts, so that no case is timed while another one's request is in flight (in an
      // agent the end overlaps the agent's own next work, e.g. the model's turn).
      await handler.flush();
    }
  }
  await handler.flush();
  if (handler.errors.length || handlerAwaitEnd.errors.length) {
    throw new Error(`handler errors: ${String(handler.errors[0]?.error ?? handlerAwaitEnd.errors[0]?.error)}`);
  }
  console.log(`# agentckpt SDK tool-call overhead: ${iterations} measured rounds after ${warmup} warm-up; the ${cases.length} cases interleaved in a shuffled order (seed ${opt.seed}), one call at a time, ${gapMs} ms untimed before each call`);
  console.log(`# node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model}), load average after the run ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  console.log(`# sidecar: CKPT_DURABILITY=sync, SQLite store on ${fsType} (${storeDir}), HTTP on 127.0.0.1 (@agentckpt/client's default transport: node:http, keep-alive)`);
  console.log(`${"case (ms)".padEnd(44)} ${"p50".padStart(8)} ${"p90".padStart(8)} ${"p99".padStart(8)} ${"max".padStart(8)}`);
  const rows = samples.map((s, c) => {
    s.sort((a, b) => a - b);
    const row = { p50: pct(s, 50), p90: pct(s, 90), p99: pct(s, 99), max: s.at(-1) };
    console.log(`${cases[c][0].padEnd(44)} ${ms(row.p50).padStart(8)} ${ms(row.p90).padStart(8)} ${ms(row.p99).padStart(8)} ${ms(row.max).padStart(8)}`);
    return row;
  });
  const [bare, trip, noopRow, dflt, awaitEnd] = rows;
  const over = (r) =>
    `p50 +${ms(r.p50 - bare.p50)} ms = ${((r.p50 - bare.p50) / trip.p50).toFixed(2)} x the round trip's p50; ` +
    `p99 +${ms(r.p99 - bare.p99)} ms = ${((r.p99 - bare.p99) / trip.p99).toFixed(2)} x its p99`;
  console.log(`# LangChain's dispatch of an awaited handler alone: p50 +${ms(noopRow.p50 - bare.p50)} ms, p99 +${ms(noopRow.p99 - bare.p99)} ms`);
  console.log(`# overhead, default:  ${over(dflt)}`);
  console.log(`# overhead, default, over the no-op handler: p50 +${ms(dflt.p50 - noopRow.p50)} ms = ${((dflt.p50 - noopRow.p50) / trip.p50).toFixed(2)} x the round trip's p50`);
  console.log(`# overhead, awaitEnd: ${over(awaitEnd)}`);
  // What "adds one durable round trip" predicts, without assuming that percentiles add (the p99
  // of a sum is not the sum of the p99s): the distribution of a tool call plus one round trip,
  // from every pair of the two cases' samples (both measured in this run).
  const plusOneTrip = (base) => {
    const sums = new Float64Array(base.length * samples[1].length);
    let k = 0;
    for (const a of base) for (const b of samples[1]) sums[k++] = a + b;
    sums.sort();
    return { p50: pct(sums, 50), p99: pct(sums, 99) };
  };
  const verdict = (r, model) =>
    `p50 ${ms(r.p50)} / p99 ${ms(r.p99)} ms against ${ms(model.p50)} / ${ms(model.p99)} ms ` +
    `(${(r.p50 / model.p50).toFixed(2)} x / ${(r.p99 / model.p99).toFixed(2)} x)`;
  console.log(`# ledger callback (default) vs a tool call without a handler plus one round trip: ${verdict(dflt, plusOneTrip(samples[0]))}`);
  console.log(`# ledger callback (default) vs a tool call with the no-op handler plus one round trip: ${verdict(dflt, plusOneTrip(samples[2]))}`);
} finally {
  await env.close();
  rmSync(storeDir, { recursive: true, force: true });
}
