// Typed errors: every non-2xx answer of the sidecar becomes an AgentCkptError carrying the HTTP
// status and the body's error.code and error.field (docs/http-api.md "Errors").
import type { LedgerResult, OutcomeUnknownCall, ReplayedResult } from "./types.js";

export class AgentCkptError extends Error {
  /** HTTP status; 0 when the sidecar could not be reached. */
  readonly status: number;
  /** error.code of the body (INVALID_ARGUMENT, NOT_FOUND, ...); UNREACHABLE for status 0. */
  readonly code: string;
  /** error.field: the offending field's path, "" for the whole request. */
  readonly field: string;
  /** The parsed reply body (null when it was not JSON). */
  readonly body: unknown;

  constructor(status: number, code: string, message: string, field = "", body: unknown = null) {
    super(message);
    this.name = "AgentCkptError";
    this.status = status;
    this.code = code;
    this.field = field;
    this.body = body;
  }
}

/**
 * 409 OUTCOME_UNKNOWN of begin: the key was begun and never ended. It may or may not have taken
 * effect: verify, then reconcile (client.reconcileToolCall(err.call.callId, ...)).
 */
export class OutcomeUnknownError extends AgentCkptError {
  readonly call: OutcomeUnknownCall;

  constructor(message: string, body: OutcomeUnknownCall & { error: unknown }) {
    super(409, "OUTCOME_UNKNOWN", message, "", body);
    this.name = "OutcomeUnknownError";
    const { error: _error, ...call } = body;
    this.call = call as OutcomeUnknownCall;
  }
}

/** effect(): the key's recorded result is a failure (the call ran before and failed). */
export class RecordedFailureError extends Error {
  readonly callId: string;
  readonly result: ReplayedResult | LedgerResult;

  constructor(callId: string, result: ReplayedResult | LedgerResult) {
    super(`recorded failure of call ${callId}: ${result.outputSummary}`);
    this.name = "RecordedFailureError";
    this.callId = callId;
    this.result = result;
  }
}

/** Builds the typed error for a non-2xx reply. */
export function errorFromReply(status: number, body: unknown, text: string): AgentCkptError {
  const err = (body as { error?: { code?: unknown; message?: unknown; field?: unknown } } | null)
    ?.error;
  const code = typeof err?.code === "string" ? err.code : `HTTP_${status}`;
  const message = typeof err?.message === "string" ? err.message : text.slice(0, 200);
  const field = typeof err?.field === "string" ? err.field : "";
  if (status === 409 && code === "OUTCOME_UNKNOWN" && body && typeof body === "object") {
    return new OutcomeUnknownError(message, body as OutcomeUnknownCall & { error: unknown });
  }
  return new AgentCkptError(status, code, message, field, body);
}
