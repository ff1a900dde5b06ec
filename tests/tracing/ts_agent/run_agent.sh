#!/usr/bin/env bash
# Builds (when needed) and runs the traced TypeScript agent: installs the pinned npm packages
# from package-lock.json (npm ci) when node_modules is missing or older than the lock file,
# compiles agent.ts with the pinned TypeScript when dist/ is missing or older than it, then runs
# it. The environment goes to the agent (SIDECAR_URL, OTEL_EXPORTER_OTLP_ENDPOINT, ...).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1; then
  echo "run_agent.sh: node is not installed (scripts/setup installs it)" >&2
  exit 3
fi
# One build at a time when tests run in parallel.
exec 9>.build.lock
flock 9
../../support/npm_ci_if_stale.sh .
if [[ ! -f dist/agent.js || agent.ts -nt dist/agent.js || package-lock.json -nt dist/agent.js ]]; then
  node_modules/.bin/tsc -p . >&2
fi
flock -u 9
exec node dist/agent.js
