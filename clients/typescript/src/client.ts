// AgentCkptClient: one typed method per endpoint of the sidecar's local HTTP API, plus the
// effect(), gate() and restoration() helpers. HTTP through node:http with a keep-alive agent (or a
// fetch given in the options; transport.ts).
import { AgentCkptError, RecordedFailureError, errorFromReply } from "./errors.js";
import { type Transport, fetchTransport, nodeHttpTransport } from "./transport.js";
import type * as T from "./types.js";

export interface ClientOptions {
  /** The sidecar's address; default $AGENTCKPT_URL or http://127.0.0.1:8787. */
  baseUrl?: string;
  /** Bearer token when the sidecar has CKPT_HTTP_TOKEN_FILE set. */
  token?: string;
  /** Per-request timeout in ms (default 30000); a gate wait adds its waitSeconds. */
  timeoutMs?: number;
  /**
   * A fetch implementation to send requests with. Default: node:http with a keep-alive agent for
   * an http:// address (faster than the platform fetch), the platform fetch for https://.
   */
  fetch?: typeof fetch;
}

/** Options of effect(). */
export interface EffectOptions<R> {
  /** The ledger's effect class (default "write"). */
  effect?: T.Effect;
  /** The tool's name in the ledger (default: the function's name, else "effect"). */
  toolName?: string;
  inputSummary?: string;
  argsSha256?: string;
  /** Result -> outputSummary (at most 500 characters are kept); default JSON.stringify. */
  encode?: (result: R) => string;
  /** Recorded outputSummary -> result on a replay; default JSON.parse. */
  decode?: (outputSummary: string, recorded: T.ReplayedResult) => R;
  /** Result -> externalId recorded with it (e.g. the remote system's id). */
  externalId?: (result: R) => string | undefined;
}

/** What gate() returns: the gate as created and its decision, awaited. */
export interface GateHandle {
  gateId: string;
  gate: T.Gate;
  /** Resolves with the gate once it is approved or rejected (expired gates are rejected). */
  decision: Promise<T.Gate>;
  /** Marks the decision acted on (POST /v1/gates/{id}/consume). */
  consume(): Promise<T.Gate>;
}

/** Every operation of docs/openapi.yaml and the method that calls it (checked by a test). */
export const OPERATIONS = {
  getHealth: { method: "GET", path: "/healthz", clientMethod: "health" },
  getReadiness: { method: "GET", path: "/readyz", clientMethod: "readiness" },
  getMetrics: { method: "GET", path: "/metrics", clientMethod: "metrics" },
  getContext: { method: "GET", path: "/v1/context", clientMethod: "getContext" },
  putContext: { method: "PUT", path: "/v1/context", clientMethod: "putContext" },
  patchContext: { method: "PATCH", path: "/v1/context", clientMethod: "patchContext" },
  appendToolCall: { method: "POST", path: "/v1/tool-calls", clientMethod: "appendToolCall" },
  listToolCalls: { method: "GET", path: "/v1/tool-calls", clientMethod: "listToolCalls" },
  beginToolCall: { method: "POST", path: "/v1/tool-calls/begin", clientMethod: "beginToolCall" },
  endToolCall: { method: "POST", path: "/v1/tool-calls/{callId}/end", clientMethod: "endToolCall" },
  reconcileToolCall: {
    method: "POST",
    path: "/v1/tool-calls/{callId}/reconcile",
    clientMethod: "reconcileToolCall",
  },
  createCheckpoint: { method: "POST", path: "/v1/checkpoints", clientMethod: "createCheckpoint" },
  listCheckpoints: { method: "GET", path: "/v1/checkpoints", clientMethod: "listCheckpoints" },
  getCheckpoint: {
    method: "GET",
    path: "/v1/checkpoints/{checkpointId}",
    clientMethod: "getCheckpoint",
  },
  restore: { method: "POST", path: "/v1/restore", clientMethod: "restore" },
  agentStart: { method: "POST", path: "/v1/agent-start", clientMethod: "agentStart" },
  getRestoration: { method: "GET", path: "/v1/restoration", clientMethod: "getRestoration" },
  requestGate: { method: "POST", path: "/v1/gates", clientMethod: "requestGate" },
  listGates: { method: "GET", path: "/v1/gates", clientMethod: "listGates" },
  getGate: { method: "GET", path: "/v1/gates/{gateId}", clientMethod: "getGate" },
  resolveGate: { method: "POST", path: "/v1/gates/{gateId}/resolve", clientMethod: "resolveGate" },
  consumeGate: { method: "POST", path: "/v1/gates/{gateId}/consume", clientMethod: "consumeGate" },
} as const;

type Method = "GET" | "PUT" | "PATCH" | "POST";

export class AgentCkptClient {
  readonly baseUrl: string;
  private readonly token?: string;
  private readonly timeoutMs: number;
  private readonly send: Transport;

  constructor(options: ClientOptions = {}) {
    const env = typeof process !== "undefined" ? process.env?.AGENTCKPT_URL : undefined;
    this.baseUrl = (options.baseUrl ?? env ?? "http://127.0.0.1:8787").replace(/\/+$/, "");
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? 30000;
    if (options.fetch) {
      this.send = fetchTransport(options.fetch);
    } else if (this.baseUrl.startsWith("http://")) {
      this.send = nodeHttpTransport();
    } else {
      this.send = fetchTransport(globalThis.fetch.bind(globalThis));
    }
  }

  // ---- probes ----

  health(): Promise<T.Health> {
    return this.call("GET", "/healthz");
  }

  /** GET /readyz; a 503 (not ready) is returned, not thrown. */
  async readiness(): Promise<T.Readiness> {
    const { status, body } = await this.raw("GET", "/readyz");
    if (status === 200 || status === 503) return body as T.Readiness;
    throw errorFromReply(status, body, JSON.stringify(body));
  }

  metrics(): Promise<string> {
    return this.call("GET", "/metrics", undefined, { text: true });
  }

  // ---- context ----

  getContext(): Promise<T.Context> {
    return this.call("GET", "/v1/context");
  }

  putContext(context: T.ContextInput): Promise<T.ContextUpdate> {
    return this.call("PUT", "/v1/context", context);
  }

  patchContext(patch: T.ContextPatch): Promise<T.ContextUpdate> {
    return this.call("PATCH", "/v1/context", patch, { contentType: "application/merge-patch+json" });
  }

  appendToolCall(entry: T.ToolCallEntry): Promise<T.ToolCallAppended> {
    return this.call("POST", "/v1/tool-calls", entry);
  }

  // ---- tool-call ledger ----

  /**
   * Records a call before it leaves. Resolves with the 201 (state "started": run it) or the 200
   * (state "completed", replayed: use result); throws OutcomeUnknownError on 409 OUTCOME_UNKNOWN.
   */
  beginToolCall(request: T.BeginRequest): Promise<T.BeginStarted | T.BeginReplayed> {
    return this.call("POST", "/v1/tool-calls/begin", request);
  }

  endToolCall(callId: string, request: T.EndRequest): Promise<T.EndReply> {
    return this.call("POST", `/v1/tool-calls/${enc(callId)}/end`, request);
  }

  reconcileToolCall(callId: string, request: T.ReconcileRequest): Promise<T.ReconcileReply> {
    return this.call("POST", `/v1/tool-calls/${enc(callId)}/reconcile`, request);
  }

  listToolCalls(state?: T.LedgerState): Promise<T.ToolCallList> {
    return this.call("GET", "/v1/tool-calls" + query({ state }));
  }

  // ---- checkpoints ----

  createCheckpoint(request: T.CheckpointCreateRequest = {}): Promise<T.CheckpointCreated> {
    return this.call("POST", "/v1/checkpoints", request);
  }

  listCheckpoints(limit?: number): Promise<T.CheckpointList> {
    return this.call("GET", "/v1/checkpoints" + query({ limit }));
  }

  getCheckpoint(checkpointId: string): Promise<T.StoredCheckpoint> {
    return this.call("GET", `/v1/checkpoints/${enc(checkpointId)}`);
  }

  // ---- restore ----

  /** POST /v1/restore: a preview restore (never changes the working tree). */
  restore(): Promise<T.RestoreResult> {
    return this.call("POST", "/v1/restore");
  }

  /** POST /v1/agent-start: the agent's own start; send the reply's prompt to the model. */
  agentStart(): Promise<T.RestoreResult> {
    return this.call("POST", "/v1/agent-start");
  }

  /** GET /v1/restoration; throws NOT_FOUND (404) when no restore has run. */
  getRestoration(): Promise<T.RestoreResult> {
    return this.call("GET", "/v1/restoration");
  }

  /** The last restore's result, or null when none has run (a cold sidecar). */
  async restoration(): Promise<T.RestoreResult | null> {
    try {
      return await this.getRestoration();
    } catch (e) {
      if (e instanceof AgentCkptError && e.status === 404) return null;
      throw e;
    }
  }

  // ---- gates ----

  requestGate(request: T.GateRequest): Promise<T.GateCreated> {
    return this.call("POST", "/v1/gates", request);
  }

  listGates(state?: T.GateState): Promise<T.GateList> {
    return this.call("GET", "/v1/gates" + query({ state }));
  }

  /** GET /v1/gates/{id}; with waitSeconds (0-300) a pending gate is waited on. */
  getGate(gateId: string, options: { waitSeconds?: number; signal?: AbortSignal } = {}): Promise<T.Gate> {
    const wait = options.waitSeconds;
    return this.call("GET", `/v1/gates/${enc(gateId)}` + query({ waitSeconds: wait }), undefined, {
      timeoutMs: this.timeoutMs + (wait ?? 0) * 1000,
      signal: options.signal,
    });
  }

  resolveGate(gateId: string, request: T.GateResolveRequest): Promise<T.Gate> {
    return this.call("POST", `/v1/gates/${enc(gateId)}/resolve`, request);
  }

  consumeGate(gateId: string): Promise<T.Gate> {
    return this.call("POST", `/v1/gates/${enc(gateId)}/consume`, {});
  }

  // ---- helpers ----

  /**
   * Runs fn at most once per idempotency key: begin; a completed key returns its recorded
   * result (decoded from outputSummary) without running fn, or throws RecordedFailureError if
   * that result is a failure; an open key throws OutcomeUnknownError; otherwise fn runs and its
   * result (or its failure, when it throws) is recorded with end before effect() returns.
   */
  async effect<R>(key: string, fn: () => R | Promise<R>, options: EffectOptions<R> = {}): Promise<R> {
    const begun = await this.beginToolCall({
      toolName: options.toolName ?? (fn.name || "effect"),
      effect: options.effect ?? "write",
      idempotencyKey: key,
      ...(options.argsSha256 ? { argsSha256: options.argsSha256 } : {}),
      ...(options.inputSummary !== undefined ? { inputSummary: options.inputSummary } : {}),
    });
    if (begun.state === "completed") {
      if (!begun.result.success) throw new RecordedFailureError(begun.callId, begun.result);
      const decode = options.decode ?? ((s: string) => JSON.parse(s) as R);
      return decode(begun.result.outputSummary, begun.result);
    }
    const started = Date.now();
    let result: R;
    try {
      result = await fn();
    } catch (e) {
      await this.endToolCall(begun.callId, {
        success: false,
        outputSummary: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
        durationMs: Date.now() - started,
      });
      throw e;
    }
    const encode = options.encode ?? ((r: R) => JSON.stringify(r) ?? "null");
    const externalId = options.externalId?.(result);
    await this.endToolCall(begun.callId, {
      success: true,
      outputSummary: encode(result),
      durationMs: Date.now() - started,
      ...(externalId ? { externalId } : {}),
    });
    return result;
  }

  /**
   * Requests a gate and returns at once; `decision` resolves when a human approves or rejects it
   * (or it expires), waiting on the sidecar in rounds of up to `waitSeconds` (default 60).
   */
  async gate(
    request: T.GateRequest,
    options: { waitSeconds?: number; signal?: AbortSignal } = {},
  ): Promise<GateHandle> {
    const created = await this.requestGate(request);
    const gateId = created.gateId;
    const round = Math.min(Math.max(options.waitSeconds ?? 60, 1), 300);
    const decision = (async () => {
      let gate = created.gate;
      while (gate.state === "pending") {
        options.signal?.throwIfAborted();
        gate = await this.getGate(gateId, { waitSeconds: round, signal: options.signal });
      }
      return gate;
    })();
    // An unobserved rejection (the caller never awaits decision) must not crash the process.
    decision.catch(() => undefined);
    return { gateId, gate: created.gate, decision, consume: () => this.consumeGate(gateId) };
  }

  // ---- transport ----

  private async raw(
    method: Method,
    path: string,
    body?: unknown,
    opts: { contentType?: string; timeoutMs?: number; signal?: AbortSignal; text?: boolean } = {},
  ): Promise<{ status: number; body: unknown; text: string }> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = opts.contentType ?? "application/json";
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
    let res: { status: number; text: string };
    try {
      res = await this.send(this.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      const why = e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);
      throw new AgentCkptError(0, "UNREACHABLE", `${method} ${path}: ${why}`);
    }
    const text = res.text;
    const ok = res.status >= 200 && res.status <= 299;
    if (opts.text && ok) return { status: res.status, body: text, text };
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    return { status: res.status, body: parsed, text };
  }

  private async call<R>(
    method: Method,
    path: string,
    body?: unknown,
    opts: { contentType?: string; timeoutMs?: number; signal?: AbortSignal; text?: boolean } = {},
  ): Promise<R> {
    const reply = await this.raw(method, path, body, opts);
    if (reply.status < 200 || reply.status > 299) {
      throw errorFromReply(reply.status, reply.body, reply.text);
    }
    return reply.body as R;
  }
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

function query(params: Record<string, string | number | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`);
  return parts.length ? "?" + parts.join("&") : "";
}
