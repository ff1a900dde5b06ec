#!/usr/bin/env bash
# Runs a validator script under validate/ with node, installing the pinned npm packages from
# package-lock.json first when node_modules is missing or older than the lock file.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1; then
  echo "run_node.sh: node is not installed (scripts/setup installs it)" >&2
  exit 3
fi
../support/npm_ci_if_stale.sh .
exec node "$@"
