// LangChain.js / LangGraph.js integration: a callback handler that records tool calls in the
// sidecar's ledger, and a checkpointer wrapper that reports the graph's task, phase, plan and
// step count as the sidecar's context (docs/sdk.md). Only types are imported from LangChain, so
// the handler and the wrapper work with whichever copy of the packages the agent has installed.
import { createHash } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Serialized } from "@langchain/core/load/serializable";
import type {
  BaseCheckpointSaver,
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
} from "@langchain/langgraph-checkpoint";
import type { AgentCkptClient } from "./client.js";
import { sendEndRecord } from "./end_record.js";
import type { ContextPatch, ContextSummary, Effect, Phase } from "./types.js";

/** Where an integration reports a failure it swallowed (it never throws into the agent). */
export type ErrorSink = (error: unknown, where: string) => void;

export interface LedgerCallbackOptions {
  /** Effect class per tool name; default `defaultEffect`. */
  effects?: Record<string, Effect>;
  /** Default "write": every call is recorded before it runs. */
  defaultEffect?: Effect;
  /** Tools not to record (e.g. pure lookups). */
  skip?: string[];
  /**
   * Wait for the end record before the agent moves on (two durable round trips per call).
   * Default false: the end is sent in the background, in order; flush() waits for it. A crash
   * before it is durable leaves the call outcome_unknown, never done twice silently.
   */
  awaitEnd?: boolean;
  /**
   * How long an end record is tried again while the sidecar cannot be reached or answers 503
   * (e.g. it is restarting), default 30000 ms; 0 tries once. An end whose earlier attempt did
   * land (its reply was lost) is answered 409 ALREADY_COMPLETED on the next one, which counts
   * as delivered.
   */
  endRetryMs?: number;
  onError?: ErrorSink;
}

interface OpenCall {
  callId: string;
  started: number;
}

/** A call the handler found already recorded when it began (it cannot stop the tool). */
export interface LedgerConflict {
  toolName: string;
  idempotencyKey?: string;
  state: "completed" | "outcome_unknown" | "started";
  callId: string;
}

const cut = (s: string, n: number) => (s.length > n ? s.slice(0, n) : s);
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  const content = (output as { content?: unknown } | null)?.content;
  if (typeof content === "string") return content;
  try {
    return JSON.stringify(content ?? output) ?? String(output);
  } catch {
    return String(output);
  }
}

/**
 * A LangChain callback handler: tool start becomes ledger begin (awaited, one durable round
 * trip, before the tool runs), tool end and tool error become ledger end. Pass it in
 * `callbacks` of invoke/stream. The key is "lc:" + the model's tool call id when there is one
 * (stable across a resume from a LangGraph checkpoint), else derived by the sidecar from the
 * tool name, the SHA-256 of the input and the active task. Every failure goes to onError.
 */
export class AgentCkptLedgerCallback {
  readonly name = "AgentCkptLedgerCallback";
  readonly awaitHandlers = true;
  readonly raiseError = false;
  readonly ignoreLLM = true;
  readonly ignoreChain = true;
  readonly ignoreAgent = false;
  readonly ignoreRetriever = true;
  readonly ignoreCustomEvent = true;
  readonly ignoreRetry = true;
  /** Calls whose key was already completed or open at begin. */
  readonly conflicts: LedgerConflict[] = [];
  /** Failures swallowed (also passed to onError). */
  readonly errors: { where: string; error: unknown }[] = [];

  private readonly open = new Map<string, OpenCall>();
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: AgentCkptClient,
    private readonly options: LedgerCallbackOptions = {},
  ) {}

  copy(): this {
    return this;
  }

  private fail(where: string, error: unknown): void {
    this.errors.push({ where, error });
    try {
      this.options.onError?.(error, where);
    } catch {
      // an error sink that throws must not reach the agent either
    }
  }

  async handleToolStart(
    tool: Serialized,
    input: string,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): Promise<void> {
    try {
      const serialized = tool as { name?: string; id?: string[] } | undefined;
      const toolName = cut(runName || serialized?.name || serialized?.id?.at(-1) || "tool", 128);
      if (this.options.skip?.includes(toolName)) return;
      const key = toolCallId ? `lc:${toolCallId}` : undefined;
      const text = typeof input === "string" ? input : JSON.stringify(input);
      let begun;
      try {
        begun = await this.client.beginToolCall({
          toolName,
          effect: this.options.effects?.[toolName] ?? this.options.defaultEffect ?? "write",
          argsSha256: sha256(text),
          inputSummary: cut(text, 200),
          ...(key ? { idempotencyKey: key } : {}),
        });
      } catch (e) {
        const call = (e as { call?: { callId: string; state: "started" | "outcome_unknown" } }).call;
        if (call) {
          this.conflicts.push({ toolName, idempotencyKey: key, state: call.state, callId: call.callId });
        }
        throw e;
      }
      if (begun.state === "completed") {
        this.conflicts.push({ toolName, idempotencyKey: key, state: "completed", callId: begun.callId });
        return;
      }
      this.open.set(runId, { callId: begun.callId, started: Date.now() });
    } catch (e) {
      this.fail("handleToolStart", e);
    }
  }

  handleToolEnd(output: unknown, runId: string): Promise<void> {
    return this.finish(runId, true, outputText(output));
  }

  handleToolError(err: unknown, runId: string): Promise<void> {
    const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return this.finish(runId, false, text);
  }

  /** Waits until every end record sent so far has been answered. */
  flush(): Promise<void> {
    return this.pending;
  }

  private finish(runId: string, success: boolean, outputSummary: string): Promise<void> {
    const call = this.open.get(runId);
    if (!call) return Promise.resolve();
    this.open.delete(runId);
    const request = {
      success,
      outputSummary: cut(outputSummary, 500),
      durationMs: Math.max(0, Date.now() - call.started),
    };
    const send = async () => {
      const error = await sendEndRecord(this.client, call.callId, request, this.options.endRetryMs);
      if (error !== undefined) this.fail(success ? "handleToolEnd" : "handleToolError", error);
    };
    // Without awaitEnd the end record is sent on a later turn of the event loop, so
    // that the tool's result reaches the agent first (building a request and handing it to the
    // HTTP stack costs about 0.15 ms, which would otherwise lengthen every tool call). The ends
    // still go out one after another, in order.
    const turn = this.options.awaitEnd ? Promise.resolve() : new Promise<void>((r) => setImmediate(r));
    this.pending = this.pending.then(() => turn).then(send);
    return this.options.awaitEnd ? this.pending : Promise.resolve();
  }
}

/** What the checkpointer wrapper sees of one LangGraph checkpoint. */
export interface GraphStep {
  threadId: string;
  /** The nodes the checkpoint schedules next (from its branch:to:* channels). */
  next: string[];
  values: Record<string, unknown>;
  metadata: CheckpointMetadata;
  /** metadata.step, at least 0. */
  step: number;
}

export interface CheckpointerContextOptions {
  /** Task title (default "LangGraph thread <id>"). */
  title?: string | ((s: GraphStep) => string);
  /** Task id (default the thread id). */
  taskId?: (s: GraphStep) => string;
  /** Phase per next node name; unmapped nodes keep the last phase (initially "planning"). */
  phases?: Record<string, Phase>;
  /** Or a function of the step (wins over phases). */
  phase?: (s: GraphStep) => Phase | undefined;
  /** The plan outline, e.g. (s) => s.values.plan as string[]. */
  plan?: (s: GraphStep) => string[] | undefined;
  /** Progress 0-100. */
  progress?: (s: GraphStep) => number | undefined;
  /** More context summary members (gatheringResults, draftContent). */
  summary?: (s: GraphStep) => Partial<Pick<ContextSummary, "gatheringResults" | "draftContent">>;
  onError?: ErrorSink;
}

// The nodes a checkpoint schedules next: those whose trigger channel (branch:to:NODE) holds a
// value (a node consumes its trigger when it runs).
function nextNodes(checkpoint: Checkpoint): string[] {
  return Object.keys(checkpoint.channel_values ?? {})
    .filter((channel) => channel.startsWith("branch:to:"))
    .map((channel) => channel.slice("branch:to:".length));
}

/**
 * Wraps any BaseCheckpointSaver: every method and property is the inner saver's; put() also
 * PATCHes the sidecar's context with the task (thread), phase, plan and step count before it
 * returns, so a phase change writes a task_phase_change checkpoint. Subgraph checkpoints
 * (non-empty checkpoint_ns) are not reported. A failed PATCH goes to onError; the inner put's
 * result stands.
 */
export function withAgentCkpt<S extends BaseCheckpointSaver<any>>(
  inner: S,
  client: AgentCkptClient,
  options: CheckpointerContextOptions = {},
): S {
  const started = new Map<string, { startedAt: string; phase: Phase; last: string }>();
  const report = async (config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata) => {
    const conf = (config.configurable ?? {}) as Record<string, unknown>;
    if (conf.checkpoint_ns) return;
    const threadId = String(conf.thread_id ?? "");
    if (!threadId) return;
    const step: GraphStep = {
      threadId,
      next: nextNodes(checkpoint),
      values: (checkpoint.channel_values ?? {}) as Record<string, unknown>,
      metadata,
      step: Math.max(0, Math.trunc(Number(metadata?.step) || 0)),
    };
    const seen = started.get(threadId) ?? {
      startedAt: new Date().toISOString(),
      phase: "planning" as Phase,
      last: "",
    };
    const mapped = options.phase?.(step) ?? step.next.map((n) => options.phases?.[n]).find(Boolean);
    const phase = mapped ?? seen.phase;
    const title = typeof options.title === "function" ? options.title(step) : options.title;
    const plan = options.plan?.(step);
    const progress = options.progress?.(step);
    const patch: ContextPatch = {
      activeTask: {
        taskId: cut(options.taskId?.(step) ?? threadId, 512),
        title: cut(title ?? `LangGraph thread ${threadId}`, 512),
        phase,
        progress: Math.min(100, Math.max(0, Math.round(progress ?? 0))),
        startedAt: seen.startedAt,
      },
      contextSummary: {
        completedSteps: step.step,
        ...(Array.isArray(plan) ? { planOutline: plan.slice(0, 100).map((p) => cut(String(p), 500)) } : {}),
        ...(options.summary?.(step) ?? {}),
      },
    };
    const body = JSON.stringify(patch);
    if (body === seen.last) return;
    await client.patchContext(patch);
    started.set(threadId, { startedAt: seen.startedAt, phase, last: body });
  };
  const put = async (
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ) => {
    const saved = await inner.put(config, checkpoint, metadata, newVersions);
    try {
      await report(config, checkpoint, metadata);
    } catch (e) {
      try {
        options.onError?.(e, "put");
      } catch {
        // never into the graph
      }
    }
    return saved;
  };
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === "put") return put;
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
