// @agentckpt/client: the TypeScript client of the agentckpt sidecar (docs/sdk.md).
export { AgentCkptClient, OPERATIONS } from "./client.js";
export type { ClientOptions, EffectOptions, GateHandle } from "./client.js";
export { AgentCkptError, OutcomeUnknownError, RecordedFailureError } from "./errors.js";
export type * from "./types.js";
