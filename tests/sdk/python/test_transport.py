"""The Python client's transport (agentckpt/transport.py) against a real sidecar:
- requests go straight to the sidecar when the environment names an HTTP proxy;
- one thread's calls share one TCP connection, checked against the kernel's socket table
  (/proc/net/tcp), not against the client's own bookkeeping;
- a connection the sidecar closed by dying (SIGKILL) or stopping (SIGTERM) is replaced before the
  next request, which succeeds;
- threads calling at once each get their own replies;
- close() and the context manager.
Run: python3 -m unittest test_transport (AGENTCKPT_BIN names the binary).
"""

import json
import os
import socket
import subprocess
import sys
import threading
import unittest

CLIENT_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "clients", "python")
sys.path.insert(0, CLIENT_DIR)

from agentckpt import AgentCkptClient  # noqa: E402
from harness import SidecarTestCase  # noqa: E402


def tcp_client_ports(server_port):
    """The client-side ports of every TCP socket on 127.0.0.1 to or from server_port, in any
    state, seen from either end (whichever end closes first keeps the TIME_WAIT entry)."""
    ports = set()
    server = f"0100007F:{server_port:04X}"
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            local, remote = line.split()[1:3]
            if remote == server:
                ports.add(int(local.split(":")[1], 16))
            elif local == server and not remote.endswith(":0000"):
                ports.add(int(remote.split(":")[1], 16))
    return ports


@unittest.skipUnless(os.path.exists("/proc/net/tcp"), "needs /proc/net/tcp (Linux)")
class TransportTest(SidecarTestCase):
    AGENT_ID = "agent-sdk-py-transport"

    @classmethod
    def make_client(cls, url):
        return AgentCkptClient(url)

    def test_a_proxy_in_the_environment_is_not_used(self):
        # A listening socket stands in for the proxy: a proxied request would wait on it.
        with socket.socket() as proxy:
            proxy.bind(("127.0.0.1", 0))
            proxy.listen(8)
            proxy_url = f"http://127.0.0.1:{proxy.getsockname()[1]}"
            env = dict(os.environ, http_proxy=proxy_url, HTTP_PROXY=proxy_url, no_proxy="",
                       NO_PROXY="", PYTHONPATH=CLIENT_DIR)
            code = ("import json, sys; from agentckpt import AgentCkptClient as C; "
                    "print(json.dumps(C(sys.argv[1], timeout=5).create_checkpoint('manual')))")
            run = subprocess.run([sys.executable, "-c", code, self.env.url], env=env,
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertEqual(json.loads(run.stdout)["trigger"], "manual")
            proxy.setblocking(False)
            with self.assertRaises(BlockingIOError, msg="the proxy was connected to"):
                proxy.accept()[0].close()

    def test_calls_of_one_thread_share_one_connection(self):
        before = tcp_client_ports(self.env.port)
        with AgentCkptClient(self.env.url) as client:
            for _ in range(30):
                self.assertEqual(client.health(), {"status": "ok"})
                client.create_checkpoint(trigger="manual")
            new = tcp_client_ports(self.env.port) - before
        # One connection, or none new if the kernel gave it a port seen before.
        self.assertLessEqual(len(new), 1, f"60 calls used {len(new)} new connections")

    def test_a_restarted_sidecar_is_reached_on_a_new_connection(self):
        with AgentCkptClient(self.env.url) as client:
            self.assertEqual(client.health(), {"status": "ok"})
            self.sidecar.restart()  # SIGKILL: the kept connection is closed under the client
            self.sidecar.ready()
            self.assertEqual(client.health(), {"status": "ok"})
            self.sidecar.stop()  # SIGTERM, then a new sidecar
            self.sidecar.start()
            self.sidecar.ready()
            self.assertEqual(client.create_checkpoint(trigger="manual")["trigger"], "manual")

    def test_threads_calling_at_once_get_their_own_replies(self):
        for _ in range(4):
            self.client.create_checkpoint(trigger="manual")
        errors = []
        start = threading.Barrier(4)

        def calls(limit):
            try:
                start.wait(timeout=30)
                for _ in range(25):
                    got = self.client.list_checkpoints(limit=limit)["checkpoints"]
                    if len(got) != limit:
                        errors.append(f"limit {limit}: {len(got)} checkpoints")
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(f"limit {limit}: {e!r}")

        threads = [threading.Thread(target=calls, args=(n,)) for n in range(1, 5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        self.assertFalse(any(t.is_alive() for t in threads))
        self.assertEqual(errors, [])

    def test_close_then_call_again(self):
        client = AgentCkptClient(self.env.url)
        self.assertEqual(client.health(), {"status": "ok"})
        client.close()
        self.assertEqual(client.health(), {"status": "ok"})
        client.close()


if __name__ == "__main__":
    unittest.main()
