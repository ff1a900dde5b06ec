// An agent loop on @agentckpt/client: it reports its context, writes each report section through
// effect() (nothing written twice, even across crashes), waits at a gate before publishing, and
// resumes from its restoration after a SIGKILL.
//
//   AGENTCKPT_URL=http://127.0.0.1:8787 OUT_DIR=./out node dist/agent.js
//
// CRASH_AFTER_SECTION=N makes the process SIGKILL itself right after writing section N, before it
// reports the step (to try a resume); run it again without it and it continues where it stopped.
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { AgentCkptClient } from "@agentckpt/client";

const client = new AgentCkptClient(); // $AGENTCKPT_URL or http://127.0.0.1:8787
const outDir = process.env.OUT_DIR ?? "./out";
const crashAfter = Number(process.env.CRASH_AFTER_SECTION ?? 0);
const sections = ["Summary", "Revenue", "Costs", "Outlook"];
const taskId = "report-2026-q4";

// The tool with a side effect: appends one section to the report.
function writeSection(index: number, title: string): { file: string; bytes: number } {
  const text = `## ${title}\n\nSection ${index + 1} of ${sections.length}.\n\n`;
  appendFileSync(join(outDir, "report.md"), text);
  appendFileSync(join(outDir, "writes.log"), `section ${index + 1}\n`);
  return { file: "report.md", bytes: text.length };
}

async function main(): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  // At its own start the agent asks for its restoration (a cold start the first time).
  const restored = await client.agentStart();
  console.log(restored.coldStart ? "cold start" : `resuming from checkpoint ${restored.sequenceNumber}`);
  const context = await client.getContext();
  const resumeAt = context.activeTask?.taskId === taskId ? context.contextSummary.completedSteps : 0;

  if (context.activeTask?.taskId !== taskId) {
    await client.putContext({
      activeTask: { taskId, title: "Q4 report", phase: "planning", progress: 0, startedAt: new Date().toISOString() },
      contextSummary: {
        systemPromptHash: "",
        gatheringResults: "",
        planOutline: sections.map((s) => `Write ${s}`).concat("Publish after approval"),
        completedSteps: 0,
        draftContent: "",
        toolCallLog: [],
      },
      workspace: null,
    });
  }
  await client.patchContext({ activeTask: { phase: "executing" } });

  // Sections already done are replayed from the ledger by effect(), never written again; the
  // loop starts at the first step the context does not count as completed.
  for (let i = resumeAt; i < sections.length; i++) {
    const result = await client.effect(`${taskId}:section:${i + 1}`, () => writeSection(i, sections[i]), {
      toolName: "write_section",
      inputSummary: sections[i],
    });
    // A crash here (after the write, before the context says so) is what the ledger is for: the
    // next run redoes this step and effect() returns the recorded result without writing again.
    if (crashAfter === i + 1) process.kill(process.pid, "SIGKILL");
    await client.patchContext({
      activeTask: { progress: Math.round(((i + 1) * 80) / sections.length) },
      contextSummary: { completedSteps: i + 1, draftContent: `${i + 1} sections, last ${result.bytes} bytes` },
    });
    console.log(`section ${i + 1} done`);
  }

  // A human approves the publication; the same gateId after a restart finds the same gate.
  const gate = await client.gate(
    { gateId: `${taskId}-publish`, reason: "Publish the Q4 report", request: { file: "report.md" } },
    { waitSeconds: 30 },
  );
  console.log(`waiting at gate ${gate.gateId}`);
  const decided = await gate.decision;
  if (decided.state === "approved") {
    await client.effect(`${taskId}:publish`, () => {
      appendFileSync(join(outDir, "published.txt"), `published by approval of ${decided.decision?.by}\n`);
      return "published";
    }, { toolName: "publish" });
  }
  await gate.consume();
  await client.patchContext({ activeTask: { phase: "reviewing", progress: 100 } });
  console.log(`finished: ${decided.state}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
