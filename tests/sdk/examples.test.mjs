// The examples (examples/typescript, examples/python) run as a user would run them, against a
// real sidecar: the first run SIGKILLs itself after writing section 2 and before reporting it,
// the sidecar is SIGKILLed and restarted too, the second run resumes from its restoration, does
// not write section 2 again (effect() replays it), waits at the gate until it is approved over
// HTTP, and publishes once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { AgentCkptClient } from "@agentckpt/client";
import { SidecarEnv, sourceDir, waitFor } from "./harness.mjs";

function run(cmd, args, env) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const done = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, out })));
  return { child, done, output: () => out };
}

const examples = {
  typescript: ["node", [join(sourceDir, "examples", "typescript", "dist", "agent.js")]],
  python: ["python3", [join(sourceDir, "examples", "python", "agent.py")]],
};

for (const [lang, [cmd, args]] of Object.entries(examples)) {
  test(`the ${lang} example resumes after SIGKILL, writes each section once, waits at the gate`, async () => {
    const env = await SidecarEnv.create({ agentId: `agent-example-${lang}` });
    try {
      const sidecar = await env.startSidecar();
      const client = new AgentCkptClient({ baseUrl: env.url });
      const outDir = join(env.dir, "out");
      const vars = { AGENTCKPT_URL: env.url, OUT_DIR: outDir };

      const first = await run(cmd, args, { ...vars, CRASH_AFTER_SECTION: "2" }).done;
      assert.equal(first.signal, "SIGKILL", first.out);
      assert.match(first.out, /cold start/);
      assert.equal(readFileSync(join(outDir, "writes.log"), "utf8"), "section 1\nsection 2\n");

      await sidecar.restart();
      await sidecar.ready();

      const second = run(cmd, args, vars);
      await waitFor("the example's gate", async () => {
        const pending = (await client.listGates("pending")).gates;
        return pending.some((g) => g.gateId === "report-2026-q4-publish") || second.child.exitCode !== null;
      }, { timeoutMs: 60000 });
      assert.ok(!existsSync(join(outDir, "published.txt")), "nothing published before the approval");
      const res = await fetch(`${env.url}/v1/gates/report-2026-q4-publish/resolve`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision: "approved", by: "erin" }),
      });
      assert.equal(res.status, 200, await res.text());
      const result = await second.done;
      assert.equal(result.code, 0, result.out);
      assert.match(result.out, /resuming from checkpoint \d+/);
      assert.match(result.out, /finished: approved/);
      assert.equal(
        readFileSync(join(outDir, "writes.log"), "utf8"),
        "section 1\nsection 2\nsection 3\nsection 4\n",
        "each section written exactly once",
      );
      assert.equal(readFileSync(join(outDir, "published.txt"), "utf8"), "published by approval of erin\n");
      const ctx = await client.getContext();
      assert.equal(ctx.activeTask?.phase, "reviewing");
      assert.equal(ctx.contextSummary.completedSteps, 4);
      const gate = await client.getGate("report-2026-q4-publish");
      assert.equal(gate.consumed, true);
    } finally {
      await env.close();
    }
  });
}
