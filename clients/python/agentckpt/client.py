"""AgentCkptClient: one method per endpoint of the sidecar's local HTTP API (docs/http-api.md),
plus effect() (function, decorator, context manager), gate() and restoration(). Standard
library only (http.client, one kept-alive connection per thread, no proxy: transport.py).
Bodies are plain dicts with the API's field names."""

import functools
import hashlib
import json
import os
import time
import urllib.parse

from .errors import AgentCkptError, RecordedFailureError, error_from_reply
from .transport import ConnectionPerThread, TransportError

_UNSET = object()


def _drop_none(d):
    return {k: v for k, v in d.items() if v is not None}


def args_sha256(*args, **kwargs):
    """SHA-256 hex of the call's arguments as canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps({"args": list(args), "kwargs": kwargs}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class AgentCkptClient:
    """A client of one sidecar. Thread-safe: each thread sends its requests on a kept-alive
    connection of its own. Connects directly: http_proxy/HTTP_PROXY are not used. Usable as a
    context manager; close() (or leaving the `with` block) closes the connections."""

    def __init__(self, base_url=None, token=None, timeout=30.0):
        base = base_url or os.environ.get("AGENTCKPT_URL") or "http://127.0.0.1:8787"
        self.base_url = base.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._transport = ConnectionPerThread(self.base_url)

    def close(self):
        """Closes the client's connections; a later call opens a new one."""
        self._transport.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ---- probes ----

    def health(self):
        return self._call("GET", "/healthz")

    def readiness(self):
        """GET /readyz; a 503 (not ready) is returned, not raised."""
        status, body, text = self._raw("GET", "/readyz")
        if status in (200, 503):
            return body
        raise error_from_reply(status, body, text)

    def metrics(self):
        return self._call("GET", "/metrics", text=True)

    # ---- context ----

    def get_context(self):
        return self._call("GET", "/v1/context")

    def put_context(self, context):
        return self._call("PUT", "/v1/context", context)

    def patch_context(self, patch):
        """An RFC 7386 merge patch: objects merge, None removes a member."""
        return self._call("PATCH", "/v1/context", patch,
                          content_type="application/merge-patch+json")

    def append_tool_call(self, entry):
        return self._call("POST", "/v1/tool-calls", entry)

    # ---- tool-call ledger ----

    def begin_tool_call(self, tool_name, effect, idempotency_key=None, args_sha256=None,
                        input_summary=None):
        """201 {state: started}: run the call; 200 {state: completed, replayed, result}: use the
        result. Raises OutcomeUnknownError on 409 OUTCOME_UNKNOWN."""
        return self._call("POST", "/v1/tool-calls/begin", _drop_none({
            "toolName": tool_name, "effect": effect, "idempotencyKey": idempotency_key,
            "argsSha256": args_sha256, "inputSummary": input_summary}))

    def end_tool_call(self, call_id, success, output_summary=None, duration_ms=None,
                      external_id=None):
        return self._call("POST", f"/v1/tool-calls/{_q(call_id)}/end", _drop_none({
            "success": success, "outputSummary": output_summary, "durationMs": duration_ms,
            "externalId": external_id}))

    def reconcile_tool_call(self, call_id, outcome, output_summary=None, note=None):
        """outcome: succeeded | failed | not_executed (frees the key)."""
        return self._call("POST", f"/v1/tool-calls/{_q(call_id)}/reconcile", _drop_none({
            "outcome": outcome, "outputSummary": output_summary, "note": note}))

    def list_tool_calls(self, state=None):
        return self._call("GET", "/v1/tool-calls" + _query(state=state))

    # ---- checkpoints ----

    def create_checkpoint(self, trigger=None, task_id=None):
        return self._call("POST", "/v1/checkpoints",
                          _drop_none({"trigger": trigger, "taskId": task_id}))

    def list_checkpoints(self, limit=None):
        return self._call("GET", "/v1/checkpoints" + _query(limit=limit))

    def get_checkpoint(self, checkpoint_id):
        return self._call("GET", f"/v1/checkpoints/{_q(checkpoint_id)}")

    # ---- restore ----

    def restore(self):
        """POST /v1/restore: a preview restore (never changes the working tree)."""
        return self._call("POST", "/v1/restore")

    def agent_start(self):
        """POST /v1/agent-start: the agent's own start; send the reply's prompt to the model."""
        return self._call("POST", "/v1/agent-start")

    def get_restoration(self):
        """GET /v1/restoration; raises AgentCkptError 404 when no restore has run."""
        return self._call("GET", "/v1/restoration")

    def restoration(self):
        """The last restore's result, or None when none has run (a cold sidecar)."""
        try:
            return self.get_restoration()
        except AgentCkptError as e:
            if e.status == 404:
                return None
            raise

    # ---- gates ----

    def request_gate(self, reason, request=_UNSET, gate_id=None, tool_call_id=None,
                     args_sha256=None, expires_at=None, ttl_seconds=None):
        body = _drop_none({"gateId": gate_id, "reason": reason, "toolCallId": tool_call_id,
                           "argsSha256": args_sha256, "expiresAt": expires_at,
                           "ttlSeconds": ttl_seconds})
        if request is not _UNSET:
            body["request"] = request
        return self._call("POST", "/v1/gates", body)

    def list_gates(self, state=None):
        return self._call("GET", "/v1/gates" + _query(state=state))

    def get_gate(self, gate_id, wait_seconds=None):
        """The gate; with wait_seconds (0-300) a pending gate is waited on."""
        return self._call("GET", f"/v1/gates/{_q(gate_id)}" + _query(waitSeconds=wait_seconds),
                          timeout=self.timeout + (wait_seconds or 0))

    def resolve_gate(self, gate_id, decision, by, response=_UNSET, args_sha256=None):
        body = _drop_none({"decision": decision, "by": by, "argsSha256": args_sha256})
        if response is not _UNSET:
            body["response"] = response
        return self._call("POST", f"/v1/gates/{_q(gate_id)}/resolve", body)

    def consume_gate(self, gate_id):
        return self._call("POST", f"/v1/gates/{_q(gate_id)}/consume", {})

    def gate(self, reason, request=_UNSET, **kwargs):
        """Requests a gate (arguments as request_gate) and returns a GateHandle; its
        decision() blocks until the gate is approved or rejected (expired gates are rejected)."""
        created = self.request_gate(reason, request, **kwargs)
        return GateHandle(self, created)

    # ---- effect ----

    def effect(self, key=None, fn=None, *, effect="write", tool_name=None, input_summary=None,
               args_sha256=None, encode=None, decode=None, external_id=None):
        """Runs a call with side effects at most once per idempotency key.

        - effect(key, fn): begin; a completed key returns its recorded result (decoded from the
          output summary, JSON by default) without calling fn, or raises RecordedFailureError if
          it failed; an open key raises OutcomeUnknownError; otherwise fn() runs and its result,
          or its failure when it raises, is recorded with end.
        - @effect(key) or @effect(): a decorator; key may be a string, a function of the call's
          arguments, or None (the sidecar derives the key from the tool name, the SHA-256 of the
          arguments and the active task).
        - with effect(key) as call: call.replayed says the key has a result (call.result); else
          the block runs the call and sets call.result; leaving the block records it.
        """
        spec = _EffectSpec(self, key, effect, tool_name, input_summary, args_sha256,
                           encode or _json_encode, decode or json.loads, external_id)
        if fn is not None:
            return spec.run(fn)
        return spec

    # ---- transport ----

    def _raw(self, method, path, body=None, content_type="application/json", timeout=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            status, raw = self._transport.request(method, path, data, headers,
                                                  timeout or self.timeout)
        except TransportError as e:
            raise AgentCkptError(0, "UNREACHABLE",
                                 f"{method} {self.base_url}{path}: {e}") from e
        text = raw.decode("utf-8", errors="replace")
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = None
        return status, parsed, text

    def _call(self, method, path, body=None, content_type="application/json", timeout=None,
              text=False):
        status, parsed, raw = self._raw(method, path, body, content_type, timeout)
        if not 200 <= status <= 299:
            raise error_from_reply(status, parsed, raw)
        return raw if text else parsed


class GateHandle:
    """A requested gate: gate_id, gate (as created), decision(), consume()."""

    def __init__(self, client, created):
        self._client = client
        self.gate_id = created["gateId"]
        self.gate = created["gate"]

    def decision(self, wait_seconds=60, timeout=None):
        """Blocks until the gate is decided and returns it; waits on the sidecar in rounds of
        wait_seconds (1-300). With timeout (seconds), returns the pending gate after it."""
        rounds = _DecisionRounds(wait_seconds, timeout)
        gate = self.gate
        while gate["state"] == "pending":
            seconds = rounds.next()
            if seconds is None:
                return gate
            gate = self._client.get_gate(self.gate_id, wait_seconds=seconds)
        return gate

    def consume(self):
        return self._client.consume_gate(self.gate_id)


class _DecisionRounds:
    """The rounds of a gate's decision(): each waits at most wait_seconds (1-300) on the
    sidecar, the last ones shortened to end near `timeout` (seconds, None for no end)."""

    def __init__(self, wait_seconds, timeout):
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._seconds = max(1, min(int(wait_seconds), 300))

    def next(self):
        """How long the next round waits; None once the timeout has passed."""
        if self._deadline is not None:
            left = self._deadline - time.monotonic()
            if left <= 0:
                return None
            self._seconds = max(1, min(self._seconds, int(left) + 1))
        return self._seconds


def _json_encode(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


class EffectCall:
    """The context manager's view of one call: replayed, result, call_id."""

    def __init__(self, call_id, replayed, result=None):
        self.call_id = call_id
        self.replayed = replayed
        self.result = result


class _EffectSpec:
    def __init__(self, client, key, effect, tool_name, input_summary, sha, encode, decode,
                 external_id):
        self.client, self.key, self.effect = client, key, effect
        self.tool_name, self.input_summary, self.sha = tool_name, input_summary, sha
        self.encode, self.decode, self.external_id = encode, decode, external_id
        self._open = []

    def _begin(self, key, tool_name, sha, input_summary):
        begun = self.client.begin_tool_call(tool_name, self.effect, idempotency_key=key,
                                            args_sha256=sha, input_summary=input_summary)
        if begun["state"] == "completed":
            result = begun["result"]
            if not result["success"]:
                raise RecordedFailureError(begun["callId"], result)
            return begun["callId"], True, self.decode(result["outputSummary"])
        return begun["callId"], False, None

    def _end(self, call_id, started, ok, value):
        if ok:
            ext = self.external_id(value) if self.external_id else None
            self.client.end_tool_call(call_id, True, self.encode(value),
                                      int((time.monotonic() - started) * 1000), ext)
        else:
            self.client.end_tool_call(call_id, False, f"{type(value).__name__}: {value}",
                                      int((time.monotonic() - started) * 1000))

    def run(self, fn, args=(), kwargs=None, key=None, sha=None):
        kwargs = kwargs or {}
        name = self.tool_name or getattr(fn, "__name__", None) or "effect"
        call_id, replayed, value = self._begin(key if key is not None else self.key, name,
                                               sha or self.sha, self.input_summary)
        if replayed:
            return value
        started = time.monotonic()
        try:
            value = fn(*args, **kwargs)
        except BaseException as e:
            self._end(call_id, started, False, e)
            raise
        self._end(call_id, started, True, value)
        return value

    # decorator
    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            key = self.key(*args, **kwargs) if callable(self.key) else self.key
            sha = self.sha or (args_sha256(*args, **kwargs) if key is None else None)
            return self.run(fn, args, kwargs, key=key, sha=sha)
        return wrapper

    # context manager
    def __enter__(self):
        if self.key is None or callable(self.key):
            raise ValueError("with client.effect(key): key must be a string")
        name = self.tool_name or "effect"
        call_id, replayed, value = self._begin(self.key, name, self.sha, self.input_summary)
        call = EffectCall(call_id, replayed, value)
        self._open.append((call, time.monotonic()))
        return call

    def __exit__(self, exc_type, exc, tb):
        call, started = self._open.pop()
        if call.replayed:
            return False
        if exc is not None:
            self._end(call.call_id, started, False, exc)
        else:
            self._end(call.call_id, started, True, call.result)
        return False


def _q(segment):
    return urllib.parse.quote(str(segment), safe="")


def _query(**params):
    items = [(k, str(v)) for k, v in params.items() if v is not None]
    return "?" + urllib.parse.urlencode(items) if items else ""
