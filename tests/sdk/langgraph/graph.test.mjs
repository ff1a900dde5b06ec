// A real LangGraph.js StateGraph with a ToolNode, driven by a scripted chat model (no network),
// checkpointed by withAgentCkpt(SqliteSaver) and observed by AgentCkptLedgerCallback against a
// real sidecar: tool calls land in the ledger, the graph's task, plan and phases in the context;
// SIGKILL of the sidecar while a tool runs, then a restart: the restoration names the task and
// the plan, and the interrupted call is outcome_unknown.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { z } from "zod";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { tool } from "@langchain/core/tools";
import { StateGraph, Annotation, MessagesAnnotation, START, END } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { AgentCkptClient } from "@agentckpt/client";
import { AgentCkptLedgerCallback, withAgentCkpt } from "@agentckpt/client/langgraph";
import { useSidecar, freePort } from "../harness.mjs";

// Answers with the next scripted message on every call; records what it was asked.
class ScriptedChatModel extends BaseChatModel {
  constructor(script) {
    super({});
    this.script = script;
    this.calls = 0;
  }
  _llmType() {
    return "scripted";
  }
  async _generate() {
    const message = this.script[Math.min(this.calls++, this.script.length - 1)];
    return { generations: [{ message, text: typeof message.content === "string" ? message.content : "" }] };
  }
}

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  plan: Annotation({ reducer: (_, b) => b, default: () => [] }),
});

const kPlan = ["Draft the release notes", "Write them to notes.md", "Publish to the blog"];

// The agent: planner -> agent <-> tools.
function buildGraph({ model, tools, checkpointer }) {
  const g = new StateGraph(State)
    .addNode("planner", async () => ({ plan: kPlan }))
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "planner")
    .addEdge("planner", "agent")
    .addConditionalEdges("agent", (s) => (s.messages.at(-1)?.tool_calls?.length ? "tools" : END))
    .addEdge("tools", "agent");
  return g.compile({ checkpointer });
}

const script = (prefix) => [
  new AIMessage({
    content: "",
    tool_calls: [{ id: `${prefix}-1`, name: "write_file", args: { path: "notes.md", text: "v1.2 notes" } }],
  }),
  new AIMessage({
    content: "",
    tool_calls: [{ id: `${prefix}-2`, name: "publish", args: { url: "https://blog.example/v1-2" } }],
  }),
  new AIMessage({ content: "Published." }),
];

// The graph's two tools; `publish` and `write` may be replaced to observe or hold a call.
function makeTools({ write = async ({ path, text }) => `wrote ${text.length} bytes to ${path}`, publish = async ({ url }) => `published at ${url}` } = {}) {
  return [
    tool(write, {
      name: "write_file",
      description: "Writes a file",
      schema: z.object({ path: z.string(), text: z.string() }),
    }),
    tool(publish, {
      name: "publish",
      description: "Publishes a post",
      schema: z.object({ url: z.string() }),
    }),
  ];
}

const fx = useSidecar({ before, after }, "agent-sdk-graph", AgentCkptClient);

function checkpointerFor(file) {
  return withAgentCkpt(SqliteSaver.fromConnString(join(fx.env.dir, file)), fx.client, {
    title: "Publish the v1.2 release notes",
    plan: (s) => s.values.plan,
    phases: { planner: "planning", agent: "executing", tools: "executing" },
    phase: (s) => (s.next.length === 0 && s.step > 0 ? "reviewing" : undefined), // the graph ended
    progress: (s) => Math.min(100, s.step * 10),
  });
}

test("tool calls of a StateGraph + ToolNode land in the ledger; task, plan and phases in the context", async () => {
  const written = [];
  const tools = makeTools({ write: async ({ path, text }) => (written.push(path), `wrote ${text.length} bytes to ${path}`) });
  const handler = new AgentCkptLedgerCallback(fx.client);
  const graph = buildGraph({ model: new ScriptedChatModel(script("run1")), tools, checkpointer: checkpointerFor("run1.db") });
  const out = await graph.invoke(
    { messages: [new HumanMessage("publish the notes")] },
    { configurable: { thread_id: "release-1-2" }, callbacks: [handler] },
  );
  await handler.flush();
  assert.equal(out.messages.at(-1).content, "Published.");
  assert.deepEqual(written, ["notes.md"]);
  assert.deepEqual(handler.errors, []);
  const completed = (await fx.client.listToolCalls("completed")).calls;
  const w = completed.find((c) => c.idempotencyKey === "lc:run1-1");
  const p = completed.find((c) => c.idempotencyKey === "lc:run1-2");
  assert.equal(w?.toolName, "write_file");
  assert.equal(w?.result?.success, true);
  assert.match(w?.result?.outputSummary ?? "", /wrote 10 bytes to notes.md/);
  assert.equal(p?.toolName, "publish");
  assert.match(w?.inputSummary ?? "", /notes\.md/);
  const ctx = await fx.client.getContext();
  assert.equal(ctx.activeTask?.taskId, "release-1-2");
  assert.equal(ctx.activeTask?.title, "Publish the v1.2 release notes");
  assert.deepEqual(ctx.contextSummary.planOutline, kPlan);
  assert.ok(ctx.contextSummary.completedSteps >= 5, JSON.stringify(ctx.contextSummary));
  assert.ok(ctx.contextSummary.toolCallLog.some((e) => e.toolName === "publish"));
  assert.equal(ctx.activeTask?.phase, "reviewing");
  // One task_phase_change checkpoint each: the new task (planning), executing, reviewing.
  const triggers = (await fx.client.listCheckpoints(50)).checkpoints.map((c) => c.triggerReason);
  assert.equal(triggers.filter((t) => t === "task_phase_change").length, 3, triggers.join());
});

test("the ledger callback puts one durable round trip on a tool call's path: the begin, answered before the tool runs", async () => {
  // Every request the client sends, through the platform fetch, with when its reply came back.
  const log = [];
  const countingFetch = async (url, init) => {
    const entry = { path: new URL(url).pathname, answered: false };
    log.push(entry);
    const res = await fetch(url, init);
    entry.answered = true;
    return res;
  };
  const client = new AgentCkptClient({ baseUrl: fx.env.url, fetch: countingFetch });
  let atToolStart;
  const [write] = makeTools({
    write: async () => ((atToolStart = log.map((e) => ({ ...e }))), "ok"),
  });
  const paths = (entries) => entries.map((e) => e.path.replace(/\/tool-calls\/[^/]+\/end$/, "/tool-calls/ID/end"));
  for (const awaitEnd of [false, true]) {
    log.length = 0;
    const handler = new AgentCkptLedgerCallback(client, { awaitEnd });
    const id = `one-trip-${awaitEnd}`;
    await write.invoke(
      { type: "tool_call", id, name: "write_file", args: { path: "a.md", text: "x" } },
      { callbacks: [handler] },
    );
    const atReturn = log.map((e) => ({ ...e }));
    await handler.flush();
    assert.deepEqual(handler.errors, []);
    // Before the tool body ran: exactly the begin, and its durable reply had arrived.
    assert.deepEqual(paths(atToolStart), ["/v1/tool-calls/begin"], `awaitEnd ${awaitEnd}`);
    assert.equal(atToolStart[0].answered, true);
    if (awaitEnd) {
      // awaitEnd: the end is a second awaited round trip, by choice.
      assert.deepEqual(paths(atReturn), ["/v1/tool-calls/begin", "/v1/tool-calls/ID/end"]);
      assert.ok(atReturn.every((e) => e.answered));
    } else {
      // The default: when the tool call returns to the agent, nothing but the begin was sent;
      // the end goes out afterwards, in the background.
      assert.deepEqual(paths(atReturn), ["/v1/tool-calls/begin"]);
    }
    assert.deepEqual(paths(log), ["/v1/tool-calls/begin", "/v1/tool-calls/ID/end"]);
    const done = (await fx.client.listToolCalls("completed")).calls.find((c) => c.idempotencyKey === `lc:${id}`);
    assert.equal(done?.result?.success, true, `awaitEnd ${awaitEnd}: the call is completed in the ledger`);
  }
});

test("SIGKILL of the sidecar while a tool runs: restoration names task and plan, the call is outcome_unknown", async () => {
  let entered;
  const inside = new Promise((r) => (entered = r));
  let release;
  const held = new Promise((ok) => (release = ok));
  const tools = makeTools({ publish: async ({ url }) => (entered(), await held, `published at ${url}`) });
  const handler = new AgentCkptLedgerCallback(fx.client);
  const graph = buildGraph({ model: new ScriptedChatModel(script("run2")), tools, checkpointer: checkpointerFor("run2.db") });
  const run = graph.invoke(
    { messages: [new HumanMessage("publish the notes")] },
    { configurable: { thread_id: "release-1-3" }, callbacks: [handler] },
  );
  run.catch(() => undefined);
  await inside; // publish has begun (durably) and is in flight
  await handler.flush(); // write_file's end record, sent in the background, has landed
  // LangGraph's default durability ("async") saves a step's checkpoint, and so sends its PATCH,
  // while the next step runs: the plan is acknowledged once the sidecar's context has it. Only
  // what was acknowledged before the kill is promised back.
  for (let i = 0; ; i++) {
    const ctx = await fx.client.getContext();
    if (ctx.activeTask?.taskId === "release-1-3" && JSON.stringify(ctx.contextSummary.planOutline) === JSON.stringify(kPlan)) break;
    assert.ok(i < 600, `the plan never reached the sidecar: ${JSON.stringify(ctx)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await fx.sidecar.restart();
  await fx.sidecar.ready();
  const restored = await fx.client.restoration();
  assert.ok(restored, "a restore ran at start");
  assert.match(restored.prompt, /Publish the v1\.2 release notes/);
  for (const item of kPlan) assert.ok(restored.prompt.includes(item), `plan item "${item}" in:\n${restored.prompt}`);
  assert.ok(restored.outcomeUnknownCalls >= 1);
  const unknown = (await fx.client.listToolCalls("outcome_unknown")).calls;
  const call = unknown.find((c) => c.idempotencyKey === "lc:run2-2");
  assert.equal(call?.toolName, "publish");
  assert.ok(!unknown.some((c) => c.idempotencyKey === "lc:run2-1"), "write_file completed before the kill");
  // Resuming the tool: the handler ends the call on the new sidecar; the graph finishes.
  release();
  const out = await run;
  await handler.flush();
  assert.equal(out.messages.at(-1).content, "Published.");
  assert.deepEqual(handler.errors, []);
  const after = (await fx.client.listToolCalls("completed")).calls.find((c) => c.idempotencyKey === "lc:run2-2");
  assert.equal(after?.result?.success, true);
});

test("an end record whose reply was lost is sent again and lands once", async () => {
  // The first end request reaches the sidecar and is recorded, then its reply is lost (as when
  // the sidecar is killed right after the record is durable); a second one is refused with a
  // connection error. The handler tries again: 409 ALREADY_COMPLETED on a retry counts as landed.
  let endsSeen = 0;
  const lossy = async (url, init) => {
    if (!String(url).endsWith("/end")) return fetch(url, init);
    endsSeen++;
    if (endsSeen === 1) {
      await (await fetch(url, init)).text();
      throw new TypeError("fetch failed", { cause: new Error("other side closed") });
    }
    if (endsSeen === 2) throw new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED") });
    return fetch(url, init);
  };
  const client = new AgentCkptClient({ baseUrl: fx.env.url, fetch: lossy });
  const handler = new AgentCkptLedgerCallback(client);
  const graph = buildGraph({ model: new ScriptedChatModel(script("run4")), tools: makeTools(), checkpointer: undefined });
  const out = await graph.invoke({ messages: [new HumanMessage("go")] }, { callbacks: [handler] });
  await handler.flush();
  assert.equal(out.messages.at(-1).content, "Published.");
  assert.deepEqual(handler.errors, []);
  assert.ok(endsSeen >= 4, `end requests sent: ${endsSeen}`); // 3 for write_file, 1 for publish
  const done = (await fx.client.listToolCalls("completed")).calls;
  for (const key of ["lc:run4-1", "lc:run4-2"]) {
    const call = done.filter((c) => c.idempotencyKey === key);
    assert.equal(call.length, 1, key);
    assert.equal(call[0].result?.success, true, key);
  }
  // With endRetryMs 0 each of the two failures is reported.
  endsSeen = 0;
  const once = new AgentCkptLedgerCallback(client, { endRetryMs: 0 });
  const graph2 = buildGraph({ model: new ScriptedChatModel(script("run5")), tools: makeTools(), checkpointer: undefined });
  await graph2.invoke({ messages: [new HumanMessage("go")] }, { callbacks: [once] });
  await once.flush();
  assert.deepEqual(once.errors.map((e) => [e.where, e.error.code]), [
    ["handleToolEnd", "UNREACHABLE"],
    ["handleToolEnd", "UNREACHABLE"],
  ]);
});

test("the handler never throws into the agent when the sidecar is unreachable", async () => {
  const dead = new AgentCkptClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, timeoutMs: 2000 });
  const seen = [];
  const handler = new AgentCkptLedgerCallback(dead, { onError: (e, where) => seen.push(where) });
  const tools = makeTools();
  const graph = buildGraph({ model: new ScriptedChatModel(script("run3")), tools, checkpointer: undefined });
  const out = await graph.invoke({ messages: [new HumanMessage("go")] }, { callbacks: [handler] });
  assert.equal(out.messages.at(-1).content, "Published.");
  assert.deepEqual(seen, ["handleToolStart", "handleToolStart"]);
  assert.equal(handler.errors[0].error.code, "UNREACHABLE");
});
