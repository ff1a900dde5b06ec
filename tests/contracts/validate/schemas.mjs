// Loads every JSON Schema under docs/schemas/ into one Ajv (draft 2020-12) instance, strict, so
// a schema with an unknown keyword, a missing type or a broken $ref is itself an error.
// (strictRequired is off: a schema may require members that a $ref or allOf defines.)
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const here = dirname(fileURLToPath(import.meta.url));
export const sourceDir = process.env.AGENTCKPT_SOURCE_DIR || resolve(here, "../../..");
export const schemaDir = join(sourceDir, "docs", "schemas");

// A new Ajv with the draft 2020-12 meta-schema, formats, and strict mode on.
export function newAjv() {
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  return ajv;
}

// Returns { ajv, byName } where byName maps "checkpoint-created" to its compiled validator.
export function loadPayloadSchemas() {
  const ajv = newAjv();
  const names = readdirSync(schemaDir).filter((f) => f.endsWith(".schema.json")).sort();
  const ids = new Map();
  for (const file of names) {
    const schema = JSON.parse(readFileSync(join(schemaDir, file), "utf8"));
    ajv.addSchema(schema);
    ids.set(file.replace(/\.schema\.json$/, ""), schema.$id);
  }
  const byName = new Map();
  for (const [name, id] of ids) byName.set(name, ajv.getSchema(id));
  return { ajv, byName };
}

// "path: message" lines for Ajv errors.
export function describeErrors(errors) {
  return (errors || [])
    .map((e) => `${e.instancePath || "/"} ${e.message}${e.params ? " " + JSON.stringify(e.params) : ""}`)
    .join("; ");
}
