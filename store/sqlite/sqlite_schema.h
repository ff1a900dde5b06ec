// The embedded store's schema, as an ordered list of migrations. Internal to store/.
#pragma once

namespace agentckpt::internal {

struct Migration {
  int version;
  const char* description;
  const char* sql;
};

// Migrations in ascending version order; each runs once, in its own transaction, and is
// recorded in schema_migrations.
const Migration* SqliteMigrations(int* count);

}  // namespace agentckpt::internal
