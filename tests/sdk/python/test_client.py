"""The Python client against a real sidecar: every endpoint, typed errors, effect() as a call,
a decorator and a context manager, OUTCOME_UNKNOWN after a SIGKILL of the sidecar between begin
and end, a gate approved over HTTP while the agent waits, restoration() before and after a
restart. Run: python3 -m unittest discover -s tests/sdk/python (AGENTCKPT_BIN names the binary).
"""

import json
import os
import sys
import threading
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "clients", "python"))

from agentckpt import (AgentCkptClient, AgentCkptError, OutcomeUnknownError,  # noqa: E402
                       RecordedFailureError, args_sha256)
from harness import SidecarTestCase, free_port  # noqa: E402


def context(phase, steps=0):
    return {
        "activeTask": {"taskId": "task-py-1", "title": "Quarterly report", "phase": phase,
                       "progress": 10, "startedAt": "2026-11-25T10:00:00.000Z"},
        "contextSummary": {"systemPromptHash": "", "gatheringResults": "3 sources",
                           "planOutline": ["Collect", "Write", "Send"], "completedSteps": steps,
                           "draftContent": "", "toolCallLog": []},
        "workspace": None,
    }


class ClientTest(SidecarTestCase):
    AGENT_ID = "agent-sdk-py"

    @classmethod
    def make_client(cls, url):
        return AgentCkptClient(url)

    def test_01_cold_restoration_and_probes(self):
        self.assertIsNone(self.client.restoration())
        self.assertEqual(self.client.health(), {"status": "ok"})
        ready = self.client.readiness()
        self.assertTrue(ready["ready"])
        self.assertEqual(ready["lease"]["state"], "held")
        self.assertIn("# TYPE agentckpt_", self.client.metrics())

    def test_02_context(self):
        put = self.client.put_context(context("gathering"))
        self.assertTrue(put["changed"])
        self.assertTrue(put["durable"])
        self.assertEqual(put["checkpoint"]["trigger"], "task_phase_change")
        patched = self.client.patch_context({"activeTask": {"phase": "executing"}})
        self.assertEqual(patched["checkpoint"]["trigger"], "task_phase_change")
        self.client.append_tool_call({"toolName": "fetch", "timestamp": "2026-11-25T10:01:00.000Z",
                                      "inputSummary": "q3.csv", "outputSummary": "420 rows",
                                      "durationMs": 5, "success": True})
        now = self.client.get_context()
        self.assertEqual(now["activeTask"]["phase"], "executing")
        self.assertEqual(now["contextSummary"]["toolCallLog"][-1]["toolName"], "fetch")

    def test_03_typed_errors(self):
        with self.assertRaises(AgentCkptError) as c:
            self.client.patch_context({"activeTask": {"progress": 101}})
        self.assertEqual((c.exception.status, c.exception.code, c.exception.field),
                         (400, "INVALID_ARGUMENT", "activeTask.progress"))
        with self.assertRaises(AgentCkptError) as c:
            self.client.get_checkpoint("00000000-0000-4000-8000-000000000000")
        self.assertEqual((c.exception.status, c.exception.code), (404, "NOT_FOUND"))
        with self.assertRaises(AgentCkptError) as c:
            self.client.list_tool_calls(state="sideways")
        self.assertEqual(c.exception.status, 400)
        nobody = AgentCkptClient(f"http://127.0.0.1:{free_port()}")
        with self.assertRaises(AgentCkptError) as c:
            nobody.health()
        self.assertEqual((c.exception.status, c.exception.code), (0, "UNREACHABLE"))

    def test_04_checkpoints(self):
        created = self.client.create_checkpoint(trigger="pre_compaction")
        self.assertEqual(created["trigger"], "pre_compaction")
        listed = self.client.list_checkpoints(limit=3)["checkpoints"]
        self.assertEqual(listed[0]["checkpointId"], created["checkpointId"])
        doc = self.client.get_checkpoint(created["checkpointId"])
        self.assertEqual(doc["activeTask"]["taskId"], "task-py-1")

    def test_05_effect_call_replays(self):
        runs = []

        def send_invoice():
            runs.append(1)
            return {"invoice": "inv-5", "amount": 120}

        first = self.client.effect("invoice:5", send_invoice)
        second = self.client.effect("invoice:5", send_invoice)
        self.assertEqual(len(runs), 1)
        self.assertEqual(first, second)
        calls = self.client.list_tool_calls("completed")["calls"]
        call = next(c for c in calls if c["idempotencyKey"] == "invoice:5")
        self.assertEqual(call["toolName"], "send_invoice")
        self.assertEqual(json.loads(call["result"]["outputSummary"]), first)

    def test_06_effect_decorator(self):
        runs = []

        @self.client.effect(key=lambda to, body: f"mail:{to}", effect="write")
        def send_mail(to, body):
            runs.append(to)
            return f"sent to {to}"

        self.assertEqual(send_mail("a@example.com", "hi"), "sent to a@example.com")
        self.assertEqual(send_mail("a@example.com", "hi again"), "sent to a@example.com")
        self.assertEqual(send_mail("b@example.com", "hi"), "sent to b@example.com")
        self.assertEqual(runs, ["a@example.com", "b@example.com"])

        # Without a key the sidecar derives it from the tool, the arguments' hash and the task.
        @self.client.effect()
        def archive(doc_id):
            runs.append(doc_id)
            return doc_id.upper()

        self.assertEqual(archive("doc-1"), "DOC-1")
        self.assertEqual(archive("doc-1"), "DOC-1")
        self.assertEqual(runs.count("doc-1"), 1)
        sha = args_sha256("doc-1")
        calls = self.client.list_tool_calls("completed")["calls"]
        self.assertTrue(any(c["argsSha256"] == sha and c["idempotencyKey"].startswith("d1:")
                            for c in calls))

    def test_07_effect_context_manager_and_failure(self):
        with self.client.effect("deploy:v2", tool_name="deploy") as call:
            self.assertFalse(call.replayed)
            call.result = {"release": "v2"}
        with self.client.effect("deploy:v2", tool_name="deploy") as call:
            self.assertTrue(call.replayed)
            self.assertEqual(call.result, {"release": "v2"})
        with self.assertRaises(RuntimeError):
            with self.client.effect("deploy:v3", tool_name="deploy"):
                raise RuntimeError("cluster unreachable")
        with self.assertRaises(RecordedFailureError) as c:
            self.client.effect("deploy:v3", lambda: "never", tool_name="deploy")
        self.assertIn("cluster unreachable", c.exception.result["outputSummary"])

    def test_08_outcome_unknown_after_sigkill(self):
        begun = self.client.begin_tool_call("transfer", "write", idempotency_key="transfer:77",
                                            input_summary="100 EUR to acct 9")
        self.assertEqual(begun["state"], "started")
        self.sidecar.restart()  # SIGKILL between begin and end, then a new sidecar
        ran = []
        with self.assertRaises(OutcomeUnknownError) as c:
            self.client.effect("transfer:77", lambda: ran.append(1), tool_name="transfer")
        self.assertEqual(ran, [])
        self.assertEqual(c.exception.status, 409)
        self.assertEqual(c.exception.call["state"], "outcome_unknown")
        self.assertEqual(c.exception.call["callId"], begun["callId"])
        restored = self.client.restoration()
        self.assertGreaterEqual(restored["outcomeUnknownCalls"], 1)
        self.assertIn("UNKNOWN outcome", restored["prompt"])
        rec = self.client.reconcile_tool_call(begun["callId"], "succeeded",
                                              output_summary='"found transfer tx-1"')
        self.assertEqual(rec["state"], "completed")
        self.assertEqual(self.client.effect("transfer:77", lambda: "again", tool_name="transfer"),
                         "found transfer tx-1")

    def test_09_gate_approved_over_http_while_waiting(self):
        handle = self.client.gate("send the report to the board", {"to": "board@example.com"},
                                  ttl_seconds=600)
        self.assertEqual(handle.gate["state"], "pending")
        decided = {}
        waiter = threading.Thread(target=lambda: decided.update(handle.decision(wait_seconds=30)))
        waiter.start()
        pending = self.client.list_gates("pending")["gates"]
        self.assertTrue(any(g["gateId"] == handle.gate_id for g in pending))
        self.assertEqual(decided, {})
        req = urllib.request.Request(
            f"{self.env.url}/v1/gates/{handle.gate_id}/resolve", method="POST",
            data=json.dumps({"decision": "approved", "by": "carol"}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            self.assertEqual(r.status, 200)
        waiter.join(timeout=60)
        self.assertFalse(waiter.is_alive())
        self.assertEqual(decided["state"], "approved")
        self.assertEqual(decided["decision"]["by"], "carol")
        self.assertTrue(handle.consume()["consumed"])
        with self.assertRaises(AgentCkptError) as c:
            self.client.resolve_gate(handle.gate_id, "rejected", "dave")
        self.assertEqual((c.exception.status, c.exception.code), (409, "CONFLICT"))

    def test_10_restore_and_agent_start(self):
        preview = self.client.restore()
        self.assertFalse(preview["coldStart"])
        self.assertIn("task-py-1", preview["prompt"])
        start = self.client.agent_start()
        self.assertEqual(self.client.restoration()["checkpointId"], start["checkpointId"])


if __name__ == "__main__":
    unittest.main()
