// Test harness for the SDK tests (node): a real `nats-server -js` on a free loopback port with its
// own store dir, the agent's inbox stream made by `agentckpt setup-stream`, and real sidecar
// processes (`agentckpt run`, SQLite store in a temp dir) started, SIGKILLed and restarted by pid.
// The sidecar's settings mirror tests/sidecar/sidecar_test_env.cc.
import { spawn, execFile } from "node:child_process";
import { mkdtempSync, rmSync, openSync, closeSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const sourceDir = resolve(here, "..", "..");
export const agentckptBin =
  process.env.AGENTCKPT_BIN || join(sourceDir, "build", "bin", "agentckpt");

export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.unref();
    s.on("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

const delay = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `probe` (async, true when done) every `stepMs` until it holds; throws after `timeoutMs`
// with `what` in the message. The bound only catches a hang: nothing assumes a speed.
export async function waitFor(what, probe, { timeoutMs = 30000, stepMs = 20 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(stepMs);
  }
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitExit(child) {
  if (exited(child)) return Promise.resolve();
  return new Promise((r) => child.once("exit", () => r()));
}

async function httpStatus(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

class NatsServer {
  constructor(dir) {
    this.dir = dir;
    this.child = null;
    this.port = 0;
  }

  async start() {
    for (let attempt = 0; attempt < 10; attempt++) {
      this.port = await freePort();
      const log = join(this.dir, `nats-${attempt}.log`);
      const fd = openSync(log, "a");
      const child = spawn(
        "nats-server",
        ["-js", "-a", "127.0.0.1", "-p", String(this.port), "-sd", join(this.dir, "js")],
        { stdio: ["ignore", fd, fd] },
      );
      closeSync(fd);
      child.on("error", () => undefined);
      let ready = false;
      // Ready means OUR process says so: the port could be someone else's.
      await waitFor("nats-server", async () => {
        if (exited(child)) return true;
        ready = readFileSync(log, "utf8").includes("Server is ready");
        return ready;
      }, { timeoutMs: 20000 });
      if (ready && !exited(child)) {
        this.child = child;
        return;
      }
      await waitExit(child);
    }
    throw new Error("nats-server did not start (port taken 10 times?)");
  }

  get url() {
    return `nats://127.0.0.1:${this.port}`;
  }

  async stop() {
    if (this.child && !exited(this.child)) {
      this.child.kill("SIGKILL");
      await waitExit(this.child);
    }
    this.child = null;
  }
}

export class Sidecar {
  constructor(env) {
    this.env = env;
    this.child = null;
    this.starts = 0;
  }

  get url() {
    return `http://127.0.0.1:${this.env.port}`;
  }

  get pid() {
    return this.child?.pid;
  }

  // Starts `agentckpt run` and waits until /healthz answers 200 (the start-up restore is done
  // then). Another process on the port makes ours exit; the start is retried on the same port.
  async start(overrides = {}) {
    for (let attempt = 0; attempt < 20; attempt++) {
      const log = join(this.env.dir, `sidecar-${this.starts++}.log`);
      this.log = log;
      const fd = openSync(log, "a");
      const child = spawn(agentckptBin, ["run"], {
        env: { ...process.env, ...this.env.sidecarEnv(), ...overrides },
        stdio: ["ignore", fd, fd],
      });
      closeSync(fd);
      child.on("error", () => undefined);
      let healthy = false;
      await waitFor(`sidecar /healthz (log ${log})`, async () => {
        if (exited(child)) return true;
        healthy = (await httpStatus(this.url + "/healthz")) === 200;
        return healthy;
      });
      if (healthy && !exited(child)) {
        this.child = child;
        return this;
      }
      await waitExit(child);
      const text = readFileSync(log, "utf8");
      if (!/address already in use|bind/i.test(text)) {
        throw new Error(`sidecar exited at start (${child.exitCode}):\n${text.slice(-3000)}`);
      }
      await delay(100);
    }
    throw new Error("sidecar could not bind its port");
  }

  /** Waits until /readyz is 200 (lease held, store and NATS up). */
  async ready() {
    await waitFor("sidecar /readyz", async () => (await httpStatus(this.url + "/readyz")) === 200);
  }

  async kill() {
    const child = this.child;
    this.child = null;
    if (child && !exited(child)) {
      child.kill("SIGKILL");
      await waitExit(child);
    }
  }

  async stop() {
    const child = this.child;
    this.child = null;
    if (child && !exited(child)) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20000);
      await waitExit(child);
      clearTimeout(timer);
    }
  }

  async restart(overrides = {}) {
    await this.kill();
    return this.start(overrides);
  }
}

// One agent's environment: nats-server, the inbox stream, a store path and an HTTP port.
export class SidecarEnv {
  static async create({ agentId = "agent-sdk", env = {} } = {}) {
    const e = new SidecarEnv();
    e.agentId = agentId;
    e.extraEnv = env;
    e.dir = mkdtempSync(join(tmpdir(), "agentckpt-sdk-"));
    e.nats = new NatsServer(e.dir);
    await e.nats.start();
    await new Promise((ok, fail) =>
      execFile(
        agentckptBin,
        ["setup-stream", "--agent", agentId, "--stream", "INBOX", "--consumer", "agent",
         "--nats", e.nats.url, "--timeout-ms", "10000"],
        (err, stdout, stderr) => (err ? fail(new Error(`setup-stream: ${stderr || err}`)) : ok()),
      ),
    );
    e.port = await freePort();
    e.sidecars = [];
    return e;
  }

  sidecarEnv() {
    return {
      AGENT_ID: this.agentId,
      NATS_URL: this.nats.url,
      CKPT_STORE: "sqlite://" + join(this.dir, "store.db"),
      CKPT_HTTP_ADDR: `127.0.0.1:${this.port}`,
      JS_STREAM: "INBOX",
      JS_CONSUMER: "agent",
      CKPT_PERIOD_S: "3600",
      CKPT_RESTORE_ON_START: "true",
      CKPT_NATS_RECONNECT_WAIT_MS: "200",
      ...this.extraEnv,
    };
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts a sidecar for this agent and waits until it is healthy and ready. */
  async startSidecar(overrides = {}) {
    const s = new Sidecar(this);
    this.sidecars.push(s);
    await s.start(overrides);
    await s.ready();
    return s;
  }

  async close() {
    for (const s of this.sidecars) await s.kill();
    await this.nats.stop();
    if (!process.env.AGENTCKPT_KEEP_TMP) rmSync(this.dir, { recursive: true, force: true });
  }
}

// Registers with the test runner's before/after hooks one agent's environment, a started sidecar
// and a client (AgentCkptClient, passed in so the harness needs no package); the returned object
// is filled in by `before`: {env, sidecar, client}.
export function useSidecar({ before, after }, agentId, Client) {
  const state = {};
  before(async () => {
    state.env = await SidecarEnv.create({ agentId });
    state.sidecar = await state.env.startSidecar();
    state.client = new Client({ baseUrl: state.env.url });
  });
  after(async () => {
    await state.env?.close();
  });
  return state;
}
