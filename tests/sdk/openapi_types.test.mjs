// The TypeScript client's types and operation table checked against docs/openapi.yaml and the
// docs/schemas/ files it refers to: every operation has a client method with its method and
// path, and each interface of clients/typescript/src/types.ts has exactly the schema's members,
// optional exactly where the schema does not require them, with the schema's string enums.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import ts from "typescript";
import { AgentCkptClient, OPERATIONS } from "@agentckpt/client";
import { sourceDir } from "./harness.mjs";

const docsDir = join(sourceDir, "docs");
const openapi = parseYaml(readFileSync(join(docsDir, "openapi.yaml"), "utf8"));
const files = new Map();
function schemaFile(name) {
  if (!files.has(name)) files.set(name, JSON.parse(readFileSync(join(docsDir, "schemas", name), "utf8")));
  return files.get(name);
}

// Resolves a $ref relative to the document `base` ("openapi" or a schema file name).
function resolveRef(ref, base) {
  const [file, pointer = ""] = ref.split("#");
  const target = file ? file.replace(/^schemas\//, "") : base;
  const root = target === "openapi" ? openapi : schemaFile(target);
  const node = pointer
    .split("/")
    .filter(Boolean)
    .reduce((o, p) => o?.[p.replace(/~1/g, "/").replace(/~0/g, "~")], root);
  assert.ok(node, `unresolved $ref ${ref} from ${base}`);
  return { node, base: target };
}

// The members of an object schema: its properties and required, merged with those of a $ref it
// extends (the "journalAck" style) and of oneOf branches that are objects.
function members({ node, base }) {
  const props = new Map();
  const required = new Set(node.required ?? []);
  if (node.$ref) {
    const inner = members(resolveRef(node.$ref, base));
    for (const [k, v] of inner.props) props.set(k, v);
    for (const r of inner.required) required.add(r);
  }
  for (const [k, v] of Object.entries(node.properties ?? {})) props.set(k, { node: v, base });
  return { props, required };
}

// The string values a member schema allows (enum / const, through $ref and nullable oneOf).
function stringValues({ node, base }) {
  if (node.$ref && !node.enum && node.const === undefined) return stringValues(resolveRef(node.$ref, base));
  if (typeof node.const === "string") return [node.const];
  if (Array.isArray(node.enum) && node.enum.every((v) => typeof v === "string")) return node.enum;
  return null;
}

const at = (ref, base = "openapi") => resolveRef(ref, base);
const content = (op, status) => {
  const r = op.responses[status];
  const resp = r.$ref ? resolveRef(r.$ref, "openapi").node : r;
  return { node: resp.content["application/json"].schema, base: "openapi" };
};
const P = openapi.paths;

// interface -> [schema, options]; exact: the same members (open interfaces list a subset).
const expectations = {
  Context: [at("#/components/schemas/Context")],
  ContextInput: [at("#/components/schemas/ContextInput")],
  ContextUpdate: [at("#/components/schemas/ContextUpdate")],
  ToolCallEntry: [at("#/components/schemas/ToolCallInput")],
  ToolCallAppended: [content(P["/v1/tool-calls"].post, "201")],
  ActiveTask: [at("checkpoint.schema.json#/$defs/activeTask")],
  ContextSummary: [at("checkpoint.schema.json#/$defs/contextSummary")],
  Workspace: [at("checkpoint.schema.json#/$defs/workspace")],
  BeginRequest: [at("tool-calls.schema.json#/$defs/beginRequest")],
  BeginStarted: [at("tool-calls.schema.json#/$defs/beginStarted")],
  BeginReplayed: [at("tool-calls.schema.json#/$defs/beginReplayed")],
  ReplayedResult: [at("tool-calls.schema.json#/$defs/beginReplayed/properties/result")],
  OutcomeUnknownCall: [at("tool-calls.schema.json#/$defs/outcomeUnknown"), { without: ["error"] }],
  EndRequest: [at("tool-calls.schema.json#/$defs/endRequest")],
  EndReply: [at("tool-calls.schema.json#/$defs/endReply")],
  ReconcileRequest: [at("tool-calls.schema.json#/$defs/reconcileRequest")],
  ReconcileReply: [at("tool-calls.schema.json#/$defs/reconcileReply")],
  LedgerCall: [at("checkpoint.schema.json#/$defs/ledgerCall")],
  LedgerResult: [at("checkpoint.schema.json#/$defs/ledgerResult")],
  ToolCallList: [at("tool-calls.schema.json#/$defs/list")],
  CheckpointCreateRequest: [at("checkpoint-create-request.schema.json#")],
  CheckpointCreated: [at("checkpoint-created.schema.json#")],
  CheckpointList: [at("#/components/schemas/CheckpointList")],
  CheckpointInfo: [at("#/components/schemas/CheckpointList/properties/checkpoints/items")],
  Gate: [at("gate.schema.json#")],
  GateDecision: [at("gate.schema.json#/$defs/decision")],
  GateRequest: [at("#/components/schemas/GateRequest")],
  GateCreated: [at("#/components/responses/GateCreated/content/application~1json/schema")],
  GateList: [content(P["/v1/gates"].get, "200")],
  // Over HTTP the gateId comes from the path: optional in the body.
  GateResolveRequest: [at("gate-resolve-request.schema.json#"), { optional: ["gateId"] }],
  Readiness: [at("#/components/schemas/Readiness")],
  Lease: [at("#/components/schemas/Readiness/properties/lease")],
  Health: [content(P["/healthz"].get, "200")],
  RestoreResult: [at("restore-result.schema.json#"), { open: true }],
  StoredCheckpoint: [at("checkpoint.schema.json#/$defs/v1"), { open: true }],
};

test("every operation of docs/openapi.yaml has a client method with its method and path", () => {
  const documented = {};
  for (const [path, item] of Object.entries(P)) {
    for (const [method, op] of Object.entries(item)) {
      if (op && typeof op === "object" && op.operationId) {
        documented[op.operationId] = { method: method.toUpperCase(), path };
      }
    }
  }
  assert.deepEqual(Object.keys(OPERATIONS).sort(), Object.keys(documented).sort());
  for (const [id, op] of Object.entries(OPERATIONS)) {
    assert.deepEqual({ method: op.method, path: op.path }, documented[id], id);
    assert.equal(typeof AgentCkptClient.prototype[op.clientMethod], "function", op.clientMethod);
  }
});

test("the client's interfaces match the schemas", () => {
  const file = join(sourceDir, "clients", "typescript", "src", "types.ts");
  const program = ts.createProgram([file], { strict: true, target: ts.ScriptTarget.ES2022 });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const declared = new Map();
  ts.forEachChild(source, (n) => {
    if (ts.isInterfaceDeclaration(n)) declared.set(n.name.text, checker.getTypeAtLocation(n));
  });
  const problems = [];
  for (const [name, [schema, opts = {}]] of Object.entries(expectations)) {
    const type = declared.get(name);
    if (!type) {
      problems.push(`${name}: not declared`);
      continue;
    }
    const { props, required } = members(schema);
    for (const w of opts.without ?? []) props.delete(w);
    const tsProps = new Map(
      checker
        .getPropertiesOfType(type)
        .map((p) => [p.name, p]),
    );
    for (const [k, p] of tsProps) {
      if (!props.has(k)) {
        problems.push(`${name}.${k}: not in the schema`);
        continue;
      }
      const optional = (p.flags & ts.SymbolFlags.Optional) !== 0;
      const shouldBe = !required.has(k) || (opts.optional ?? []).includes(k);
      if (optional !== shouldBe) {
        problems.push(`${name}.${k}: ${optional ? "optional" : "required"} in the client, ${shouldBe ? "optional" : "required"} in the schema`);
      }
      const allowed = stringValues(props.get(k));
      const pt = checker.getNonNullableType(checker.getTypeOfSymbol(p));
      const literals = (pt.isUnion() ? pt.types : [pt]).filter((t) => t.isStringLiteral()).map((t) => t.value);
      if (allowed && literals.length) {
        if ([...literals].sort().join() !== [...allowed].sort().join()) {
          problems.push(`${name}.${k}: values ${literals} in the client, ${allowed} in the schema`);
        }
      } else if (allowed && !literals.length && !(pt.flags & ts.TypeFlags.String)) {
        problems.push(`${name}.${k}: the schema allows ${allowed}, the client type is ${checker.typeToString(pt)}`);
      }
    }
    if (!opts.open) {
      for (const k of props.keys()) if (!tsProps.has(k)) problems.push(`${name}.${k}: missing in the client`);
    } else {
      for (const k of required) if (!tsProps.has(k) && props.has(k)) {
        // Open interfaces (index signature) need not list every member.
      }
    }
  }
  assert.deepEqual(problems, []);
});
