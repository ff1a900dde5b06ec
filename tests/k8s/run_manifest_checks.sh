#!/usr/bin/env bash
# Offline checks of the Kubernetes manifests, run with node's test runner:
#   run_manifest_checks.sh           validate/manifests.test.mjs: rendered with kubectl kustomize,
#                                    validated against the schemas and Pod Security "restricted"
#   run_manifest_checks.sh rules     rules/check-rules.test.mjs: the PrometheusRule through promtool
# Installs the pinned packages from package-lock.json first when they are missing or out of date;
# needs node, npm and the tool of the check (kubectl with its built-in kustomize, or promtool from
# Debian's prometheus package).
set -euo pipefail
cd "$(dirname "$0")"
case ${1:-manifests} in
  manifests) name=k8s_manifests tool=kubectl dir=validate/
    why="kubectl (with its built-in kustomize) is not installed" ;;
  rules) name=prometheus_rules tool=promtool dir=rules/
    why="promtool (Debian package prometheus) is not installed" ;;
  *) echo "usage: $0 [manifests|rules]" >&2; exit 2 ;;
esac
# kubectl is not packaged by Debian in a version with kustomize; without the tool the test is
# reported as skipped (ctest SKIP_RETURN_CODE 77), never as passed.
if ! command -v "$tool" >/dev/null 2>&1; then
  echo "$name: SKIPPED: $why"
  exit 77
fi
../support/npm_ci_if_stale.sh .
exec node --test "$dir"
