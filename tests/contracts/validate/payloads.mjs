// Validates captured NATS payloads against docs/schemas/.
//
// Usage: node payloads.mjs MANIFEST.json
// MANIFEST is a JSON array of {label, schema, payload, expect}: schema names a file under
// docs/schemas/ without ".schema.json", payload is the message text as received (an empty
// message counts as {} as the sidecar reads it), expect is "valid" or "invalid". Exits 0 when
// every entry meets its expectation, 1 otherwise (each mismatch printed), 2 on a usage error.
import { readFileSync } from "node:fs";
import { loadPayloadSchemas, describeErrors } from "./schemas.mjs";

const [manifestPath] = process.argv.slice(2);
if (!manifestPath) {
  console.error("usage: node payloads.mjs MANIFEST.json");
  process.exit(2);
}
const entries = JSON.parse(readFileSync(manifestPath, "utf8"));
const { byName } = loadPayloadSchemas();
let failures = 0;
const counts = new Map();
for (const { label, schema, payload, expect } of entries) {
  const validate = byName.get(schema);
  if (!validate) {
    console.error(`FAIL ${label}: no schema docs/schemas/${schema}.schema.json`);
    failures++;
    continue;
  }
  let value;
  let problem = "";
  try {
    value = payload === "" ? {} : JSON.parse(payload);
  } catch (e) {
    problem = `not JSON: ${e.message}`;
  }
  if (!problem && !validate(value)) problem = describeErrors(validate.errors);
  const valid = problem === "";
  if (valid !== (expect === "valid")) {
    failures++;
    console.error(`FAIL ${label} [${schema}] expected ${expect}: ${problem || "it validated"}`);
    console.error(`     payload: ${payload.slice(0, 400)}`);
  } else {
    console.log(`ok   ${label} [${schema}] ${expect}${problem ? " (" + problem.slice(0, 160) + ")" : ""}`);
  }
  counts.set(schema, (counts.get(schema) || 0) + 1);
}
console.log(`${entries.length} payloads, ${failures} failures; per schema: ${JSON.stringify(Object.fromEntries(counts))}`);
process.exit(failures === 0 ? 0 : 1);
