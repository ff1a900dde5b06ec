"""An agent loop on the agentckpt Python client: it reports its context, writes each report
section through effect() (nothing written twice, even across crashes), waits at a gate before
publishing, and resumes from its restoration after a SIGKILL.

    AGENTCKPT_URL=http://127.0.0.1:8787 OUT_DIR=./out python3 agent.py

CRASH_AFTER_SECTION=N makes the process SIGKILL itself right after writing section N, before it
reports the step (to try a resume); run it again without it and it continues where it stopped.
The client is standard library only: put clients/python on PYTHONPATH or pip install it.
"""

import datetime
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python"))

from agentckpt import AgentCkptClient  # noqa: E402

client = AgentCkptClient()  # $AGENTCKPT_URL or http://127.0.0.1:8787
OUT_DIR = os.environ.get("OUT_DIR", "./out")
CRASH_AFTER = int(os.environ.get("CRASH_AFTER_SECTION", "0"))
SECTIONS = ["Summary", "Revenue", "Costs", "Outlook"]
TASK_ID = "report-2026-q4"


def write_section(index, title):
    """The tool with a side effect: appends one section to the report."""
    text = f"## {title}\n\nSection {index + 1} of {len(SECTIONS)}.\n\n"
    with open(os.path.join(OUT_DIR, "report.md"), "a", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(OUT_DIR, "writes.log"), "a", encoding="utf-8") as f:
        f.write(f"section {index + 1}\n")
    return {"file": "report.md", "bytes": len(text)}


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    restored = client.agent_start()  # the restoration prompt (a cold start the first time)
    print("cold start" if restored["coldStart"]
          else f"resuming from checkpoint {restored['sequenceNumber']}", flush=True)
    context = client.get_context()
    task = context.get("activeTask") or {}
    resume_at = context["contextSummary"]["completedSteps"] if task.get("taskId") == TASK_ID else 0

    if task.get("taskId") != TASK_ID:
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
        client.put_context({
            "activeTask": {"taskId": TASK_ID, "title": "Q4 report", "phase": "planning",
                           "progress": 0, "startedAt": now.replace("+00:00", "Z")},
            "contextSummary": {"systemPromptHash": "", "gatheringResults": "",
                               "planOutline": [f"Write {s}" for s in SECTIONS]
                               + ["Publish after approval"],
                               "completedSteps": 0, "draftContent": "", "toolCallLog": []},
            "workspace": None,
        })
    client.patch_context({"activeTask": {"phase": "executing"}})

    for i in range(resume_at, len(SECTIONS)):
        # Replayed from the ledger when this section was already written (then not written again).
        with client.effect(f"{TASK_ID}:section:{i + 1}", tool_name="write_section",
                           input_summary=SECTIONS[i]) as call:
            if not call.replayed:
                call.result = write_section(i, SECTIONS[i])
        if CRASH_AFTER == i + 1:
            os.kill(os.getpid(), signal.SIGKILL)
        client.patch_context({
            "activeTask": {"progress": round((i + 1) * 80 / len(SECTIONS))},
            "contextSummary": {"completedSteps": i + 1,
                               "draftContent": f"{i + 1} sections, last {call.result['bytes']} bytes"},
        })
        print(f"section {i + 1} done", flush=True)

    # A human approves the publication; the same gateId after a restart finds the same gate.
    gate = client.gate("Publish the Q4 report", {"file": "report.md"}, gate_id=f"{TASK_ID}-publish")
    print(f"waiting at gate {gate.gate_id}", flush=True)
    decided = gate.decision(wait_seconds=30)
    if decided["state"] == "approved":
        def publish():
            with open(os.path.join(OUT_DIR, "published.txt"), "a", encoding="utf-8") as f:
                f.write(f"published by approval of {decided['decision']['by']}\n")
            return "published"
        client.effect(f"{TASK_ID}:publish", publish)
    gate.consume()
    client.patch_context({"activeTask": {"phase": "reviewing", "progress": 100}})
    print(f"finished: {decided['state']}", flush=True)


if __name__ == "__main__":
    main()
