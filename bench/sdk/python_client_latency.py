"""Round trips of the Python client (clients/python) against a real sidecar.

Usage: python3 bench/sdk/python_client_latency.py [--calls N] [--threads N]
Starts a real nats-server -js and `agentckpt run` (AGENTCKPT_BIN, default build/bin/agentckpt;
SQLite store in a fresh temporary directory, JS_STREAM and JS_CONSUMER set, CKPT_PERIOD_S 300,
the sidecar's defaults otherwise except the harness's CKPT_NATS_RECONNECT_WAIT_MS 200) with
tests/sdk/python/harness.py. Then times, one call at a time after 20
untimed calls, N calls (default 1000) of GET /healthz and of POST /v1/checkpoints through
AgentCkptClient, and the same from --threads threads at once (default 4, one client shared), and
prints p50/p99/max in milliseconds (nearest rank) with the machine's CPU count and load.
"""

import argparse
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "sdk", "python"))

from agentckpt import AgentCkptClient  # noqa: E402
from harness import SidecarEnv  # noqa: E402


def rank(sorted_ms, q):
    return sorted_ms[min(len(sorted_ms) - 1, max(0, int(q * len(sorted_ms) + 0.999999) - 1))]


def timed(fn, calls):
    for _ in range(20):
        fn()
    ms = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - start) * 1000.0)
    return ms


def report(what, ms):
    ms = sorted(ms)
    print(f"  {what}: {len(ms)} calls, p50 {rank(ms, 0.5):.3f} ms  p99 {rank(ms, 0.99):.3f} ms"
          f"  max {ms[-1]:.3f} ms")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    env = SidecarEnv("bench-python-client", {"CKPT_PERIOD_S": "300"})
    try:
        env.start_sidecar()
        with AgentCkptClient(env.url) as client:
            print("one thread:")
            report("GET /healthz", timed(client.health, args.calls))
            report("POST /v1/checkpoints", timed(lambda: client.create_checkpoint("manual"),
                                                 args.calls))
            print(f"{args.threads} threads at once, one client, each:")
            results = [None] * args.threads

            def run(i):
                results[i] = timed(lambda: client.create_checkpoint("manual"), args.calls)

            threads = [threading.Thread(target=run, args=(i,)) for i in range(args.threads)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            report("POST /v1/checkpoints", [x for r in results for x in r])
    finally:
        env.close()


if __name__ == "__main__":
    main()
