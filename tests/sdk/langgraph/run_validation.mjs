// Runs the official checkpointer validation suite (validation.test.mjs, under vitest) twice:
// 1. over the official SQLite saver and over withAgentCkpt() around it, each under a name of its
//    own (so the suite skips nothing), then checks that the wrapper passes every test the bare
//    saver passes and fails none that it passes: every method is passed through unchanged. The
//    bare saver is allowed only the failures listed in kInnerFailures (the saver's own, in the
//    pinned versions), so a new failure of either side fails this test;
// 2. over the wrapper alone, under the name the suite's maintainers validate the SQLite saver
//    with: every test must pass, and the only tests the suite may skip are kInnerFailures (its
//    own list of that saver's known gaps).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { kBareName, kOfficialSqliteName, kWrappedName } from "./validation_initializer.mjs";

// @langchain/langgraph-checkpoint-sqlite 1.0.4 stores every channel value on each put, which
// @langchain/langgraph-checkpoint-validation 1.1.1 checks against; the suite itself skips that
// test for the SQLite saver ("SQLiteSaver doesn't store channel deltas").
const kInnerFailures = new Set([
  "put > should only store channel_values that have changed (based on newVersions)",
]);

const sdkDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");

// Runs the suite in `mode` (see validation.test.mjs); returns side name -> Map(test key, status).
function runSuite(mode) {
  const out = mkdtempSync(join(tmpdir(), "agentckpt-validation-"));
  const report = join(out, "vitest.json");
  const run = spawnSync(
    process.execPath,
    [join(sdkDir, "node_modules", "vitest", "vitest.mjs"), "run", "--globals", "--reporter=default",
     "--reporter=json", `--outputFile.json=${report}`, "langgraph/validation.test.mjs"],
    { cwd: sdkDir, stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, NO_COLOR: "1", AGENTCKPT_VALIDATION: mode } },
  );
  let results;
  try {
    results = JSON.parse(readFileSync(report, "utf8"));
  } catch (e) {
    console.error(`no vitest report for the ${mode} run (exit ${run.status}): ${e}`);
    process.exit(1);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  // "<name> > <name>#put > ... > title" -> side, "put > ... > title"; parameterised tests share a
  // title, so repeats are numbered in report order (the same order on both sides).
  const outcomes = {};
  for (const file of results.testResults) {
    for (const t of file.assertionResults) {
      const [side, group] = t.ancestorTitles;
      outcomes[side] ??= new Map();
      const base = [String(group).split("#").pop(), ...t.ancestorTitles.slice(2), t.title].join(" > ");
      let key = base;
      for (let n = 2; outcomes[side].has(key); n++) key = `${base} #${n}`;
      outcomes[side].set(key, t.status);
    }
  }
  return outcomes;
}

const count = (m, status) => [...m.values()].filter((s) => s === status).length;
const problems = [];

// 1. The wrapper against the bare saver, nothing skipped.
const compared = runSuite("compare");
const bare = compared[kBareName] ?? new Map();
const wrapped = compared[kWrappedName] ?? new Map();
if (bare.size < 100) problems.push(`only ${bare.size} tests ran over the bare saver`);
if (wrapped.size !== bare.size) problems.push(`${wrapped.size} tests over the wrapper, ${bare.size} over the saver`);
for (const [key, status] of bare) {
  if (status !== "passed" && !kInnerFailures.has(key)) problems.push(`the bare saver: ${key}: ${status}`);
  if (wrapped.get(key) !== status) problems.push(`the wrapper: ${key}: ${wrapped.get(key)}, the saver: ${status}`);
}
console.log(`compare run: the wrapper passed ${count(wrapped, "passed")} of ${wrapped.size} tests; ` +
            `the bare saver ${count(bare, "passed")} of ${bare.size}`);

// 2. The wrapper as the suite validates the SQLite saver.
const official = runSuite("official")[kOfficialSqliteName] ?? new Map();
if (official.size !== bare.size) problems.push(`official run: ${official.size} tests, compare run: ${bare.size}`);
const skipped = [];
for (const [key, status] of official) {
  if (status === "passed") continue;
  // A skipped test's title carries the suite's reason: "[because <reason>] <title>".
  const unprefixed = key.replace(/(^|> )\[because [^\]]*\] /, "$1");
  if ((status === "skipped" || status === "pending") && kInnerFailures.has(unprefixed)) {
    skipped.push(key.match(/\[because ([^\]]*)\]/)?.[1] ?? key);
    continue;
  }
  problems.push(`official run, the wrapper: ${key}: ${status}`);
}
console.log(`official run (as "${kOfficialSqliteName}"): the wrapper passed ` +
            `${count(official, "passed")} of ${official.size} tests; skipped by the suite's own ` +
            `list for that saver: ${skipped.length} (${skipped.join("; ") || "none"})`);

if (problems.length) {
  for (const p of problems) console.error(`FAIL ${p}`);
  process.exit(1);
}
console.log("ok: the wrapper passes the official suite as the SQLite saver is validated, and " +
            "every test the official SQLite saver passes");
