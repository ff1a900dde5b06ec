"""AsyncAgentCkptClient: the client for asyncio agents (docs/sdk.md, "Python, asyncio").

The same methods as AgentCkptClient, as coroutines. Each request runs the blocking client's call
in a worker thread (asyncio.to_thread: the loop's default executor), so the event loop keeps
running while the sidecar answers, a gate is waited for, or a checkpoint is made durable. Standard
library only, like the blocking client: Python has no asynchronous HTTP client of its own, and
the sidecar is on localhost, where a thread per request in flight costs little. Each worker
thread keeps its own connection to the sidecar (the blocking client's transport). Each request in
flight holds one thread of the default executor (min(32, CPUs + 4) threads unless the loop is
given another), a gate's decision() one per round of waiting.

effect() takes async functions (and plain ones): `await ckpt.effect(key, coro_fn)`, `@ckpt.effect(...)`
on an `async def`, and `async with ckpt.effect(key) as call`. One rule differs from the blocking
client: a call whose task is cancelled (asyncio.CancelledError) while its function runs is not
ended, because the effect may have happened. The key stays open, so the next effect() on it
raises OutcomeUnknownError until the call is reconciled: never run twice, never recorded as
failed when it may have succeeded.
"""

import asyncio
import functools
import inspect
import time

from .client import AgentCkptClient, EffectCall, _DecisionRounds, args_sha256

# The blocking client's methods that map one to one onto coroutines.
_PLAIN_METHODS = (
    "health", "readiness", "metrics", "get_context", "put_context", "patch_context",
    "append_tool_call", "begin_tool_call", "end_tool_call", "reconcile_tool_call",
    "list_tool_calls", "create_checkpoint", "list_checkpoints", "get_checkpoint", "restore",
    "agent_start", "get_restoration", "restoration", "request_gate", "list_gates", "get_gate",
    "resolve_gate", "consume_gate",
)


def _coroutine_of(name):
    blocking = getattr(AgentCkptClient, name)

    @functools.wraps(blocking)
    async def method(self, *args, **kwargs):
        return await asyncio.to_thread(getattr(self.blocking, name), *args, **kwargs)

    return method


class AsyncAgentCkptClient:
    """A client of one sidecar for asyncio code. Safe to share between tasks."""

    def __init__(self, base_url=None, token=None, timeout=30.0):
        self.blocking = AgentCkptClient(base_url, token, timeout)

    @property
    def base_url(self):
        return self.blocking.base_url

    async def aclose(self):
        """Closes the connections of the worker threads (AgentCkptClient.close); a later call
        opens a new one. Also `async with AsyncAgentCkptClient(...) as ckpt:`."""
        self.blocking.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()
        return False

    async def gate(self, reason, *args, **kwargs):
        """request_gate, then an AsyncGateHandle: await handle.decision()."""
        created = await self.request_gate(reason, *args, **kwargs)
        return AsyncGateHandle(self, created)

    def effect(self, key=None, fn=None, *, effect="write", tool_name=None, input_summary=None,
               args_sha256=None, encode=None, decode=None, external_id=None):
        """Runs a call with side effects at most once per idempotency key, as
        AgentCkptClient.effect does; fn may be an async function.

        - await effect(key, fn): the recorded result of a completed key, or fn's result;
        - @effect(key) or @effect() on an async def (or a plain def: the wrapper is a coroutine
          either way);
        - async with effect(key) as call: as the blocking client's context manager.
        """
        spec = self.blocking.effect(key, effect=effect, tool_name=tool_name,
                                    input_summary=input_summary, args_sha256=args_sha256,
                                    encode=encode, decode=decode, external_id=external_id)
        async_spec = _AsyncEffectSpec(spec)
        if fn is not None:
            return async_spec.run(fn)
        return async_spec


for _name in _PLAIN_METHODS:
    setattr(AsyncAgentCkptClient, _name, _coroutine_of(_name))


class AsyncGateHandle:
    """A requested gate: gate_id, gate (as created), await decision(), await consume()."""

    def __init__(self, client, created):
        self._client = client
        self.gate_id = created["gateId"]
        self.gate = created["gate"]

    async def decision(self, wait_seconds=60, timeout=None):
        """Waits until the gate is decided and returns it; the sidecar is asked in rounds of
        wait_seconds (1-300). With timeout (seconds), returns the pending gate after it."""
        rounds = _DecisionRounds(wait_seconds, timeout)
        gate = self.gate
        while gate["state"] == "pending":
            seconds = rounds.next()
            if seconds is None:
                return gate
            gate = await self._client.get_gate(self.gate_id, wait_seconds=seconds)
        return gate

    async def consume(self):
        return await self._client.consume_gate(self.gate_id)


class _AsyncEffectSpec:
    """The blocking client's effect rules (begin, replay, end) around an awaited function."""

    def __init__(self, spec):
        self._spec = spec  # the blocking client's _EffectSpec: its begin and end are reused
        self._open = []

    async def run(self, fn, args=(), kwargs=None, key=None, sha=None):
        spec = self._spec
        kwargs = kwargs or {}
        name = spec.tool_name or getattr(fn, "__name__", None) or "effect"
        call_id, replayed, value = await asyncio.to_thread(
            spec._begin, key if key is not None else spec.key, name, sha or spec.sha,
            spec.input_summary)
        if replayed:
            return value
        started = time.monotonic()
        try:
            value = fn(*args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
        except asyncio.CancelledError:
            raise  # left open: the effect may have happened (see the module's comment)
        except BaseException as e:
            await asyncio.to_thread(spec._end, call_id, started, False, e)
            raise
        await asyncio.to_thread(spec._end, call_id, started, True, value)
        return value

    # decorator
    def __call__(self, fn):
        spec = self._spec

        @functools.wraps(fn)
        async def wrapper(*args, **kwargs):
            key = spec.key(*args, **kwargs) if callable(spec.key) else spec.key
            sha = spec.sha or (args_sha256(*args, **kwargs) if key is None else None)
            return await self.run(fn, args, kwargs, key=key, sha=sha)

        return wrapper

    # context manager
    async def __aenter__(self):
        spec = self._spec
        if spec.key is None or callable(spec.key):
            raise ValueError("async with client.effect(key): key must be a string")
        name = spec.tool_name or "effect"
        call_id, replayed, value = await asyncio.to_thread(spec._begin, spec.key, name, spec.sha,
                                                           spec.input_summary)
        call = EffectCall(call_id, replayed, value)
        self._open.append((call, time.monotonic()))
        return call

    async def __aexit__(self, exc_type, exc, tb):
        call, started = self._open.pop()
        if call.replayed or isinstance(exc, asyncio.CancelledError):
            return False
        if exc is not None:
            await asyncio.to_thread(self._spec._end, call.call_id, started, False, exc)
        else:
            await asyncio.to_thread(self._spec._end, call.call_id, started, True, call.result)
        return False
