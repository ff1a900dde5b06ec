// The Mastra tool hooks of @agentckpt/client with the real @mastra/core Agent, driven by a
// scripted language model (no network), against a real sidecar: a tool call is recorded in the
// ledger; the same tool call id again is answered from the ledger without running the tool; a
// call recorded as failed is not run again and throws RecordedFailureError; a call begun before a
// SIGKILL of the sidecar is outcome_unknown after the restart and the tool is not run again.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { AgentCkptClient, RecordedFailureError } from "@agentckpt/client";
import { agentCkptToolHooks } from "@agentckpt/client/mastra";
import { useSidecar } from "../harness.mjs";

const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };

// A LanguageModelV2 that answers each call with the next scripted step: a tool call or a text.
function scriptedModel(steps) {
  let i = 0;
  const parts = (step) =>
    step.tool
      ? [
          { type: "stream-start", warnings: [] },
          { type: "tool-call", toolCallId: step.id, toolName: step.tool, input: JSON.stringify(step.args) },
          { type: "finish", finishReason: "tool-calls", usage },
        ]
      : [
          { type: "stream-start", warnings: [] },
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: step.text },
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: "stop", usage },
        ];
  return {
    specificationVersion: "v2",
    provider: "scripted",
    modelId: "scripted-1",
    supportedUrls: {},
    async doGenerate() {
      const step = steps[Math.min(i++, steps.length - 1)];
      return {
        content: step.tool
          ? [{ type: "tool-call", toolCallId: step.id, toolName: step.tool, input: JSON.stringify(step.args) }]
          : [{ type: "text", text: step.text }],
        finishReason: step.tool ? "tool-calls" : "stop",
        usage,
        warnings: [],
      };
    },
    async doStream() {
      const step = steps[Math.min(i++, steps.length - 1)];
      const list = parts(step);
      return {
        stream: new ReadableStream({
          start(c) {
            for (const p of list) c.enqueue(p);
            c.close();
          },
        }),
      };
    },
  };
}

const sent = [];
const sendEmail = createTool({
  id: "sendEmail",
  description: "Sends an email",
  inputSchema: z.object({ to: z.string(), subject: z.string() }),
  execute: async (input) => {
    const args = input?.context ?? input;
    sent.push(args.to);
    return { messageId: `msg-${sent.length}`, to: args.to };
  },
});

function agentWith(steps, hooks) {
  return new Agent({
    id: "mailer",
    name: "mailer",
    instructions: "Send the emails you are asked to send.",
    model: scriptedModel(steps),
    tools: { sendEmail },
    hooks,
  });
}

const fx = useSidecar({ before, after }, "agent-sdk-mastra", AgentCkptClient);

const call = (id, to) => ({ id, tool: "sendEmail", args: { to, subject: "Launch" } });

test("a tool call is recorded; the same tool call id again is answered from the ledger", async () => {
  const hooks = agentCkptToolHooks(fx.client);
  const first = await agentWith([call("m-1", "ops@example.com"), { text: "sent" }], hooks).generate("send it", { maxSteps: 3 });
  await hooks.flush();
  assert.deepEqual(hooks.errors, []);
  assert.equal(first.text, "sent");
  assert.deepEqual(sent, ["ops@example.com"]);
  const done = (await fx.client.listToolCalls("completed")).calls.find((c) => c.idempotencyKey === "mastra:m-1");
  assert.equal(done?.toolName, "sendEmail");
  assert.equal(done?.result?.success, true);
  assert.deepEqual(JSON.parse(done?.result?.outputSummary ?? "null"), { messageId: "msg-1", to: "ops@example.com" });

  const again = await agentWith([call("m-1", "ops@example.com"), { text: "sent again" }], hooks).generate("send it", { maxSteps: 3 });
  assert.equal(again.text, "sent again");
  assert.deepEqual(sent, ["ops@example.com"], "the tool did not run a second time");
  const results = again.toolResults ?? again.steps?.flatMap((s) => s.toolResults ?? []) ?? [];
  const out = results.map((r) => r.payload?.result ?? r.result ?? r.output).find(Boolean);
  assert.deepEqual(out, { messageId: "msg-1", to: "ops@example.com" });
});

test("a call begun before a SIGKILL of the sidecar is outcome_unknown and not run again", async () => {
  const begun = await fx.client.beginToolCall({ toolName: "sendEmail", effect: "write", idempotencyKey: "mastra:m-2" });
  assert.equal(begun.state, "started");
  await fx.sidecar.restart();
  await fx.sidecar.ready();
  const hooks = agentCkptToolHooks(fx.client);
  const before = sent.length;
  await agentWith([call("m-2", "board@example.com"), { text: "could not confirm" }], hooks)
    .generate("send it", { maxSteps: 3 })
    .catch(() => undefined);
  assert.equal(sent.length, before, "the tool was not run again");
  const unknown = (await fx.client.listToolCalls("outcome_unknown")).calls;
  assert.ok(unknown.some((c) => c.idempotencyKey === "mastra:m-2" && c.callId === begun.callId));
});

test("a call recorded as failed is not run again: the hook throws RecordedFailureError", async () => {
  const begun = await fx.client.beginToolCall({ toolName: "sendEmail", effect: "write", idempotencyKey: "mastra:m-3" });
  assert.equal(begun.state, "started");
  await fx.client.endToolCall(begun.callId, { success: false, outputSummary: "mailbox full" });
  const hooks = agentCkptToolHooks(fx.client);
  await assert.rejects(
    hooks.beforeToolCall({ toolName: "sendEmail", input: { to: "x@example.com", subject: "Launch" }, context: { toolCallId: "m-3" } }),
    (e) => {
      assert.ok(e instanceof RecordedFailureError, `not a RecordedFailureError: ${e}`);
      assert.equal(e.callId, begun.callId);
      assert.equal(e.result.success, false);
      assert.equal(e.result.outputSummary, "mailbox full");
      return true;
    },
  );
  const before = sent.length;
  await agentWith([call("m-3", "x@example.com"), { text: "not sent" }], hooks)
    .generate("send it", { maxSteps: 3 })
    .catch(() => undefined);
  assert.equal(sent.length, before, "the tool was not run again");
  assert.deepEqual(hooks.errors, []);
});
