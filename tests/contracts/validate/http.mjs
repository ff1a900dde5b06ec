// Checks docs/openapi.yaml and real HTTP exchanges with the sidecar against it.
//
// Usage: node http.mjs EXCHANGES.json
// EXCHANGES is a JSON array of {label, method, path, status, headers, body, expect}: one request
// made to the running sidecar (path with its query) and the answer it got (headers: name ->
// value, body: the text), expect "valid" or "invalid". An exchange is valid when the document
// lists the path and method, lists the status among the operation's responses, the body has a
// documented media type and matches its schema, and every required response header is present
// and matches its schema. The document itself must be valid OpenAPI, and every operation it
// lists must be exercised by at least one valid exchange. Exits 0 when all holds and every
// exchange meets its expectation, 1 otherwise (each problem printed), 2 on a usage error.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { Validator } from "@seriousme/openapi-schema-validator";
import { loadPayloadSchemas, describeErrors, sourceDir, schemaDir } from "./schemas.mjs";

const kBase = "https://agentckpt.example/openapi.yaml";
const kMethods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

const [exchangesPath] = process.argv.slice(2);
if (!exchangesPath) {
  console.error("usage: node http.mjs EXCHANGES.json");
  process.exit(2);
}
// AGENTCKPT_OPENAPI names another document (the tests check that a broken one is rejected).
const openapiPath = process.env.AGENTCKPT_OPENAPI || join(sourceDir, "docs", "openapi.yaml");
let problems = 0;
const fail = (msg) => {
  problems++;
  console.error(`FAIL ${msg}`);
};

// 1. The document is valid OpenAPI (against the official schema of its version, offline).
// External $refs name docs/schemas/ files relative to the document; they are registered under
// those names, so every $ref must resolve.
const validator = new Validator();
for (const file of readdirSync(schemaDir).filter((f) => f.endsWith(".schema.json"))) {
  // The files refer to each other by bare file name; the validator does not resolve relative
  // references, so each file is registered under both names.
  await validator.addSpecRef(join(schemaDir, file), `schemas/${file}`);
  await validator.addSpecRef(join(schemaDir, file), file);
}
const docCheck = await validator.validate(openapiPath);
if (!docCheck.valid) {
  fail(`docs/openapi.yaml is not valid OpenAPI ${validator.version}: ${JSON.stringify(docCheck.errors).slice(0, 2000)}`);
} else {
  console.log(`ok   docs/openapi.yaml is valid OpenAPI ${validator.version}`);
}
const doc = parseYaml(readFileSync(openapiPath, "utf8"));

// 2. Schemas: docs/schemas/ plus the document's components, with every $ref made absolute.
const { ajv } = loadPayloadSchemas();
function absolutize(node) {
  if (Array.isArray(node)) return node.map(absolutize);
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "$ref" && typeof v === "string") {
      const ref = v.startsWith("#/components/schemas/") ? "#/$defs/" + v.slice(21) : v;
      out[k] = new URL(ref, kBase).href;
    } else {
      out[k] = absolutize(v);
    }
  }
  return out;
}
ajv.addSchema({ $id: kBase, $defs: absolutize(doc.components?.schemas || {}) });

function deref(obj) {
  let seen = 0;
  while (obj && obj.$ref && seen++ < 10) {
    const parts = obj.$ref.replace(/^#\//, "").split("/");
    obj = parts.reduce((o, p) => (o ? o[p.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined), doc);
  }
  return obj;
}

const compiled = new Map();
function validatorFor(schema) {
  if (!compiled.has(schema)) compiled.set(schema, ajv.compile(absolutize(schema)));
  return compiled.get(schema);
}

// Path templates as regular expressions ("/v1/checkpoints/{checkpointId}").
const routes = Object.keys(doc.paths || {}).map((template) => ({
  template,
  re: new RegExp("^" + template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}/]+\}/g, "[^/]+") + "$"),
}));
function findPath(path) {
  // A literal template wins over one with parameters.
  const hits = routes.filter((r) => r.re.test(path));
  hits.sort((a, b) => (a.template.includes("{") ? 1 : 0) - (b.template.includes("{") ? 1 : 0));
  return hits[0]?.template;
}

function checkExchange(ex) {
  const path = ex.path.split("?")[0];
  const template = findPath(path);
  if (!template) return `path ${path} is not in the document`;
  const op = doc.paths[template][ex.method.toLowerCase()];
  if (!op) return `${ex.method} ${template} is not in the document`;
  const response = deref(op.responses?.[String(ex.status)]);
  if (!response) {
    return `${ex.method} ${template} answered ${ex.status}, which the document does not list (${Object.keys(op.responses || {}).join(", ")})`;
  }
  const headers = Object.fromEntries(Object.entries(ex.headers || {}).map(([k, v]) => [k.toLowerCase(), v]));
  for (const [name, h0] of Object.entries(response.headers || {})) {
    const h = deref(h0);
    const value = headers[name.toLowerCase()];
    if (value === undefined) {
      if (h.required) return `required header ${name} is missing`;
      continue;
    }
    if (h.schema) {
      const v = validatorFor(h.schema);
      if (!v(value)) return `header ${name}: "${value}" ${describeErrors(v.errors)}`;
    }
  }
  const content = response.content || {};
  if (Object.keys(content).length === 0) {
    return ex.body === "" ? "" : `a body where the document has none: ${ex.body.slice(0, 200)}`;
  }
  const mediaType = (headers["content-type"] || "").split(";")[0].trim().toLowerCase();
  const media = content[mediaType];
  if (!media) return `content type "${mediaType}" is not documented (${Object.keys(content).join(", ")})`;
  let value = ex.body;
  if (mediaType.endsWith("json")) {
    try {
      value = JSON.parse(ex.body);
    } catch (e) {
      return `body is not JSON: ${e.message}`;
    }
  }
  if (media.schema) {
    const v = validatorFor(media.schema);
    if (!v(value)) return `body: ${describeErrors(v.errors)}`;
  }
  return "";
}

// 3. Every exchange against the document.
const exchanges = JSON.parse(readFileSync(exchangesPath, "utf8"));
const exercised = new Set();
const codes = new Set();
for (const ex of exchanges) {
  const problem = checkExchange(ex);
  const valid = problem === "";
  const what = `${ex.label}: ${ex.method} ${ex.path} -> ${ex.status}`;
  if (valid !== (ex.expect === "valid")) {
    fail(`${what}: expected ${ex.expect}: ${problem || "it matched the document"}`);
    if (!valid) console.error(`     body: ${String(ex.body).slice(0, 400)}`);
    continue;
  }
  console.log(`ok   ${what} ${ex.expect}${problem ? " (" + problem.slice(0, 160) + ")" : ""}`);
  if (valid) {
    const template = findPath(ex.path.split("?")[0]);
    exercised.add(`${ex.method.toUpperCase()} ${template}`);
    codes.add(`${ex.method.toUpperCase()} ${template} ${ex.status}`);
  }
}

// 4. Every documented operation was called; documented codes not seen are listed.
const notSeen = [];
for (const [template, item] of Object.entries(doc.paths || {})) {
  for (const m of kMethods) {
    if (!item[m]) continue;
    const key = `${m.toUpperCase()} ${template}`;
    if (!exercised.has(key)) fail(`operation ${key} was not exercised by any valid exchange`);
    for (const code of Object.keys(item[m].responses || {})) {
      if (!codes.has(`${key} ${code}`)) notSeen.push(`${key} ${code}`);
    }
  }
}
console.log(`${exchanges.length} exchanges, ${exercised.size} operations exercised, ${problems} problems`);
console.log(`documented responses not observed: ${notSeen.join("; ") || "none"}`);
process.exit(problems === 0 ? 0 : 1);
