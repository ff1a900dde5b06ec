#!/usr/bin/env bash
# Installs a package directory's pinned npm packages: `npm ci` from DIR/package-lock.json when
# DIR/node_modules is missing or older than the lock file, and nothing otherwise.
#   npm_ci_if_stale.sh DIR
# npm's own output goes to stderr (callers keep stdout for their results). Installs into one
# DIR are serialised with a lock file in DIR, so tests that share a directory may start at once.
# Exit status: npm's when it ran and failed, 0 otherwise.
set -euo pipefail
if [[ $# -ne 1 || ! -f $1/package-lock.json ]]; then
  echo "usage: npm_ci_if_stale.sh DIR (a directory with a package-lock.json)" >&2
  exit 2
fi
cd "$1"
stale() { [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; }
stale || exit 0
exec 8>.npm-ci.lock
flock 8
# Another process may have installed while this one waited for the lock.
stale || exit 0
npm ci --no-audit --no-fund --loglevel=error >&2
