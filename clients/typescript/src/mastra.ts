// Mastra integration: tool hooks for @mastra/core's Agent (`hooks: {beforeToolCall,
// afterToolCall}`, agent-level or per generate/stream call) that run every tool call through the
// sidecar's ledger (docs/sdk.md). Structural types only: no import of @mastra/core.
import { createHash } from "node:crypto";
import type { AgentCkptClient } from "./client.js";
import type { Effect } from "./types.js";
import type { ErrorSink } from "./langgraph.js";
import { sendEndRecord } from "./end_record.js";
import { RecordedFailureError } from "./errors.js";

/** What Mastra passes to beforeToolCall (ToolHookContext). */
export interface MastraToolHookContext {
  toolName: string;
  input: unknown;
  /** The tool call's options: toolCallId, messages, abortSignal, ... */
  context?: { toolCallId?: string; agent?: { toolCallId?: string } } & Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/** What Mastra passes to afterToolCall (ToolAfterHookContext). */
export interface MastraToolAfterHookContext extends MastraToolHookContext {
  output?: unknown;
  error?: unknown;
}

export interface MastraLedgerOptions {
  /** Effect class per tool name; default `defaultEffect` ("write"). */
  effects?: Record<string, Effect>;
  defaultEffect?: Effect;
  /** Tools not to record. */
  skip?: string[];
  /** Result -> outputSummary (default JSON); a replay decodes it with `decode` (default JSON.parse). */
  encode?: (output: unknown) => string;
  decode?: (outputSummary: string) => unknown;
  /** Wait for the end record before the agent moves on (default false: sent in order, flush()). */
  awaitEnd?: boolean;
  /** How long an end record is tried again while the sidecar is unreachable (default 30000 ms). */
  endRetryMs?: number;
  onError?: ErrorSink;
}

export interface MastraLedgerHooks {
  beforeToolCall(ctx: MastraToolHookContext): Promise<void | { proceed: false; output: unknown }>;
  afterToolCall(ctx: MastraToolAfterHookContext): Promise<void>;
  /** Waits until every end record sent so far has been answered. */
  flush(): Promise<void>;
  /** Failures swallowed (also passed to onError). */
  readonly errors: { where: string; error: unknown }[];
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const json = (v: unknown) => {
  try {
    return JSON.stringify(v) ?? "null";
  } catch {
    return String(v);
  }
};

/**
 * Tool hooks that give a Mastra agent's tool calls the ledger's promise: beforeToolCall begins
 * the call (one durable round trip; key "mastra:" + the model's tool call id, else derived from
 * the tool name and the input's SHA-256); a key already completed skips the tool and returns the
 * recorded output (proceed: false), or, if the call failed, throws RecordedFailureError with the
 * recorded result; an open key (outcome unknown after a crash) throws
 * OutcomeUnknownError, so the tool is not run again before someone reconciles it. afterToolCall
 * ends the call with its output or error. A sidecar that cannot be reached never stops the tool:
 * the failure goes to onError.
 */
export function agentCkptToolHooks(client: AgentCkptClient, options: MastraLedgerOptions = {}): MastraLedgerHooks {
  const open = new Map<string, { callId: string; started: number }[]>();
  const errors: { where: string; error: unknown }[] = [];
  let pending: Promise<void> = Promise.resolve();
  const encode = options.encode ?? json;
  const decode = options.decode ?? ((s: string) => JSON.parse(s));
  const fail = (where: string, error: unknown) => {
    errors.push({ where, error });
    try {
      options.onError?.(error, where);
    } catch {
      // never into the agent
    }
  };
  const identity = (ctx: MastraToolHookContext) => {
    const text = json(ctx.input);
    const toolCallId = ctx.context?.toolCallId ?? ctx.context?.agent?.toolCallId;
    return { text, key: toolCallId ? `mastra:${toolCallId}` : undefined, slot: `${ctx.toolName}\n${toolCallId ?? sha256(text)}` };
  };
  return {
    errors,
    async beforeToolCall(ctx) {
      if (options.skip?.includes(ctx.toolName)) return;
      const { text, key, slot } = identity(ctx);
      let begun;
      try {
        begun = await client.beginToolCall({
          toolName: ctx.toolName.slice(0, 128),
          effect: options.effects?.[ctx.toolName] ?? options.defaultEffect ?? "write",
          argsSha256: sha256(text),
          inputSummary: text.slice(0, 200),
          ...(key ? { idempotencyKey: key } : {}),
        });
      } catch (e) {
        if ((e as { code?: string }).code === "OUTCOME_UNKNOWN") throw e;
        fail("beforeToolCall", e);
        return;
      }
      if (begun.state === "completed") {
        if (!begun.result.success) throw new RecordedFailureError(begun.callId, begun.result);
        try {
          return { proceed: false, output: decode(begun.result.outputSummary) };
        } catch {
          return { proceed: false, output: begun.result.outputSummary };
        }
      }
      const list = open.get(slot) ?? [];
      list.push({ callId: begun.callId, started: Date.now() });
      open.set(slot, list);
    },
    async afterToolCall(ctx) {
      const { slot } = identity(ctx);
      const call = open.get(slot)?.shift();
      if (!call) return;
      if (!open.get(slot)?.length) open.delete(slot);
      const failed = ctx.error !== undefined;
      const summary = failed
        ? ctx.error instanceof Error
          ? `${ctx.error.name}: ${ctx.error.message}`
          : String(ctx.error)
        : encode(ctx.output);
      const request = {
        success: !failed,
        outputSummary: summary.slice(0, 500),
        durationMs: Math.max(0, Date.now() - call.started),
      };
      const send = async () => {
        const error = await sendEndRecord(client, call.callId, request, options.endRetryMs);
        if (error !== undefined) fail("afterToolCall", error);
      };
      pending = pending.then(send);
      if (options.awaitEnd) await pending;
    },
    flush: () => pending,
  };
}
