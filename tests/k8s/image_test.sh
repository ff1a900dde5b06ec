#!/usr/bin/env bash
# The container image (scripts/image) at work: its `agentckpt run`, as the image's own non-root
# user on a read-only root filesystem (no tmpfs on /tmp either, as Kubernetes'
# readOnlyRootFilesystem), with a data directory owned by UID 10001 (what fsGroup gives a pod),
# against a nats-server -js on the host's loopback. One checkpoint of a known context, SIGKILL of
# the container, a new container on the same data directory: its start-up restore must load that
# checkpoint, and POST /v1/restore must return it with the context in the prompt.
#
# Skipped (exit 77) when podman cannot run a container here or the image is absent, unless
# AGENTCKPT_IMAGE_REQUIRED=1 (scripts/image sets it), which turns both into failures.
# Environment: AGENTCKPT_IMAGE (default localhost/agentckpt:dev), PODMAN_RUNTIME (default runc).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
IMAGE=${AGENTCKPT_IMAGE:-localhost/agentckpt:dev}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$HERE/containers.conf}
podman() { command podman --runtime "${PODMAN_RUNTIME:-runc}" "$@"; }

skip() {
  if [[ ${AGENTCKPT_IMAGE_REQUIRED:-0} == 1 ]]; then
    echo "image_test: FAILED: $*" >&2
    exit 1
  fi
  echo "image_test: SKIPPED: $*"
  exit 77
}
command -v podman >/dev/null 2>&1 || skip "podman is not installed (scripts/setup --image)"
[[ $(id -u) -eq 0 ]] || skip "needs root (podman's root storage, where scripts/image builds)"
podman image exists "$IMAGE" 2>/dev/null || skip "image $IMAGE not built (scripts/image)"

WORK=$(mktemp -d /tmp/agentckpt-image-test.XXXXXX)
NATS_PID="" CONTAINERS=()
cleanup() {
  local rc=$?
  for c in "${CONTAINERS[@]}"; do
    if ((rc != 0)); then
      echo "--- log of container $c" >&2
      podman logs "$c" 2>&1 | tail -40 >&2 || true
    fi
    podman rm -f "$c" >/dev/null 2>&1 || true
  done
  if [[ -n $NATS_PID ]]; then kill "$NATS_PID" 2>/dev/null || true; wait "$NATS_PID" 2>/dev/null || true; fi
  if ((rc != 0)); then
    echo "--- nats-server log" >&2
    tail -20 "$WORK/nats.log" >&2 || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "image_test: FAILED: $*" >&2; exit 1; }

free_port() {
  local p
  for p in $(shuf -i 20000-60000 -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  fail "no free port"
}
# poll URL EXPECTED_REGEX: up to 60 s (the machine may be busy; a pass returns at once).
poll() {
  local body
  for _ in $(seq 1 600); do
    body=$(curl -s --max-time 2 "$1" 2>/dev/null || true)
    if [[ $body =~ $2 ]]; then echo "$body"; return 0; fi
    sleep 0.1
  done
  fail "$1 never answered /$2/ (last: ${body:-nothing})"
}

# nats-server -js on a free loopback port; retried on another port if it cannot listen.
for attempt in 1 2 3 4 5; do
  NATS_PORT=$(free_port)
  nats-server -js -a 127.0.0.1 -p "$NATS_PORT" -sd "$WORK/jetstream" >"$WORK/nats.log" 2>&1 &
  NATS_PID=$!
  for _ in $(seq 1 300); do
    grep -q 'Server is ready' "$WORK/nats.log" && break
    kill -0 "$NATS_PID" 2>/dev/null || break
    sleep 0.1
  done
  grep -q 'Server is ready' "$WORK/nats.log" && break
  kill "$NATS_PID" 2>/dev/null || true
  wait "$NATS_PID" 2>/dev/null || true
  NATS_PID=""
done
[[ -n $NATS_PID ]] || fail "nats-server did not start (see its log)"
mkdir -m 0750 "$WORK/data"
chown 10001:10001 "$WORK/data"

# start NAME: the sidecar in a new container, as the image's user, root filesystem read-only,
# serving on a free loopback port ($API), and waits until it is ready. Another process on the
# machine may take the port between the pick and the bind: the sidecar then exits naming it,
# and the start is retried on another port (up to 5 times).
start() {
  local attempt
  for attempt in 1 2 3 4 5; do
    HTTP_PORT=$(free_port)
    API=http://127.0.0.1:$HTTP_PORT
    CONTAINERS+=("$1-$attempt")
    podman run -d --name "$1-$attempt" --network host --read-only --read-only-tmpfs=false \
      --cap-drop all --security-opt no-new-privileges \
      -v "$WORK/data:/var/lib/agentckpt" \
      -e AGENT_ID=agent-image -e POD_NAME="$1" -e CKPT_LEASE_TTL_S=2 \
      -e NATS_URL="nats://127.0.0.1:$NATS_PORT" -e CKPT_HTTP_ADDR="127.0.0.1:$HTTP_PORT" \
      "$IMAGE" >/dev/null
    CURRENT=$1-$attempt
    if wait_ready "$CURRENT"; then return 0; fi
    podman logs "$CURRENT" 2>&1 | grep -q 'Address already in use' ||
      fail "$CURRENT did not become ready"
  done
  fail "no free HTTP port after 5 attempts"
}
# wait_ready CONTAINER: 0 once /readyz says ready (within 60 s), 1 if the container exited.
wait_ready() {
  local i
  for i in $(seq 1 600); do
    if [[ $(curl -s --max-time 2 "$API/readyz" 2>/dev/null || true) == *'"ready":true'* ]]; then
      return 0
    fi
    if ((i % 10 == 0)) &&
      [[ $(podman inspect --format '{{.State.Running}}' "$1" 2>/dev/null) != true ]]; then
      return 1
    fi
    sleep 0.1
  done
  fail "$1: $API/readyz not ready within 60 s"
}

start "agentckpt-image-test-1-$$"
first=$CURRENT
user=$(podman exec "$first" id -u)
[[ $user == 10001 ]] || fail "the sidecar runs as UID $user, not 10001"
[[ $(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$first") == true ]] ||
  fail "the root filesystem is not read-only"
if podman exec "$first" sh -c 'touch /usr/local/bin/x || touch /tmp/x' 2>/dev/null; then
  fail "the root filesystem is writable"
fi

curl -sf -X PUT "$API/v1/context" -d '{"activeTask":{"taskId":"task-image","title":"Image smoke test",
  "phase":"executing","progress":40,"startedAt":"2026-11-03T01:40:00.000Z"},
  "contextSummary":{"systemPromptHash":"","gatheringResults":"gathered in a container",
  "planOutline":["build","run"],"completedSteps":1,"draftContent":"draft","toolCallLog":[]}}' \
  >/dev/null || fail "PUT /v1/context"
created=$(curl -s -w ' %{http_code}' -X POST "$API/v1/checkpoints" -d '{"trigger":"manual"}')
[[ $created == *' 201' ]] || fail "POST /v1/checkpoints: $created"
id=$(sed -n 's/.*"checkpointId":"\([^"]*\)".*/\1/p' <<<"$created")
[[ -n $id ]] || fail "no checkpointId in $created"
echo "image_test: checkpoint $id written by $first (UID $user, read-only root)"

podman kill --signal KILL "$first" >/dev/null
podman wait "$first" >/dev/null || true
start "agentckpt-image-test-2-$$"
second=$CURRENT
startup=$(poll "$API/v1/restoration" '"checkpointId"')
[[ $startup == *"\"checkpointId\":\"$id\""* ]] || fail "start-up restore did not load $id: $startup"
restored=$(curl -s -w ' %{http_code}' -X POST "$API/v1/restore")
[[ $restored == *' 200' ]] || fail "POST /v1/restore: $restored"
[[ $restored == *"\"checkpointId\":\"$id\""* ]] || fail "POST /v1/restore did not load $id"
[[ $restored == *"Image smoke test"* ]] || fail "the restoration prompt lacks the task"
echo "image_test: restored $id in $second after SIGKILL of $first: ok"
