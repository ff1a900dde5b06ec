#!/usr/bin/env bash
# Runs one node test of the SDK against the agentckpt binary given first:
#   run_node_test.sh AGENTCKPT_BIN DIR COMMAND...
# Builds clients/typescript (npm ci from its lockfile, then tsc) and installs DIR's packages with
# `npm ci` from DIR's package-lock.json when node_modules is missing or older than the lock file,
# then runs COMMAND in DIR (relative to tests/sdk) with AGENTCKPT_BIN set. Installs are serialised
# with a lock, so tests may run in parallel. Exit 77 (skipped) only when node or npm is missing.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: run_node_test.sh AGENTCKPT_BIN DIR COMMAND..." >&2
  exit 2
fi
export AGENTCKPT_BIN=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
dir=$here/$2
shift 2
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: $tool is not installed (scripts/setup installs it)"
    exit 77
  fi
done
install() { "$here/../support/npm_ci_if_stale.sh" "$1"; }
(
  flock 9
  # The client's dist/ is built from src/ whenever a source is newer than the build.
  "$here/../support/build_ts_client.sh"
  install "$dir"
  # SDK_BUILD_ALSO: more package dirs (relative to the repository) to install and build with tsc.
  for extra in ${SDK_BUILD_ALSO:-}; do
    install "$here/../../$extra"
    (cd "$here/../../$extra" && npx tsc -p tsconfig.json)
  done
) 9>"$here/.install.lock"
cd "$dir"
exec "$@"
