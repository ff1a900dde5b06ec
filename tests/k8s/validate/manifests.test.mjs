// Every kustomization under k8s/ renders and passes the offline checks; deliberately broken
// fixtures are rejected with the expected messages. Run: node --test tests/k8s/validate/
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { parse } from "yaml";

import { checkKustomization, checkObjects } from "./check-manifests.mjs";

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
    "Pod Security restricted container agent: allowPrivilegeEscalation must be false",
    "Pod Security restricted container agent: capabilities must drop ALL",
    "Pod Security restricted container agent: capability NET_ADMIN must not be added",
  ];
  for (const e of expected) assert.ok(errors.some((x) => x.includes(e)), `missing: ${e}\n${errors.join("\n")}`);
  assert.equal(errors.length, expected.length + 1, errors.join("\n"));  // + the agent's resources
});

test("a kustomization that does not render is rejected", async () => {
  const { errors } = await checkKustomization(fixture("render-invalid"));
  assert.equal(errors.length, 1);
  assert.match(errors[0], /render failed: .*does-not-exist\.yaml/);
});

test("k8s/monitoring ships the dashboard as a ConfigMap for the Grafana sidecar", async () => {
  const objects = await clean("k8s/monitoring");
  assert.equal(objects.length, 1);
  const cm = find(objects, "ConfigMap", "agentckpt-dashboard");
  assert.ok(cm, "no ConfigMap agentckpt-dashboard (with a fixed name)");
  assert.equal(cm.metadata.labels.grafana_dashboard, "1");
  const file = readFileSync(join(repo, "k8s", "monitoring", "agentckpt-dashboard.json"), "utf8");
  assert.equal(cm.data["agentckpt-dashboard.json"], file);
  const dashboard = JSON.parse(file);
  assert.equal(dashboard.uid, "agentckpt");
  const panels = dashboard.panels.filter((p) => p.type !== "row");
  assert.ok(panels.length >= 15, `${panels.length} panels`);
  const ids = new Set(dashboard.panels.map((p) => p.id));
  assert.equal(ids.size, dashboard.panels.length, "panel ids repeat");
  for (const p of panels) {
    assert.ok(p.targets.length > 0 && p.targets.every((t) => t.expr), `${p.title}: a target without expr`);
    assert.equal(p.datasource.uid, "${datasource}", `${p.title}: datasource`);
    assert.ok(p.gridPos.x + p.gridPos.w <= 24, `${p.title}: wider than the grid`);
  }
  const titles = panels.map((p) => p.title.toLowerCase()).join("\n");
  for (const topic of ["30 s sla", "restore phases", "checkpoint rate by trigger", "failures", "journal lag", "pending gates", "unknown outcomes"]) {
    assert.ok(titles.includes(topic), `no panel on ${topic}`);
  }
});

const COMPONENT_WORKLOADS = ["research-agent", "coding-agent"];

function inputOf(file) {
  return parse(readFileSync(fixture(`component/${file}`), "utf8"));
}

test("the agentckpt-sidecar component adds the native sidecar to a Deployment and a StatefulSet", async () => {
  const objects = await clean(join("tests", "k8s", "fixtures", "component"));
  const cm = find(objects, "ConfigMap");
  assert.match(cm.metadata.name, /^agentckpt-sidecar-config-[a-z0-9]+$/);
  assert.equal(cm.data.NATS_URL, "nats://nats.messaging.svc:4222", "the user's patch of the settings");
  for (const name of COMPONENT_WORKLOADS) {
    const kind = name === "coding-agent" ? "StatefulSet" : "Deployment";
    const out = find(objects, kind, name);
    const input = inputOf(`${name}.yaml`);
    const pod = out.spec.template;
    assert.equal(pod.metadata.labels["agentckpt.io/sidecar"], "true", `${name}: PodMonitor label`);
    assert.equal(pod.metadata.labels["agentckpt.io/agent-id"], input.spec.template.metadata.labels["agentckpt.io/agent-id"]);
    const sidecar = pod.spec.initContainers.find((c) => c.name === "agentckpt");
    assert.equal(sidecar.restartPolicy, "Always", `${name}: native sidecar`);
    assert.equal(sidecar.image, "registry.example.com/agentckpt:0.1.0");
    assert.deepEqual(sidecar.env.find((e) => e.name === "AGENT_ID").valueFrom,
      { fieldRef: { fieldPath: "metadata.labels['agentckpt.io/agent-id']" } });
    assert.equal(sidecar.envFrom[0].configMapRef.name, cm.metadata.name);
    assert.equal(sidecar.startupProbe.httpGet.path, "/healthz");
    assert.equal(sidecar.livenessProbe.httpGet.path, "/healthz");
    assert.equal(sidecar.readinessProbe.httpGet.path, "/readyz");
    const volumes = pod.spec.volumes.map((v) => v.name);
    for (const v of ["agentckpt-data", "agentckpt-tmp"]) assert.ok(volumes.includes(v), `${name}: no volume ${v}`);
    // The workload's own containers, init containers and volumes are untouched.
    assert.deepEqual(pod.spec.containers, input.spec.template.spec.containers);
    for (const c of input.spec.template.spec.initContainers ?? []) {
      assert.deepEqual(pod.spec.initContainers.find((x) => x.name === c.name), c);
    }
    for (const v of input.spec.template.spec.volumes ?? []) {
      assert.deepEqual(pod.spec.volumes.find((x) => x.name === v.name), v);
    }
  }
  const deployment = find(objects, "Deployment", "research-agent");
  assert.equal(deployment.spec.replicas, 1);
  assert.deepEqual(deployment.spec.strategy, { type: "Recreate" });
  const sts = find(objects, "StatefulSet", "coding-agent");
  assert.deepEqual(sts.spec.volumeClaimTemplates, inputOf("coding-agent.yaml").spec.volumeClaimTemplates);
  // A workload without agentckpt.io/inject is left alone.
  const web = find(objects, "Deployment", "web-frontend");
  delete web.metadata.namespace;
  assert.deepEqual(web, inputOf("web-frontend.yaml"));
});

test("the base PodMonitor scrapes pods of the component", async () => {
  const base = await clean("k8s/base");
  const objects = await clean(join("tests", "k8s", "fixtures", "component"));
  const monitor = find(base, "PodMonitor");
  const errors = await checkObjects([...objects, monitor]);
  assert.deepEqual(errors, []);
  const relabel = monitor.spec.podMetricsEndpoints[0].relabelings.at(-1);
  assert.deepEqual(relabel.sourceLabels, ["__meta_kubernetes_pod_label_agentckpt_io_agent_id"]);
});

test("Pod Security restricted: the sidecar passes, each violation of the pod is reported", async () => {
  const { errors } = await checkKustomization(fixture("component-invalid"));
  const expected = [
    "restricted: hostNetwork must not be true",
    "restricted: hostPID must not be true",
    "restricted: hostIPC must not be true",
    "restricted: AppArmor annotation container.apparmor.security.beta.kubernetes.io/agent is unconfined",
    "restricted: sysctl kernel.msgmax is not in the safe set",
    "restricted: volume host of type hostPath is not allowed",
    "restricted: pod runAsNonRoot must not be false",
    "restricted: pod seccompProfile must be RuntimeDefault or Localhost, is Unconfined",
    "restricted container agent: privileged must not be true",
    "restricted container agent: hostPort 8080 is not allowed",
    "restricted container agent: procMount must be Default",
    "restricted container agent: seLinuxOptions.type spc_t is not allowed",
    "restricted container agent: allowPrivilegeEscalation must be false",
    "restricted container agent: runAsNonRoot must be true (container or pod)",
    "restricted container agent: runAsUser must not be 0",
    "restricted container agent: seccompProfile must be RuntimeDefault or Localhost (container or pod), is Unconfined",
    "restricted container agent: capabilities must drop ALL",
    "restricted container agent: capability SYS_ADMIN must not be added",
    "env AGENT_ID reads pod label agentckpt.io/agent-id, which the pod template does not set",
  ];
  for (const e of expected) assert.ok(errors.some((x) => x.includes(e)), `missing: ${e}\n${errors.join("\n")}`);
  assert.equal(errors.filter((x) => x.includes("Pod Security restricted")).length, expected.length - 1, errors.join("\n"));
  assert.ok(!errors.some((x) => x.includes("init container agentckpt")), errors.join("\n"));
});
