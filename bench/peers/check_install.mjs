// Exits 0 when the peer packages are installed and load on this Node (better-sqlite3's native
// binding included); scripts/bench-peers reinstalls them otherwise.

import Database from 'better-sqlite3';

await import('@langchain/langgraph-checkpoint-sqlite');
await import('@mastra/libsql');
new Database(':memory:').close();
