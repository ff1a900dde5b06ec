#!/usr/bin/env bash
# Offline checks of the Kubernetes manifests (validate/manifests.test.mjs). Installs the pinned
# validator packages from package-lock.json first when they are missing or out of date; needs
# node, npm and kubectl (for its built-in kustomize).
set -euo pipefail
cd "$(dirname "$0")"
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
exec node --test validate/
