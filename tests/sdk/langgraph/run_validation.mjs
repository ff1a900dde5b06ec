// Runs the official checkpointer validation suite (validation.test.mjs, under vitest) over the
// official SQLite saver and over withAgentCkpt() around it, then checks that the wrapper passes
// every test the bare saver passes and fails none that it passes: every method is passed
// through unchanged. The bare saver is allowed only the failures listed in kInnerFailures (the
// saver's own, in the pinned versions), so a new failure of either side fails this test.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { kBareName, kWrappedName } from "./validation_initializer.mjs";

// @langchain/langgraph-checkpoint-sqlite 1.0.4 stores every channel value on each put, which
// @langchain/langgraph-checkpoint-validation 1.1.1 checks against.
const kInnerFailures = new Set([
  "put > should only store channel_values that have changed (based on newVersions)",
]);

const sdkDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = mkdtempSync(join(tmpdir(), "agentckpt-validation-"));
const report = join(out, "vitest.json");
const run = spawnSync(
  process.execPath,
  [join(sdkDir, "node_modules", "vitest", "vitest.mjs"), "run", "--globals", "--reporter=default",
   "--reporter=json", `--outputFile.json=${report}`, "langgraph/validation.test.mjs"],
  { cwd: sdkDir, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, NO_COLOR: "1" } },
);
let results;
try {
  results = JSON.parse(readFileSync(report, "utf8"));
} catch (e) {
  console.error(`no vitest report (exit ${run.status}): ${e}`);
  process.exit(1);
} finally {
  rmSync(out, { recursive: true, force: true });
}

// "<name> > <name>#put > ... > title" -> side, "put > ... > title"; parameterised tests share a
// title, so repeats are numbered in report order (the same order on both sides).
const outcomes = { [kBareName]: new Map(), [kWrappedName]: new Map() };
for (const file of results.testResults) {
  for (const t of file.assertionResults) {
    const [side, group] = t.ancestorTitles;
    if (!(side in outcomes)) continue;
    const base = [String(group).split("#").pop(), ...t.ancestorTitles.slice(2), t.title].join(" > ");
    let key = base;
    for (let n = 2; outcomes[side].has(key); n++) key = `${base} #${n}`;
    outcomes[side].set(key, t.status);
  }
}
const problems = [];
const bare = outcomes[kBareName];
const wrapped = outcomes[kWrappedName];
if (bare.size < 100) problems.push(`only ${bare.size} tests ran over the bare saver`);
if (wrapped.size !== bare.size) problems.push(`${wrapped.size} tests over the wrapper, ${bare.size} over the saver`);
for (const [key, status] of bare) {
  if (status !== "passed" && !kInnerFailures.has(key)) problems.push(`the bare saver: ${key}: ${status}`);
  if (wrapped.get(key) !== status) problems.push(`the wrapper: ${key}: ${wrapped.get(key)}, the saver: ${status}`);
}
const passed = [...wrapped.values()].filter((s) => s === "passed").length;
console.log(`the wrapper passed ${passed} of ${wrapped.size} tests; the bare saver ${[...bare.values()].filter((s) => s === "passed").length} of ${bare.size}`);
if (problems.length) {
  for (const p of problems) console.error(`FAIL ${p}`);
  process.exit(1);
}
console.log("ok: the wrapper passes every test the official SQLite saver passes");
