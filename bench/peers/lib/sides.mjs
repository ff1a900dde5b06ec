// The sides of the comparison: how to run each one and what it does per operation.

import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

export const SIDES = {
  agentckpt: {
    label: 'agentckpt (C++, SQLite)',
    write:
      'Seal: normalize, canonical JSON, SHA-256 of the canonical form; then one SQLite ' +
      'transaction (BEGIN IMMEDIATE): fencing check against the agent\'s last sequence (a ' +
      'second writer at the same or a lower sequence gets a conflict), INSERT of the canonical ' +
      'document with its hash, the agent\'s sequence record updated, retention pruning to the ' +
      'newest 48; COMMIT fsynced (WAL, synchronous=FULL).',
    load:
      'Latest verified: newest sequence by index, read the row, SHA-256 of the stored canonical ' +
      'bytes compared with the stored hash, document parsed and checked against its row ' +
      '(a damaged row is skipped and the previous one returned).',
  },
  langgraph: {
    label: 'LangGraph SqliteSaver',
    script: path.join(HERE, 'langgraph.mjs'),
    write:
      'JsonPlusSerializer: JSON of the checkpoint (its channel_values holding the document) and ' +
      'of the metadata; one autocommit INSERT OR REPLACE keyed by (thread, namespace, ' +
      'checkpoint id), fsynced (WAL, synchronous=FULL set on the saver\'s database). No ' +
      'integrity hash, no fencing (a second writer replaces or interleaves), no retention ' +
      '(every checkpoint is kept).',
    load:
      'getTuple: newest checkpoint of the thread by id (with its pending-writes subqueries), ' +
      'JSON parse of checkpoint and metadata. No integrity check.',
  },
  mastra: {
    label: 'Mastra LibSQLStore',
    script: path.join(HERE, 'mastra.mjs'),
    write:
      'persistWorkflowSnapshot: JSON of the run state (a step output holding the document); ' +
      'one autocommit INSERT ... ON CONFLICT DO UPDATE (upsert) of the run\'s single snapshot ' +
      'row, converted to SQLite JSONB, fsynced (WAL, synchronous=FULL set after init). No ' +
      'integrity hash, no fencing, no history: each write overwrites the previous snapshot.',
    load:
      'loadWorkflowSnapshot: the run\'s row by (workflow name, run id), JSONB converted back ' +
      'to JSON text by SQLite, JSON parse. No ' +
      'integrity check.',
  },
};

export const PEERS = ['langgraph', 'mastra'];
