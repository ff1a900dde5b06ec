// Request and reply bodies of the sidecar's local HTTP API (docs/http-api.md, docs/openapi.yaml).
// tests/sdk/openapi_types.test.mjs checks each interface named there against the document.

export type Phase = "gathering" | "planning" | "executing" | "reviewing";
export type Effect = "pure" | "read" | "idempotent" | "write";
export type TriggerReason =
  | "periodic"
  | "task_phase_change"
  | "pre_compaction"
  | "pre_shutdown"
  | "manual";

export interface ActiveTask {
  taskId: string;
  title: string;
  phase: Phase;
  progress: number;
  startedAt: string;
}

export interface ToolCallEntry {
  toolName: string;
  timestamp: string;
  inputSummary: string;
  outputSummary: string;
  durationMs: number;
  success: boolean;
}

export interface ContextSummary {
  systemPromptHash: string;
  gatheringResults: string;
  planOutline: string[];
  completedSteps: number;
  draftContent: string;
  toolCallLog: ToolCallEntry[];
}

export interface Workspace {
  modifiedFiles: string[];
  uncommittedChanges: boolean;
  lastCommitHash: string;
  branchName: string;
}

/** GET /v1/context. */
export interface Context {
  activeTask: ActiveTask | null;
  contextSummary: ContextSummary;
  workspace: Workspace | null;
}

/** PUT /v1/context. */
export interface ContextInput {
  activeTask?: ActiveTask | null;
  contextSummary: ContextSummary;
  workspace?: Workspace | null;
}

/** PATCH /v1/context: an RFC 7386 merge patch (null removes a member). */
export interface ContextPatch {
  activeTask?: Partial<ActiveTask> | null;
  contextSummary?: Partial<ContextSummary>;
  workspace?: Partial<Workspace> | null;
}

export interface CheckpointCreated {
  checkpointId: string;
  sequenceNumber: number;
  sizeBytes: number;
  durationMs: number;
  trigger: TriggerReason;
  reason?: string;
  journalSequence?: number;
}

/** Reply to PUT and PATCH /v1/context. */
export interface ContextUpdate {
  revision: number;
  changed: boolean;
  checkpoint: CheckpointCreated | null;
  checkpointError?: string;
  journalSequence?: number;
  durable?: boolean;
}

/** Reply to POST /v1/tool-calls. */
export interface ToolCallAppended {
  revision: number;
  toolCallLogSize: number;
  journalSequence?: number;
  durable?: boolean;
}

/** POST /v1/tool-calls/begin. Without idempotencyKey, argsSha256 is required. */
export interface BeginRequest {
  toolName: string;
  effect: Effect;
  idempotencyKey?: string;
  argsSha256?: string;
  inputSummary?: string;
}

interface JournalAck {
  revision: number;
  journalSequence?: number;
  durable?: boolean;
  checkpointSequence?: number;
}

/** 201 of begin: run the call. */
export interface BeginStarted extends JournalAck {
  callId: string;
  idempotencyKey: string;
  state: "started";
}

export interface ReplayedResult {
  success: boolean;
  outputSummary: string;
  durationMs: number;
  externalId?: string;
  reconciled: boolean;
}

/** 200 of begin: the key has a result; skip the call. */
export interface BeginReplayed {
  callId: string;
  idempotencyKey: string;
  state: "completed";
  replayed: true;
  result: ReplayedResult;
}

/** The body of 409 OUTCOME_UNKNOWN (besides `error`). */
export interface OutcomeUnknownCall {
  code: "OUTCOME_UNKNOWN";
  callId: string;
  idempotencyKey: string;
  toolName: string;
  effect: Effect;
  argsSha256: string;
  inputSummary: string;
  beganAt: string;
  state: "started" | "outcome_unknown";
}

export interface EndRequest {
  success: boolean;
  outputSummary?: string;
  durationMs?: number;
  externalId?: string;
}

export interface EndReply extends JournalAck {
  callId: string;
  state: "completed";
}

export type ReconcileOutcome = "succeeded" | "failed" | "not_executed";

export interface ReconcileRequest {
  outcome: ReconcileOutcome;
  outputSummary?: string;
  note?: string;
}

export interface ReconcileReply extends JournalAck {
  callId: string;
  outcome: ReconcileOutcome;
  state: "completed" | "removed";
  keyFreed: boolean;
}

export type LedgerState = "started" | "outcome_unknown" | "completed";

export interface LedgerResult {
  success: boolean;
  outputSummary: string;
  durationMs: number;
  externalId: string | null;
  reconciled: boolean;
}

export interface LedgerCall {
  callId: string;
  idempotencyKey: string;
  toolName: string;
  effect: Effect;
  argsSha256: string;
  inputSummary: string;
  beganAt: string;
  state: LedgerState;
  endedAt: string | null;
  result: LedgerResult | null;
}

export interface ToolCallList {
  calls: LedgerCall[];
}

export interface CheckpointCreateRequest {
  trigger?: "manual" | "pre_compaction";
  taskId?: string;
}

export interface CheckpointInfo {
  checkpointId: string;
  sequenceNumber: number;
  timestamp: string;
  triggerReason: TriggerReason;
  sizeBytes: number;
  expireAt: string;
  contentSha256: string;
}

export interface CheckpointList {
  checkpoints: CheckpointInfo[];
}

/** GET /v1/checkpoints/{id}: the verified document (docs/checkpoint-format.md). */
export interface StoredCheckpoint {
  schemaVersion: number;
  checkpointId: string;
  agentId: string;
  sequenceNumber: number;
  timestamp: string;
  triggerReason: TriggerReason;
  activeTask: ActiveTask | null;
  contextSummary: ContextSummary;
  [member: string]: unknown;
}

/** POST /v1/restore, POST /v1/agent-start, GET /v1/restoration. */
export interface RestoreResult {
  prompt: string;
  coldStart: boolean;
  /** null on a cold start. */
  checkpointId: string | null;
  sequenceNumber: number;
  outcomeUnknownCalls: number;
  /** Gates still to act on (pending, or decided and not consumed); absent when none. */
  gates?: Gate[];
  completedWritesSinceCheckpoint: number;
  totalMs: number;
  [member: string]: unknown;
}

export type GateState = "pending" | "approved" | "rejected";
export type GateDecisionValue = "approved" | "rejected";

export interface GateDecision {
  decision: GateDecisionValue;
  by: string;
  response: unknown;
  argsSha256: string | null;
  resolvedAt: string;
  expired: boolean;
}

export interface Gate {
  gateId: string;
  state: GateState;
  reason: string;
  request: unknown;
  toolCallId: string | null;
  argsSha256: string | null;
  createdAt: string;
  expiresAt: string;
  decision: GateDecision | null;
  consumed: boolean;
  consumedAt: string | null;
}

/** POST /v1/gates. */
export interface GateRequest {
  gateId?: string;
  reason: string;
  request?: unknown;
  toolCallId?: string;
  argsSha256?: string;
  expiresAt?: string;
  ttlSeconds?: number;
}

export interface GateCreated {
  gateId: string;
  state: GateState;
  expiresAt: string;
  gate: Gate;
}

export interface GateList {
  gates: Gate[];
}

/** POST /v1/gates/{gateId}/resolve (gateId comes from the path). */
export interface GateResolveRequest {
  decision: GateDecisionValue;
  by: string;
  response?: unknown;
  argsSha256?: string;
  gateId?: string;
}

export interface Lease {
  state: "held" | "standby" | "lost" | "released";
  holder: string;
  epoch?: number;
  expiresAt?: string;
  detail?: string;
}

/** GET /readyz (200 and 503 carry the same shape). */
export interface Readiness {
  ready: boolean;
  store: string;
  /** "ok", or the "journal unavailable: ..." error while changes are refused until a checkpoint
   * repairs the journal (a full volume, a store refusing writes). */
  journal?: string;
  nats: "connected" | "disconnected";
  lease?: Lease;
  reason?: string;
}

export interface Health {
  status: "ok";
}
