// Every kustomization under k8s/ renders and passes the offline checks; deliberately broken
// fixtures are rejected with the expected messages. Run: node --test tests/k8s/validate/
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { checkKustomization } from "./check-manifests.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..");
const fixture = (n) => join(here, "..", "fixtures", n);

// The environment variables the sidecar understands, from its settings table.
function knownSettings() {
  const source = readFileSync(join(repo, "sidecar", "config.cc"), "utf8");
  return new Set([...source.matchAll(/\{"[a-z-]+", "([A-Z_]+)"/g)].map((m) => m[1]));
}

async function clean(dir) {
  const { objects, errors } = await checkKustomization(join(repo, dir));
  assert.deepEqual(errors, [], `${dir} has problems`);
  return objects;
}

const find = (objects, kind, name) => objects.find((o) => o.kind === kind && (!name || o.metadata.name === name));

for (const dir of ["k8s/base", "k8s/overlays/sqlite", "k8s/overlays/firestore"]) {
  test(`${dir} renders and every object is valid`, async () => {
    const objects = await clean(dir);
    for (const kind of ["Namespace", "ServiceAccount", "ConfigMap", "Deployment", "Job", "NetworkPolicy", "PodMonitor", "PrometheusRule"]) {
      assert.ok(find(objects, kind), `${dir}: no ${kind}`);
    }
    const settings = knownSettings();
    assert.ok(settings.has("CKPT_HTTP_ADDR") && settings.size > 20, "settings table not found");
    for (const key of Object.keys(find(objects, "ConfigMap").data)) {
      assert.ok(settings.has(key), `${dir}: ConfigMap key ${key} is not an agentckpt setting`);
    }
    const job = find(objects, "Job");
    assert.equal(job.spec.template.spec.containers[0].args[0], "setup-stream");
  });
}

test("sqlite overlay keeps the store on a PersistentVolumeClaim", async () => {
  const objects = await clean("k8s/overlays/sqlite");
  const pvc = find(objects, "PersistentVolumeClaim");
  assert.ok(pvc);
  const volumes = find(objects, "Deployment").spec.template.spec.volumes;
  assert.deepEqual(volumes.find((v) => v.name === "data"), { name: "data", persistentVolumeClaim: { claimName: pvc.metadata.name } });
  assert.match(find(objects, "ConfigMap").data.CKPT_STORE, /^sqlite:\/\/\/var\/lib\/agentckpt\//);
});

test("firestore overlay uses Workload Identity and a firestore:// store", async () => {
  const objects = await clean("k8s/overlays/firestore");
  const sa = find(objects, "ServiceAccount");
  assert.match(sa.metadata.annotations["iam.gke.io/gcp-service-account"], /^[a-z0-9-]+@[a-z0-9-]+\.iam\.gserviceaccount\.com$/);
  assert.equal(find(objects, "Deployment").spec.template.spec.serviceAccountName, sa.metadata.name);
  assert.match(find(objects, "ConfigMap").data.CKPT_STORE, /^firestore:\/\/projects\/[a-z0-9-]+\/databases\/\(default\)$/);
  assert.equal(find(objects, "PersistentVolumeClaim"), undefined);
});

test("k8s/nats ships the account configuration as a ConfigMap", async () => {
  const objects = await clean("k8s/nats");
  const cm = find(objects, "ConfigMap");
  assert.match(cm.data["agent-permissions.conf"], /"agent\.agent-marketing-prod\.>"/);
});

test("schema violations are rejected", async () => {
  const { errors } = await checkKustomization(fixture("schema-invalid"));
  const expected = [
    "Deployment/bad-types: schema: /spec/replicas must be integer",
    "/spec/template/spec/containers/0/ports/0/containerPort must be integer",
    "Pod/container-without-name: schema: /spec/containers/0 must have required property name",
    "PodMonitor/numeric-port: schema: /spec/podMetricsEndpoints/0/port must be string",
    "Gadget/unknown-kind: unknown kind Gadget in example.com/v1",
  ];
  for (const e of expected) assert.ok(errors.some((x) => x.includes(e)), `missing: ${e}\n${errors.join("\n")}`);
});

test("deployment rule violations are rejected", async () => {
  const { errors } = await checkKustomization(fixture("policy-invalid"));
  const expected = [
    "volume data must have exactly one source, has emptyDir, persistentVolumeClaim",
    "volume data claims missing PVC agent-data",
    "container agent: allowPrivilegeEscalation must be false",
    "container agent: readOnlyRootFilesystem must be true",
    "container agent: capabilities must drop ALL",
    "container agent: must add no capabilities",
    "container agent: mounts undefined volume scratch",
    "service account missing-account is not defined",
    "init container agentckpt: restartPolicy must be Always (native sidecar)",
    "terminationGracePeriodSeconds must be 30",
    "livenessProbe path must be /healthz, is /metrics",
    "readinessProbe must be an httpGet probe on /readyz",
    "CKPT_HTTP_ADDR 127.0.0.1:8787 listens on loopback",
    "needs replicas 1 and the Recreate strategy",
  ];
  for (const e of expected) assert.ok(errors.some((x) => x.includes(e)), `missing: ${e}\n${errors.join("\n")}`);
  assert.equal(errors.length, expected.length + 1, errors.join("\n"));  // + the agent's resources
});

test("a kustomization that does not render is rejected", async () => {
  const { errors } = await checkKustomization(fixture("render-invalid"));
  assert.equal(errors.length, 1);
  assert.match(errors[0], /render failed: .*does-not-exist\.yaml/);
});
