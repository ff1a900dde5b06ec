#!/usr/bin/env bash
# Runs console_browser.mjs with the given config file, installing the pinned npm packages
# (puppeteer-core; package-lock.json) first when node_modules is missing or older than the lock
# file. The browser is Debian's chromium (scripts/setup installs it); nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")"
for tool in node npm /usr/bin/chromium; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "run_browser.sh: $tool is not installed (scripts/setup installs it)" >&2
    exit 3
  fi
done
../support/npm_ci_if_stale.sh .
exec node console_browser.mjs "$@"
