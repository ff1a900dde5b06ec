// @agentckpt/client against a real sidecar: every endpoint through its typed method, typed
// errors, effect() replay and failure recording, OUTCOME_UNKNOWN after a SIGKILL of the sidecar
// between begin and end, a gate approved over HTTP while the agent awaits its decision, and
// restoration() before and after a restart.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  AgentCkptClient,
  AgentCkptError,
  OutcomeUnknownError,
  RecordedFailureError,
} from "@agentckpt/client";
import { useSidecar, freePort } from "./harness.mjs";

const fx = useSidecar({ before, after }, "agent-sdk-ts", AgentCkptClient);

const context = (phase, steps = 0) => ({
  activeTask: {
    taskId: "task-ts-1",
    title: "Write the launch post",
    phase,
    progress: 10,
    startedAt: "2026-11-25T10:00:00.000Z",
  },
  contextSummary: {
    systemPromptHash: "",
    gatheringResults: "12 sources read",
    planOutline: ["Outline", "Draft", "Publish"],
    completedSteps: steps,
    draftContent: "",
    toolCallLog: [],
  },
  workspace: null,
});

test("restoration() is null before any restore, probes answer", async () => {
  assert.equal(await fx.client.restoration(), null);
  assert.deepEqual(await fx.client.health(), { status: "ok" });
  const ready = await fx.client.readiness();
  assert.equal(ready.ready, true);
  assert.equal(ready.lease?.state, "held");
  assert.match(await fx.client.metrics(), /# TYPE agentckpt_/);
});

test("context put, patch, get, append; a phase change writes a checkpoint", async () => {
  const put = await fx.client.putContext(context("gathering"));
  assert.equal(put.changed, true);
  assert.equal(put.durable, true);
  assert.equal(put.checkpoint?.trigger, "task_phase_change");
  const patched = await fx.client.patchContext({ activeTask: { phase: "planning", progress: 20 } });
  assert.equal(patched.checkpoint?.trigger, "task_phase_change");
  assert.ok(patched.revision > put.revision);
  const appended = await fx.client.appendToolCall({
    toolName: "search",
    timestamp: "2026-11-25T10:01:00.000Z",
    inputSummary: "nats dlq",
    outputSummary: "12 hits",
    durationMs: 40,
    success: true,
  });
  assert.ok(appended.toolCallLogSize >= 1);
  const now = await fx.client.getContext();
  assert.equal(now.activeTask?.phase, "planning");
  assert.equal(now.contextSummary.toolCallLog.at(-1)?.toolName, "search");
});

test("errors are typed: status, code, field", async () => {
  await assert.rejects(
    fx.client.patchContext({ activeTask: { progress: 101 } }),
    (e) =>
      e instanceof AgentCkptError &&
      e.status === 400 &&
      e.code === "INVALID_ARGUMENT" &&
      e.field === "activeTask.progress",
  );
  await assert.rejects(
    fx.client.getCheckpoint("00000000-0000-4000-8000-000000000000"),
    (e) => e instanceof AgentCkptError && e.status === 404 && e.code === "NOT_FOUND",
  );
  await assert.rejects(
    fx.client.createCheckpoint({ trigger: "manual", force: true }),
    (e) => e instanceof AgentCkptError && e.status === 400 && e.field === "force",
  );
  const nobody = new AgentCkptClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
  await assert.rejects(
    nobody.health(),
    (e) => e instanceof AgentCkptError && e.status === 0 && e.code === "UNREACHABLE",
  );
});

test("transport: keep-alive, timeouts and the caller's signal", async () => {
  const net = await import("node:net");
  const http = await import("node:http");
  // The default transport (node:http, keep-alive agent) sends calls in turn on one connection.
  let accepted = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ status: "ok" }));
    });
  });
  server.on("connection", () => accepted++);
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    const client = new AgentCkptClient({ baseUrl: `http://127.0.0.1:${server.address().port}` });
    for (let i = 0; i < 5; i++) assert.deepEqual(await client.health(), { status: "ok" });
    assert.equal(accepted, 1);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  // A reply cut off mid-body fails the call (UNREACHABLE) instead of leaving it pending.
  const cut = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
    res.write('{"status":');
    setTimeout(() => res.socket.destroy(), 20);
  });
  await new Promise((r) => cut.listen(0, "127.0.0.1", r));
  try {
    const client = new AgentCkptClient({ baseUrl: `http://127.0.0.1:${cut.address().port}`, timeoutMs: 10000 });
    const started = Date.now();
    await assert.rejects(client.health(), (e) => e instanceof AgentCkptError && e.code === "UNREACHABLE");
    assert.ok(Date.now() - started < 5000, "settled by the close, not by the 10 s timeout");
  } finally {
    cut.closeAllConnections();
    await new Promise((r) => cut.close(r));
  }
  // A server that accepts and never answers: the timeout ends the call as UNREACHABLE; the
  // caller's own abort is the caller's error.
  const sockets = [];
  const silent = net.createServer((socket) => sockets.push(socket));
  await new Promise((r) => silent.listen(0, "127.0.0.1", r));
  try {
    const slow = new AgentCkptClient({ baseUrl: `http://127.0.0.1:${silent.address().port}`, timeoutMs: 200 });
    await assert.rejects(
      slow.health(),
      (e) => e instanceof AgentCkptError && e.status === 0 && e.code === "UNREACHABLE" && /timeout/i.test(e.message),
    );
    const controller = new AbortController();
    const pending = new AgentCkptClient({ baseUrl: slow.baseUrl }).getGate("gate-1", { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stopped by the caller")), 50);
    await assert.rejects(pending, (e) => !(e instanceof AgentCkptError));
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  }
});

test("checkpoints: create, list, get", async () => {
  const created = await fx.client.createCheckpoint({ trigger: "pre_compaction" });
  assert.equal(created.trigger, "pre_compaction");
  const list = await fx.client.listCheckpoints(5);
  assert.equal(list.checkpoints[0].checkpointId, created.checkpointId);
  const doc = await fx.client.getCheckpoint(created.checkpointId);
  assert.equal(doc.sequenceNumber, created.sequenceNumber);
  assert.equal(doc.activeTask?.taskId, "task-ts-1");
});

test("effect() runs once per key; a completed key replays its result", async () => {
  let runs = 0;
  const send = async () => {
    runs++;
    return { messageId: "m-77", to: "ops@example.com" };
  };
  const first = await fx.client.effect("email:ops:1", send, { effect: "write", inputSummary: "to ops" });
  const second = await fx.client.effect("email:ops:1", send, { effect: "write" });
  assert.equal(runs, 1);
  assert.deepEqual(second, first);
  const completed = await fx.client.listToolCalls("completed");
  const call = completed.calls.find((c) => c.idempotencyKey === "email:ops:1");
  assert.equal(call?.toolName, "send");
  assert.equal(call?.effect, "write");
  assert.equal(call?.result?.success, true);
  assert.deepEqual(JSON.parse(call?.result?.outputSummary ?? "null"), first);
  // The raw begin shows the replay the helper used.
  const begun = await fx.client.beginToolCall({ toolName: "send", effect: "write", idempotencyKey: "email:ops:1" });
  assert.equal(begun.state, "completed");
});

test("effect() records a failure and rethrows; the key then replays the failure", async () => {
  let runs = 0;
  const failing = async () => {
    runs++;
    throw new Error("smtp 550");
  };
  await assert.rejects(fx.client.effect("email:bad:1", failing), /smtp 550/);
  await assert.rejects(
    fx.client.effect("email:bad:1", failing),
    (e) => e instanceof RecordedFailureError && /smtp 550/.test(e.result.outputSummary),
  );
  assert.equal(runs, 1);
});

test("OUTCOME_UNKNOWN after a SIGKILL of the sidecar between begin and end", async () => {
  let entered;
  const inside = new Promise((r) => (entered = r));
  let release;
  const held = new Promise((_, fail) => (release = fail));
  held.catch(() => undefined);
  let runs = 0;
  const pay = async () => {
    runs++;
    entered();
    return held; // the call is in flight when the sidecar dies
  };
  const interrupted = fx.client.effect("pay:invoice-9", pay, { effect: "write" });
  interrupted.catch(() => undefined);
  await inside;
  const open = await fx.client.listToolCalls("started");
  assert.ok(open.calls.some((c) => c.idempotencyKey === "pay:invoice-9"));
  await fx.sidecar.restart();
  await fx.sidecar.ready();
  await assert.rejects(
    fx.client.effect("pay:invoice-9", pay, { effect: "write" }),
    (e) =>
      e instanceof OutcomeUnknownError &&
      e.status === 409 &&
      e.call.state === "outcome_unknown" &&
      e.call.idempotencyKey === "pay:invoice-9" &&
      e.call.toolName === "pay",
  );
  assert.equal(runs, 1);
  const restored = await fx.client.restoration();
  assert.ok(restored && restored.outcomeUnknownCalls >= 1, JSON.stringify(restored));
  assert.match(restored.prompt, /UNKNOWN outcome/);
  // Verified as not executed: the key is freed and the next effect() runs the call.
  const unknown = (await fx.client.listToolCalls("outcome_unknown")).calls;
  const call = unknown.find((c) => c.idempotencyKey === "pay:invoice-9");
  assert.ok(call);
  const rec = await fx.client.reconcileToolCall(call.callId, { outcome: "not_executed", note: "no charge found" });
  assert.equal(rec.keyFreed, true);
  const paid = await fx.client.effect("pay:invoice-9", async () => "charged", { effect: "write" });
  assert.equal(paid, "charged");
  release(new Error("connection to the old sidecar is gone"));
  await assert.rejects(interrupted);
});

test("gate(): approved over HTTP while the agent awaits the decision", async () => {
  const g = await fx.client.gate(
    { reason: "publish the post", request: { url: "https://example.com/p/1" }, ttlSeconds: 600 },
    { waitSeconds: 30 },
  );
  assert.equal(g.gate.state, "pending");
  let settled = false;
  g.decision.then(() => (settled = true));
  const pending = await fx.client.listGates("pending");
  assert.ok(pending.gates.some((x) => x.gateId === g.gateId));
  assert.equal(settled, false);
  // A human decides over HTTP, with a plain request (not the agent's client).
  const res = await fetch(`${fx.env.url}/v1/gates/${g.gateId}/resolve`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ decision: "approved", by: "alice", response: { note: "go" } }),
  });
  assert.equal(res.status, 200);
  const decided = await g.decision;
  assert.equal(decided.state, "approved");
  assert.equal(decided.decision?.by, "alice");
  assert.deepEqual(decided.decision?.response, { note: "go" });
  const consumed = await g.consume();
  assert.equal(consumed.consumed, true);
  await assert.rejects(
    fx.client.resolveGate(g.gateId, { decision: "rejected", by: "bob" }),
    (e) => e instanceof AgentCkptError && e.status === 409 && e.code === "CONFLICT",
  );
});

test("restore preview and agent-start return the restoration prompt", async () => {
  const preview = await fx.client.restore();
  assert.equal(preview.coldStart, false);
  assert.match(preview.prompt, /task-ts-1|Write the launch post/);
  const start = await fx.client.agentStart();
  assert.equal(typeof start.prompt, "string");
  const again = await fx.client.restoration();
  assert.equal(again?.checkpointId, start.checkpointId);
});
