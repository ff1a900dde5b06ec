#!/usr/bin/env bash
# Installs the pinned packages of clients/typescript (npm_ci_if_stale.sh) and builds its dist/
# with tsc whenever a source or package.json is newer than the build; nothing when it is current.
#   build_ts_client.sh
# Output goes to stderr (callers keep stdout for their results). Not serialised: callers that may
# run at once hold a lock around it (tests/sdk/run_node_test.sh does).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
client=$(cd "$here/../../clients/typescript" && pwd)
"$here/npm_ci_if_stale.sh" "$client"
if [[ ! -f $client/dist/index.js || -n $(find "$client/src" "$client/package.json" -newer "$client/dist/index.js" -print -quit) ]]; then
  (cd "$client" && npx tsc -p tsconfig.json) >&2
fi
