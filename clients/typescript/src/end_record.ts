// Sends a tool call's end record for the framework integrations (langgraph.ts, mastra.ts), which
// send it in the background: a sidecar that is restarting must not cost the record.
import type { AgentCkptClient } from "./client.js";
import type { EndRequest } from "./types.js";

/** Default for the integrations' endRetryMs: the recovery SLA, 30 s. */
export const kDefaultEndRetryMs = 30000;

/**
 * POST /v1/tool-calls/{callId}/end, tried again with backoff (50 ms doubling to 1 s) while the
 * sidecar cannot be reached or answers 503, until retryMs has passed (0: once). A retry answered
 * 409 ALREADY_COMPLETED means an earlier attempt landed and only its reply was lost (e.g. the
 * sidecar was killed once the record was durable): delivered. Resolves to undefined when the
 * record landed, else to the last error; never rejects.
 */
export async function sendEndRecord(
  client: AgentCkptClient,
  callId: string,
  request: EndRequest,
  retryMs: number = kDefaultEndRetryMs,
): Promise<unknown> {
  const deadline = Date.now() + Math.max(0, retryMs);
  for (let attempt = 0, wait = 50; ; attempt++, wait = Math.min(wait * 2, 1000)) {
    try {
      await client.endToolCall(callId, request);
      return undefined;
    } catch (e) {
      const err = e as { status?: number; code?: string };
      if (attempt > 0 && err.code === "ALREADY_COMPLETED") return undefined;
      const transient = err.status === 0 || err.status === 503;
      if (!transient || Date.now() + wait > deadline) return e;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
