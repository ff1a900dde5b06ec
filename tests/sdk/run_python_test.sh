#!/usr/bin/env bash
# Runs the Python SDK tests (unittest, Debian's python3, standard library only) against the
# agentckpt binary given first: run_python_test.sh AGENTCKPT_BIN [unittest arguments]
set -euo pipefail
export AGENTCKPT_BIN=$(realpath "$1")
shift
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIPPED: python3 is not installed"
  exit 77
fi
cd "$(dirname "$0")/python"
exec python3 -m unittest -v "$@"
