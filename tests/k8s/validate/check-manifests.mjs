// Renders kustomizations with `kubectl kustomize` (no cluster needed) and checks every object
// offline: against the Kubernetes 1.32 API schemas (kubernetes-models) and the
// prometheus-operator CRD schemas, then against the rules agentckpt's manifests must keep
// (restricted security context, native sidecar with probes, references that resolve) and the
// Pod Security "restricted" profile (pod-security.mjs).
//
// Usage: node check-manifests.mjs DIR... (prints every problem; exit 1 if any).
import { execFileSync } from "node:child_process";
import { parseAllDocuments } from "yaml";

import { checkRestricted } from "./pod-security.mjs";

const MODEL_PACKAGES = [
  (group, version) => (group === "" ? `kubernetes-models/${version}` : `kubernetes-models/${group}/${version}`),
  (group, version) => `@kubernetes-models/prometheus-operator/${group}/${version}`,
];

// Renders one kustomization directory; returns {objects, errors}.
export function render(dir) {
  let out;
  try {
    out = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    const why = e.code === "ENOENT" ? "kubectl (with its built-in kustomize) is not installed" : String(e.stderr || e.message).trim();
    return { objects: [], errors: [`${dir}: render failed: ${why}`] };
  }
  const objects = [];
  const errors = [];
  for (const doc of parseAllDocuments(out)) {
    if (doc.errors.length) errors.push(`${dir}: YAML: ${doc.errors[0].message}`);
    else if (doc.contents !== null) objects.push(doc.toJS());
  }
  return { objects, errors };
}

async function modelClass(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  for (const path of MODEL_PACKAGES) {
    try {
      const mod = await import(path(group, version));
      if (typeof mod[kind] === "function") return mod[kind];
    } catch (e) {
      if (e.code !== "ERR_PACKAGE_PATH_NOT_EXPORTED" && e.code !== "ERR_MODULE_NOT_FOUND") throw e;
    }
  }
  return null;
}

function name(obj) {
  return `${obj.kind}/${obj.metadata?.name ?? "?"}`;
}

// Schema validation of one object; returns a list of problems.
export async function validateSchema(obj) {
  if (!obj || typeof obj !== "object" || !obj.apiVersion || !obj.kind) {
    return [`object without apiVersion/kind: ${JSON.stringify(obj).slice(0, 80)}`];
  }
  const Model = await modelClass(obj.apiVersion, obj.kind);
  if (!Model) return [`${name(obj)}: unknown kind ${obj.kind} in ${obj.apiVersion}`];
  try {
    new Model(obj).validate();
  } catch (e) {
    const details = (e.errors || []).map((x) => `${x.instancePath || "/"} ${x.message}`);
    return [`${name(obj)}: schema: ${details.length ? details.join("; ") : e.message}`];
  }
  return [];
}

const POD_TEMPLATE_KINDS = { Deployment: true, StatefulSet: true, DaemonSet: true, Job: true };

function podTemplates(objects) {
  return objects.filter((o) => POD_TEMPLATE_KINDS[o.kind]).map((o) => ({ owner: o, template: o.spec?.template ?? {} }));
}

function httpProbe(probe) {
  return probe?.httpGet ?? null;
}

// The value of env var `key` for container `c`, from its env or its envFrom ConfigMaps.
function envValue(c, key, configMaps) {
  const direct = (c.env ?? []).find((e) => e.name === key);
  if (direct) return direct.value;
  for (const from of c.envFrom ?? []) {
    const cm = configMaps.get(from.configMapRef?.name);
    if (cm?.data?.[key] !== undefined) return cm.data[key];
  }
  return undefined;
}

function checkContainer(where, c, pod, errors) {
  const sc = c.securityContext ?? {};
  const psc = pod.securityContext ?? {};
  if (!(sc.runAsNonRoot ?? psc.runAsNonRoot)) errors.push(`${where}: runAsNonRoot must be true`);
  if (sc.allowPrivilegeEscalation !== false) errors.push(`${where}: allowPrivilegeEscalation must be false`);
  if (sc.readOnlyRootFilesystem !== true) errors.push(`${where}: readOnlyRootFilesystem must be true`);
  if (!(sc.capabilities?.drop ?? []).includes("ALL")) errors.push(`${where}: capabilities must drop ALL`);
  if ((sc.capabilities?.add ?? []).length) errors.push(`${where}: must add no capabilities`);
  if ((sc.seccompProfile ?? psc.seccompProfile)?.type !== "RuntimeDefault") {
    errors.push(`${where}: seccompProfile must be RuntimeDefault`);
  }
  if (sc.privileged) errors.push(`${where}: must not be privileged`);
  const r = c.resources ?? {};
  if (!r.requests?.cpu || !r.requests?.memory || !r.limits?.memory) {
    errors.push(`${where}: needs cpu and memory requests and a memory limit`);
  }
}

// Every pod label an env var of `c` reads through the downward API must be set on the pod.
function checkLabelRefs(where, c, labels, errors) {
  for (const e of c.env ?? []) {
    const m = /^metadata\.labels\['([^']+)'\]$/.exec(e.valueFrom?.fieldRef?.fieldPath ?? "");
    if (m && !labels[m[1]]) errors.push(`${where}: env ${e.name} reads pod label ${m[1]}, which the pod template does not set`);
  }
}

function checkNativeSidecar(where, spec, configMaps, errors) {
  const sidecar = (spec.initContainers ?? []).find((c) => c.name === "agentckpt");
  if (!sidecar) {
    errors.push(`${where}: labelled agentckpt.io/sidecar but has no init container "agentckpt"`);
    return;
  }
  const w = `${where} init container agentckpt`;
  if (sidecar.restartPolicy !== "Always") errors.push(`${w}: restartPolicy must be Always (native sidecar)`);
  if ((spec.containers ?? []).some((c) => c.name === "agentckpt")) {
    errors.push(`${where}: agentckpt must not also be a regular container`);
  }
  if ((sidecar.args ?? [])[0] !== "run") errors.push(`${w}: args must start with "run"`);
  if (spec.terminationGracePeriodSeconds !== 30) errors.push(`${where}: terminationGracePeriodSeconds must be 30`);
  const ports = new Map((sidecar.ports ?? []).map((p) => [p.name, p.containerPort]));
  const probePort = (probe, label, path) => {
    const h = httpProbe(probe);
    if (!h) return errors.push(`${w}: ${label} must be an httpGet probe on ${path}`), undefined;
    if (h.path !== path) errors.push(`${w}: ${label} path must be ${path}, is ${h.path}`);
    const port = typeof h.port === "string" ? ports.get(h.port) : h.port;
    if (port === undefined) errors.push(`${w}: ${label} port ${h.port} is not a container port`);
    return port;
  };
  const live = probePort(sidecar.livenessProbe, "livenessProbe", "/healthz");
  const ready = probePort(sidecar.readinessProbe, "readinessProbe", "/readyz");
  const addr = envValue(sidecar, "CKPT_HTTP_ADDR", configMaps);
  if (!addr) {
    errors.push(`${w}: CKPT_HTTP_ADDR must be set (the default 127.0.0.1 is unreachable for probes)`);
    return;
  }
  const colon = addr.lastIndexOf(":");
  const host = addr.slice(0, colon);
  const port = Number(addr.slice(colon + 1));
  if (host === "127.0.0.1" || host === "localhost" || host === "[::1]") {
    errors.push(`${w}: CKPT_HTTP_ADDR ${addr} listens on loopback; kubelet probes use the pod IP`);
  }
  for (const p of [live, ready]) {
    if (p !== undefined && p !== port) errors.push(`${w}: probe port ${p} differs from CKPT_HTTP_ADDR ${addr}`);
  }
}

function checkPodTemplate(owner, template, index, errors) {
  const where = name(owner);
  const spec = template.spec ?? {};
  const labels = template.metadata?.labels ?? {};
  const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  const volumes = new Map();
  // A StatefulSet's claim templates are volumes of its pods too.
  for (const t of owner.spec?.volumeClaimTemplates ?? []) volumes.set(t.metadata?.name, t);
  for (const v of spec.volumes ?? []) {
    const sources = Object.keys(v).filter((k) => k !== "name");
    if (sources.length !== 1) errors.push(`${where}: volume ${v.name} must have exactly one source, has ${sources.join(", ") || "none"}`);
    if (volumes.has(v.name)) errors.push(`${where}: volume ${v.name} defined twice`);
    volumes.set(v.name, v);
    const claim = v.persistentVolumeClaim?.claimName;
    if (claim && !index.pvcs.has(claim)) errors.push(`${where}: volume ${v.name} claims missing PVC ${claim}`);
    const cm = v.configMap?.name;
    if (cm && !index.configMaps.has(cm)) errors.push(`${where}: volume ${v.name} uses missing ConfigMap ${cm}`);
  }
  errors.push(...checkRestricted(where, template));
  for (const c of containers) {
    const w = `${where} container ${c.name}`;
    checkContainer(w, c, spec, errors);
    checkLabelRefs(w, c, labels, errors);
    const paths = new Set();
    for (const m of c.volumeMounts ?? []) {
      if (!volumes.has(m.name)) errors.push(`${w}: mounts undefined volume ${m.name}`);
      if (paths.has(m.mountPath)) errors.push(`${w}: two mounts at ${m.mountPath}`);
      paths.add(m.mountPath);
    }
    for (const from of c.envFrom ?? []) {
      const cm = from.configMapRef?.name;
      if (cm && !index.configMaps.has(cm)) errors.push(`${w}: envFrom missing ConfigMap ${cm}`);
    }
    for (const e of c.env ?? []) {
      const cm = e.valueFrom?.configMapKeyRef;
      if (cm && !index.configMaps.get(cm.name)?.data?.[cm.key]) errors.push(`${w}: env ${e.name} refers to missing ConfigMap key ${cm.name}/${cm.key}`);
    }
  }
  const sa = spec.serviceAccountName;
  if (sa && !index.serviceAccounts.has(sa)) errors.push(`${where}: service account ${sa} is not defined`);
  if (owner.kind === "Job" && !["OnFailure", "Never"].includes(spec.restartPolicy)) {
    errors.push(`${where}: a Job's restartPolicy must be OnFailure or Never`);
  }
  if (owner.kind !== "Job") {
    const sel = owner.spec?.selector?.matchLabels ?? {};
    if (!Object.keys(sel).length) errors.push(`${where}: selector.matchLabels is empty`);
    for (const [k, v] of Object.entries(sel)) {
      if (labels[k] !== v) errors.push(`${where}: selector ${k}=${v} does not match the pod template`);
    }
  }
  if (labels["agentckpt.io/sidecar"] === "true") {
    checkNativeSidecar(where, spec, index.configMaps, errors);
    if (owner.kind === "Deployment" && (owner.spec.replicas !== 1 || owner.spec.strategy?.type !== "Recreate")) {
      errors.push(`${where}: an agent Deployment needs replicas 1 and the Recreate strategy (one writer per agent)`);
    }
  }
}

function selects(selector, labels) {
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

function checkPodMonitor(pm, templates, errors) {
  const matched = templates.filter(({ template }) => selects(pm.spec?.selector, template.metadata?.labels ?? {}));
  if (!matched.length) return errors.push(`${name(pm)}: selects no pod template`);
  for (const ep of pm.spec?.podMetricsEndpoints ?? []) {
    for (const { owner, template } of matched) {
      const all = [...(template.spec?.initContainers ?? []), ...(template.spec?.containers ?? [])];
      if (!all.some((c) => (c.ports ?? []).some((p) => p.name === ep.port))) {
        errors.push(`${name(pm)}: port ${ep.port} is not a named port of ${name(owner)}`);
      }
    }
  }
}

function checkPrometheusRule(rule, errors) {
  for (const g of rule.spec?.groups ?? []) {
    for (const r of g.rules ?? []) {
      const label = `${name(rule)} ${r.alert ?? r.record}`;
      let depth = 0;
      for (const ch of r.expr ?? "") {
        depth += ch === "(" ? 1 : ch === ")" ? -1 : 0;
        if (depth < 0) break;
      }
      if (depth !== 0) errors.push(`${label}: unbalanced parentheses in expr`);
      if (r.for !== undefined && !/^(\d+(ms|s|m|h|d|w|y))+$/.test(r.for)) errors.push(`${label}: bad duration ${r.for}`);
    }
  }
}

// Checks a set of rendered objects together (references between them resolve).
export async function checkObjects(objects) {
  const errors = [];
  const seen = new Set();
  for (const obj of objects) {
    errors.push(...(await validateSchema(obj)));
    const key = `${obj.kind}/${obj.metadata?.namespace ?? ""}/${obj.metadata?.name}`;
    if (seen.has(key)) errors.push(`${name(obj)}: defined twice`);
    seen.add(key);
  }
  const byKind = (kind) => new Map(objects.filter((o) => o.kind === kind).map((o) => [o.metadata?.name, o]));
  const index = { configMaps: byKind("ConfigMap"), pvcs: byKind("PersistentVolumeClaim"), serviceAccounts: byKind("ServiceAccount") };
  const templates = podTemplates(objects);
  for (const { owner, template } of templates) checkPodTemplate(owner, template, index, errors);
  for (const pm of objects.filter((o) => o.kind === "PodMonitor")) checkPodMonitor(pm, templates, errors);
  for (const rule of objects.filter((o) => o.kind === "PrometheusRule")) checkPrometheusRule(rule, errors);
  return errors;
}

// Renders and checks one kustomization directory; returns {objects, errors}.
export async function checkKustomization(dir) {
  const { objects, errors } = render(dir);
  if (errors.length) return { objects, errors };
  if (!objects.length) return { objects, errors: [`${dir}: renders no objects`] };
  return { objects, errors: await checkObjects(objects) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let failed = false;
  for (const dir of process.argv.slice(2)) {
    const { objects, errors } = await checkKustomization(dir);
    for (const e of errors) console.error(`${dir}: ${e}`);
    console.log(`${dir}: ${objects.length} objects, ${errors.length} problems`);
    failed ||= errors.length > 0;
  }
  process.exit(failed ? 1 : 0);
}
