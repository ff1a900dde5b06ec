// Initializers for the official checkpointer validation suite
// (@langchain/langgraph-checkpoint-validation): the official SQLite saver alone, and
// withAgentCkpt() around it with a real sidecar receiving the context PATCHes.
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { AgentCkptClient } from "@agentckpt/client";
import { withAgentCkpt } from "@agentckpt/client/langgraph";
import { SidecarEnv } from "../harness.mjs";

export const kBareName = "SqliteSaver";
export const kWrappedName = "withAgentCkpt(SqliteSaver)";
// The name under which the suite's maintainers validate the SQLite saver. The suite keys its
// list of known gaps of a storage implementation by this name (one in the pinned version:
// "SQLiteSaver doesn't store channel deltas"); the wrapper stores nothing itself, so under this
// name it is held to exactly what the suite asks of the saver it wraps.
export const kOfficialSqliteName = "@langchain/langgraph-checkpoint-sqlite";

export const bare = {
  checkpointerName: kBareName,
  createCheckpointer: () => SqliteSaver.fromConnString(":memory:"),
  destroyCheckpointer: (checkpointer) => checkpointer.db.close(),
};

let env;
let client;
let created = 0;
const errors = [];

export const wrapped = (checkpointerName = kWrappedName) => ({
  checkpointerName,
  beforeAllTimeout: 120000,
  async beforeAll() {
    env = await SidecarEnv.create({ agentId: "agent-sdk-validation" });
    await env.startSidecar();
    client = new AgentCkptClient({ baseUrl: env.url });
  },
  async afterAll() {
    try {
      // The wrapper did report to the sidecar: the suite's threads became its tasks.
      const ctx = await client.getContext();
      if (created === 0 || !ctx.activeTask) {
        throw new Error(`the wrapper reported nothing (created ${created}, context ${JSON.stringify(ctx)})`);
      }
      if (errors.length) throw new Error(`context PATCH failures: ${errors.slice(0, 3).map(String).join("; ")}`);
    } finally {
      await env?.close();
    }
  },
  createCheckpointer() {
    created++;
    return withAgentCkpt(SqliteSaver.fromConnString(":memory:"), client, { onError: (e) => errors.push(e) });
  },
  destroyCheckpointer: (checkpointer) => checkpointer.db.close(),
});
