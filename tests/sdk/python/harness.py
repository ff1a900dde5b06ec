"""Test harness for the Python SDK tests, the same as ../harness.mjs: a real `nats-server -js`
on a free loopback port with its own store dir, the inbox stream made by `agentckpt
setup-stream`, and real sidecar processes (`agentckpt run`, SQLite in a temp dir) started,
SIGKILLed and restarted by pid. Settings mirror tests/sidecar/sidecar_test_env.cc."""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.request

SOURCE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
AGENTCKPT_BIN = os.environ.get("AGENTCKPT_BIN") or os.path.join(SOURCE_DIR, "build", "bin",
                                                                "agentckpt")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, probe, timeout=30.0, step=0.02):
    """Polls probe() until it is true; the bound only catches a hang."""
    deadline = time.monotonic() + timeout
    while True:
        if probe():
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(step)


def http_status(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


class NatsServer:
    def __init__(self, directory):
        self.dir = directory
        self.proc = None
        self.port = 0

    def start(self):
        for attempt in range(10):
            self.port = free_port()
            log = os.path.join(self.dir, f"nats-{attempt}.log")
            with open(log, "ab") as out:
                proc = subprocess.Popen(
                    ["nats-server", "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd",
                     os.path.join(self.dir, "js")], stdout=out, stderr=out)

            def ready():
                if proc.poll() is not None:
                    return True
                with open(log, encoding="utf-8", errors="replace") as f:
                    return "Server is ready" in f.read()

            wait_for("nats-server", ready, timeout=20)
            if proc.poll() is None:
                self.proc = proc
                return
            proc.wait()
        raise RuntimeError("nats-server did not start")

    @property
    def url(self):
        return f"nats://127.0.0.1:{self.port}"

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


class Sidecar:
    def __init__(self, env):
        self.env = env
        self.proc = None
        self.starts = 0
        self.log = None

    @property
    def url(self):
        return self.env.url

    def start(self, overrides=None):
        """Starts `agentckpt run` and waits for /healthz 200; a taken port is retried."""
        for _ in range(20):
            self.log = os.path.join(self.env.dir, f"sidecar-py-{self.starts}.log")
            self.starts += 1
            env = dict(os.environ, **self.env.sidecar_env(), **(overrides or {}))
            with open(self.log, "ab") as out:
                proc = subprocess.Popen([AGENTCKPT_BIN, "run"], env=env, stdout=out, stderr=out)
            healthy = []

            def up():
                if proc.poll() is not None:
                    return True
                if http_status(self.url + "/healthz") == 200:
                    healthy.append(True)
                    return True
                return False

            wait_for(f"sidecar /healthz (log {self.log})", up)
            if healthy and proc.poll() is None:
                self.proc = proc
                return self
            proc.wait()
            with open(self.log, encoding="utf-8", errors="replace") as f:
                text = f.read()
            if "address already in use" not in text.lower() and "bind" not in text.lower():
                raise RuntimeError(f"sidecar exited at start ({proc.returncode}):\n{text[-3000:]}")
            time.sleep(0.1)
        raise RuntimeError("sidecar could not bind its port")

    def ready(self):
        wait_for("sidecar /readyz", lambda: http_status(self.url + "/readyz") == 200)

    def kill(self):
        proc, self.proc = self.proc, None
        if proc and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()

    def stop(self):
        proc, self.proc = self.proc, None
        if proc and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def restart(self, overrides=None):
        self.kill()
        self.start(overrides)
        self.ready()
        return self


class SidecarEnv:
    """One agent's environment: nats-server, the inbox stream, a store path, an HTTP port."""

    def __init__(self, agent_id="agent-sdk-py", env=None):
        self.agent_id = agent_id
        self.extra_env = env or {}
        self.dir = tempfile.mkdtemp(prefix="agentckpt-sdk-py-")
        self.nats = NatsServer(self.dir)
        self.sidecars = []
        try:
            self.nats.start()
            subprocess.run([AGENTCKPT_BIN, "setup-stream", "--agent", agent_id, "--stream",
                            "INBOX", "--consumer", "agent", "--nats", self.nats.url,
                            "--timeout-ms", "10000"], check=True, capture_output=True)
        except BaseException:
            self.close()
            raise
        self.port = free_port()

    def sidecar_env(self):
        env = {
            "AGENT_ID": self.agent_id,
            "NATS_URL": self.nats.url,
            "CKPT_STORE": "sqlite://" + os.path.join(self.dir, "store.db"),
            "CKPT_HTTP_ADDR": f"127.0.0.1:{self.port}",
            "JS_STREAM": "INBOX",
            "JS_CONSUMER": "agent",
            "CKPT_PERIOD_S": "3600",
            "CKPT_RESTORE_ON_START": "true",
            "CKPT_NATS_RECONNECT_WAIT_MS": "200",
        }
        env.update(self.extra_env)
        return env

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start_sidecar(self, overrides=None):
        s = Sidecar(self)
        self.sidecars.append(s)
        s.start(overrides)
        s.ready()
        return s

    def close(self):
        for s in self.sidecars:
            s.kill()
        self.nats.stop()
        if not os.environ.get("AGENTCKPT_KEEP_TMP"):
            shutil.rmtree(self.dir, ignore_errors=True)


class SidecarTestCase(unittest.TestCase):
    """A test class with one agent's environment and a started sidecar for all its tests:
    cls.env, cls.sidecar, and cls.client made by make_client(url). Subclasses set AGENT_ID."""

    AGENT_ID = "agent-sdk-py"

    @classmethod
    def make_client(cls, url):
        raise NotImplementedError

    @classmethod
    def setUpClass(cls):
        cls.env = SidecarEnv(cls.AGENT_ID)
        try:
            cls.sidecar = cls.env.start_sidecar()
        except BaseException:
            cls.env.close()
            raise
        cls.client = cls.make_client(cls.env.url)

    @classmethod
    def tearDownClass(cls):
        # The client's connections (an asyncio client's are those of its blocking client).
        client = getattr(cls, "client", None)
        close = getattr(getattr(client, "blocking", client), "close", None)
        if close is not None:
            close()
        cls.env.close()
