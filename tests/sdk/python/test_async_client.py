"""The asyncio client (agentckpt.aio) against a real sidecar: its methods as coroutines, effect()
with async functions (call, decorator, async context manager) run at most once per key, effects
of concurrent tasks, a cancelled call left open (OUTCOME_UNKNOWN, never recorded as failed), and
an awaited gate decision that leaves the event loop running. Run: python3 -m unittest
discover -s tests/sdk/python (AGENTCKPT_BIN names the binary).
"""

import asyncio
import json
import os
import sys
import threading
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "clients", "python"))

from agentckpt import (AgentCkptError, AsyncAgentCkptClient, OutcomeUnknownError,  # noqa: E402
                       RecordedFailureError)
from harness import SidecarTestCase  # noqa: E402


def context(phase):
    return {
        "activeTask": {"taskId": "task-aio-1", "title": "Release notes", "phase": phase,
                       "progress": 5, "startedAt": "2026-12-07T06:00:00.000Z"},
        "contextSummary": {"systemPromptHash": "", "gatheringResults": "2 sources",
                           "planOutline": ["Collect", "Write"], "completedSteps": 0,
                           "draftContent": "", "toolCallLog": []},
        "workspace": None,
    }


class AsyncClientTest(SidecarTestCase):
    AGENT_ID = "agent-sdk-py-aio"

    @classmethod
    def make_client(cls, url):
        return AsyncAgentCkptClient(url)

    def run_async(self, coro):
        return asyncio.run(asyncio.wait_for(coro, 120))

    def completed_call(self, key):
        calls = self.run_async(self.client.list_tool_calls("completed"))["calls"]
        return next(c for c in calls if c["idempotencyKey"] == key)

    def test_01_methods_are_coroutines(self):
        async def go():
            self.assertEqual(await self.client.health(), {"status": "ok"})
            self.assertTrue((await self.client.readiness())["ready"])
            put = await self.client.put_context(context("gathering"))
            self.assertTrue(put["durable"])
            await self.client.patch_context({"activeTask": {"phase": "executing"}})
            created = await self.client.create_checkpoint(trigger="pre_compaction")
            doc = await self.client.get_checkpoint(created["checkpointId"])
            self.assertEqual(doc["activeTask"]["phase"], "executing")
            with self.assertRaises(AgentCkptError) as c:
                await self.client.patch_context({"activeTask": {"progress": 101}})
            self.assertEqual((c.exception.status, c.exception.field),
                             (400, "activeTask.progress"))

        self.run_async(go())

    def test_02_effect_of_an_async_function_runs_once(self):
        runs = []

        async def publish_notes():
            await asyncio.sleep(0.01)
            runs.append(1)
            return {"url": "https://example.com/notes/7"}

        async def go():
            first = await self.client.effect("notes:7", publish_notes)
            second = await self.client.effect("notes:7", publish_notes)
            return first, second

        first, second = self.run_async(go())
        self.assertEqual(runs, [1])
        self.assertEqual(first, second)
        call = self.completed_call("notes:7")
        self.assertEqual(call["toolName"], "publish_notes")
        self.assertEqual(json.loads(call["result"]["outputSummary"]), first)

    def test_03_effects_of_concurrent_tasks(self):
        runs = []

        @self.client.effect(key=lambda n: f"ticket:{n}")
        async def open_ticket(n):
            await asyncio.sleep(0.02)
            runs.append(n)
            return f"T-{n}"

        async def go():
            first = await asyncio.gather(*(open_ticket(n) for n in range(8)))
            again = await asyncio.gather(*(open_ticket(n) for n in range(8)))
            return first, again

        first, again = self.run_async(go())
        self.assertEqual(first, [f"T-{n}" for n in range(8)])
        self.assertEqual(again, first)
        self.assertEqual(sorted(runs), list(range(8)))
        for n in range(8):
            self.assertEqual(json.loads(self.completed_call(f"ticket:{n}")["result"]
                                        ["outputSummary"]), f"T-{n}")

    def test_04_context_manager_and_recorded_failure(self):
        async def go():
            async with self.client.effect("deploy:aio-1", tool_name="deploy") as call:
                self.assertFalse(call.replayed)
                call.result = {"release": "aio-1"}
            async with self.client.effect("deploy:aio-1", tool_name="deploy") as call:
                self.assertTrue(call.replayed)
                self.assertEqual(call.result, {"release": "aio-1"})

            async def fails():
                raise RuntimeError("registry unreachable")

            with self.assertRaises(RuntimeError):
                await self.client.effect("deploy:aio-2", fails, tool_name="deploy")
            with self.assertRaises(RecordedFailureError) as c:
                await self.client.effect("deploy:aio-2", fails, tool_name="deploy")
            self.assertIn("registry unreachable", c.exception.result["outputSummary"])

        self.run_async(go())

    def test_05_a_cancelled_call_is_left_open(self):
        ran = []

        async def go():
            started = asyncio.Event()

            async def transfer():
                ran.append(1)
                started.set()
                await asyncio.sleep(3600)  # the transfer is under way when the task is cancelled

            task = asyncio.create_task(self.client.effect("transfer:aio-9", transfer))
            await started.wait()
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            with self.assertRaises(OutcomeUnknownError) as c:
                await self.client.effect("transfer:aio-9", transfer)
            return c.exception

        unknown = self.run_async(go())
        self.assertEqual(ran, [1])
        self.assertEqual(unknown.call["state"], "started")
        calls = self.run_async(self.client.list_tool_calls("completed"))["calls"]
        self.assertFalse(any(c["idempotencyKey"] == "transfer:aio-9" for c in calls))

    def test_06_awaiting_a_gate_leaves_the_event_loop_running(self):
        ticks = [0]
        at_resolve = []

        def resolve_when_ticked(gate_id):
            # Resolves once the loop has ticked 5 times while the decision is awaited, or after
            # 20 s regardless: a decision() that blocked the loop then fails the test, not hangs.
            deadline = time.monotonic() + 20
            while ticks[0] < 5 and time.monotonic() < deadline:
                time.sleep(0.01)
            at_resolve.append(ticks[0])
            req = urllib.request.Request(
                f"{self.env.url}/v1/gates/{gate_id}/resolve", method="POST",
                data=json.dumps({"decision": "approved", "by": "erin"}).encode(),
                headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as r:
                r.read()

        async def go():
            handle = await self.client.gate("ship release aio-1", {"tag": "aio-1"},
                                            ttl_seconds=600)
            stop = asyncio.Event()

            async def ticker():
                while not stop.is_set():
                    ticks[0] += 1
                    await asyncio.sleep(0.01)

            ticking = asyncio.create_task(ticker())
            resolver = threading.Thread(target=resolve_when_ticked, args=(handle.gate_id,))
            resolver.start()
            try:
                decided = await handle.decision(wait_seconds=30)
            finally:
                stop.set()
                await ticking
                await asyncio.to_thread(resolver.join, 30)
            consumed = await handle.consume()
            return decided, consumed

        decided, consumed = self.run_async(go())
        self.assertEqual(decided["state"], "approved")
        self.assertEqual(decided["decision"]["by"], "erin")
        self.assertTrue(consumed["consumed"])
        self.assertGreaterEqual(at_resolve[0], 5)

    def test_07_a_decision_with_a_timeout_returns_the_pending_gate(self):
        async def go():
            handle = await self.client.gate("rotate the signing key", ttl_seconds=600)
            started = time.monotonic()
            gate = await handle.decision(wait_seconds=30, timeout=1)
            return gate, time.monotonic() - started

        gate, waited = self.run_async(go())
        self.assertEqual(gate["state"], "pending")
        self.assertGreaterEqual(waited, 1.0)  # a round shortened to the timeout, not 30 s
        self.assertLess(waited, 25.0)

    def test_08_agent_start(self):
        async def go():
            start = await self.client.agent_start()
            last = await self.client.restoration()
            return start, last

        start, last = self.run_async(go())
        self.assertFalse(start["coldStart"])
        self.assertIn("task-aio-1", start["prompt"])
        self.assertEqual(last["checkpointId"], start["checkpointId"])


if __name__ == "__main__":
    unittest.main()
