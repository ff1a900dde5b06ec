// The PrometheusRule in k8s/base: its spec passes `promtool check rules`, every alert passes its
// promtool unit tests (agentckpt-alerts.test.yaml), every alert has a case where it fires and
// one where it stays silent, each of those tests fails when its alert is disabled, and every
// metric the rules read is one the sidecar exposes. Run: node --test tests/k8s/rules/
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..");
const work = mkdtempSync(join(tmpdir(), "agentckpt-rules-"));
after(() => rmSync(work, { recursive: true, force: true }));

const rule = parse(readFileSync(join(repo, "k8s", "base", "prometheusrule.yaml"), "utf8"));
const unitTests = parse(readFileSync(join(here, "agentckpt-alerts.test.yaml"), "utf8"));
const alerts = rule.spec.groups.flatMap((g) => g.rules.filter((r) => r.alert).map((r) => r.alert));

// Writes `spec` as the rule file next to the unit tests and runs promtool with `args`.
function promtool(spec, ...args) {
  writeFileSync(join(work, "agentckpt-rules.yaml"), stringify(spec));
  copyFileSync(join(here, "agentckpt-alerts.test.yaml"), join(work, "agentckpt-alerts.test.yaml"));
  const r = spawnSync("promtool", args, { cwd: work, encoding: "utf8", timeout: 60000 });
  if (r.error) throw r.error;
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
}

test("promtool check rules accepts the PrometheusRule's spec", () => {
  const r = promtool(rule.spec, "check", "rules", "agentckpt-rules.yaml");
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, new RegExp(`SUCCESS: ${alerts.length} rules found`));
  assert.ok(alerts.includes("AgentNoRecentCheckpoint") && alerts.length >= 5, alerts.join(", "));
});

test("promtool test rules passes the unit tests of every alert", () => {
  const r = promtool(rule.spec, "test", "rules", "agentckpt-alerts.test.yaml");
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /SUCCESS/);
});

test("every alert has a firing case and a silent case", () => {
  const cases = unitTests.tests.flatMap((t) => t.alert_rule_test ?? []);
  for (const alert of alerts) {
    const mine = cases.filter((c) => c.alertname === alert);
    assert.ok(mine.some((c) => (c.exp_alerts ?? []).length > 0), `${alert}: no case where it fires`);
    assert.ok(mine.some((c) => (c.exp_alerts ?? []).length === 0), `${alert}: no case where it is silent`);
  }
});

test("each alert's unit test fails when that alert never fires", () => {
  for (const alert of alerts) {
    const spec = structuredClone(rule.spec);
    for (const g of spec.groups) for (const r of g.rules) if (r.alert === alert) r.expr = "vector(1) < 0";
    const r = promtool(spec, "test", "rules", "agentckpt-alerts.test.yaml");
    assert.notEqual(r.code, 0, `${alert} disabled, yet the unit tests pass`);
    assert.match(r.out, new RegExp(`alertname: ${alert},`), r.out);
  }
});

test("the rules read only metrics the sidecar exposes", () => {
  const dir = join(repo, "observability");
  const source = readdirSync(dir).filter((f) => f.endsWith(".cc")).map((f) => readFileSync(join(dir, f), "utf8")).join("\n");
  const exposed = new Set([...source.matchAll(/"((?:agentckpt|process)_[a-z0-9_]+)"/g)].map((m) => m[1]));
  const exprs = rule.spec.groups.flatMap((g) => g.rules.map((r) => r.expr)).join("\n");
  const used = new Set([...exprs.matchAll(/\b((?:agentckpt|process)_[a-z0-9_]+)/g)].map((m) => m[1]));
  assert.ok(used.size >= 8, [...used].join(", "));
  for (const name of used) {
    const family = name.replace(/_(bucket|sum|count)$/, "");
    assert.ok(exposed.has(name) || exposed.has(family), `${name} is not a metric of the sidecar`);
  }
});
