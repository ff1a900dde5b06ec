#!/usr/bin/env bash
# Offline checks of the Kubernetes manifests (validate/manifests.test.mjs). Installs the pinned
# validator packages from package-lock.json first when they are missing or out of date; needs
# node, npm and kubectl (for its built-in kustomize).
set -euo pipefail
cd "$(dirname "$0")"
# kubectl is not packaged by Debian in a version with kustomize; without it the test is reported
# as skipped (ctest SKIP_RETURN_CODE 77), never as passed.
if ! command -v kubectl >/dev/null 2>&1; then
  echo "k8s_manifests: SKIPPED: kubectl (with its built-in kustomize) is not installed"
  exit 77
fi
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
exec node --test validate/
