// Drives the web console in Debian's chromium (headless, puppeteer-core) against a store a real
// sidecar wrote (console_browser_test.cc prepares it and passes a config file). Starts
// `agentckpt console` itself, checks every view against the CLI's output, and exits 1 listing
// every failed check. With config.screenshotDir, saves a PNG of each view there.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const failures = [];
const check = (ok, what) => {
  console.log((ok ? 'ok   ' : 'FAIL ') + what);
  if (!ok) failures.push(what);
};
const WAIT = { timeout: 30000 };

function cli(...args) {
  return JSON.parse(execFileSync(config.bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

// Starts the console on a free port; resolves with its base URL once it prints it.
function startConsole() {
  const child = spawn(config.bin, ['console', '--store', config.store, '--nats', config.nats,
    '--listen', '127.0.0.1:0', '--http-token-file', config.tokenFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('console did not start: ' + out)), 30000);
    child.on('exit', (code) => reject(new Error('console exited ' + code + ': ' + out)));
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/console listening on (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, base: m[1] });
      }
    });
  });
}

async function get(url, token) {
  const r = await fetch(url, { headers: token ? { Authorization: 'Bearer ' + token } : {} });
  return { status: r.status, body: await r.json() };
}

async function shot(page, name) {
  if (!config.screenshotDir) return;
  await page.screenshot({ path: join(config.screenshotDir, name + '.png'), type: 'png' });
}

async function main() {
  const { child, base } = await startConsole();
  const profile = mkdtempSync(join(config.workDir || tmpdir(), 'chromium-'));
  let browser;
  try {
    // Refused without the token or with a wrong one, as JSON; the page and /api/session are open.
    for (const [what, token] of [['missing', ''], ['wrong', 'not-the-token']]) {
      const r = await get(base + 'api/fleet', token);
      check(r.status === 401 && r.body.error.code === 'UNAUTHENTICATED', `${what} token refused with 401 JSON (got ${r.status})`);
    }
    check((await get(base + 'api/fleet', config.token)).status === 200, 'the right token is accepted');

    browser = await puppeteer.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        `--user-data-dir=${profile}`],
    });
    const page = await browser.newPage();
    // Each view in a fresh document (a new query string), so no element of the one before is seen.
    let loads = 0;
    const open = (view) => page.goto(`${base}?load=${++loads}#${view}`, { waitUntil: 'load' });
    await page.setViewport({ width: 1100, height: 760 });
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
    page.on('pageerror', (e) => errors.push('page error: ' + e.message));
    page.on('requestfailed', (r) => errors.push('request failed: ' + r.url()));
    page.on('response', (r) => { if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.url()}`); });

    // Token: asked for, a wrong one refused, the right one kept for the session.
    await page.goto(base, { waitUntil: 'load' });
    await page.waitForSelector('#token-form:not([hidden])', WAIT);
    check(await page.$('#fleet') === null, 'no fleet is shown before the token');
    await page.type('#token', 'not-the-token');
    await page.click('#token-form button');
    await page.waitForFunction(() => document.getElementById('token-error').textContent.includes('refused'), WAIT);
    check(await page.$('#fleet') === null, 'a wrong token shows no data in the page');
    await page.$eval('#token', (e) => { e.value = ''; });
    await page.type('#token', config.token);
    await page.click('#token-form button');
    await page.waitForSelector('#fleet tbody tr', WAIT);

    // Fleet.
    const row = await page.$eval(`#fleet tr[data-agent="${config.agent}"]`, (tr) => [...tr.cells].map((c) => c.textContent));
    check(row[0] === config.agent, 'fleet lists the agent');
    check(row[5] === '1', `fleet shows 1 pending gate (got ${row[5]})`);
    check(row[6] === '1', `fleet shows 1 outcome_unknown call (got ${row[6]})`);
    check(row[4] === '0', `fleet shows 0 corrupted (got ${row[4]})`);
    await shot(page, 'fleet');

    // Timeline: one mark per row of `agentckpt list --json`.
    const listed = cli('list', '--agent', config.agent, '--store', config.store, '--limit', '1000', '--json');
    await open('/agent/' + config.agent);
    await page.waitForSelector('svg.timeline .mark', WAIT);
    const marks = await page.$$eval('svg.timeline .mark', (m) => m.map((x) => Number(x.getAttribute('data-seq'))));
    check(marks.length === listed.length && listed.length > 3, `timeline marks ${marks.length} = list rows ${listed.length}`);
    check(JSON.stringify(marks.slice().sort((a, b) => a - b)) === JSON.stringify(listed.map((r) => r.sequenceNumber).sort((a, b) => a - b)),
      'timeline marks are the listed sequences');
    const restores = (await page.$$('svg.timeline .restore')).length;
    check(restores === 1, `timeline shows the restore after the SIGKILL (${restores})`);
    const bands = await page.$$eval('svg.timeline .band title', (t) => t.map((x) => x.textContent.split(' ')[0]));
    check(JSON.stringify(bands) === JSON.stringify(['gathering', 'executing', 'reviewing']), `timeline shows the phases as bands (${bands})`);
    await shot(page, 'timeline');

    // Checkpoint detail.
    const n1 = config.seqN + 1;
    await open(`/agent/${config.agent}/checkpoint/${n1}`);
    await page.waitForSelector('#verification', WAIT);
    check((await page.$eval('#verification', (e) => e.textContent)).startsWith('verified'), 'detail shows the verification');
    const calls = await page.$$eval('#tool-calls tbody tr', (rs) => rs.map((r) => r.cells[1].textContent));
    check(calls.includes(config.toolName), 'detail lists the tool call');
    check((await page.$$eval('#plan li', (l) => l.length)) === 3, 'detail shows the plan');
    await shot(page, 'checkpoint');

    // Diff of N and N+1: the added tool call, as `agentckpt diff --json` says.
    const diff = cli('diff', String(config.seqN), String(n1), '--agent', config.agent, '--store', config.store, '--json');
    check(diff.toolCalls.added.length === 1 && diff.toolCalls.added[0].toolName === config.toolName, 'agentckpt diff --json names the added tool call');
    await open(`/agent/${config.agent}/diff/${config.seqN}/${n1}`);
    await page.waitForSelector('#diff-tool-calls', WAIT);
    const added = await page.$$eval('#diff-tool-calls tbody tr', (rs) => rs.map((r) => r.cells[1].textContent));
    check(added.length === 1 && added[0] === config.toolName, `diff view shows the added tool call (got ${added})`);
    check((await page.$eval('#plan-diff', (e) => e.textContent)).includes('+ send for review'), 'diff view shows the added plan item');
    check((await page.$$('#draft-diff .add')).length === 1 && (await page.$$('#draft-diff .del')).length === 1, 'diff view shows the draft line change');
    await shot(page, 'diff');

    // Restore preview: byte-equal to `restore --dry-run --json`. The prompt states the
    // checkpoint's age in seconds, so the page's prompt, made between two CLI runs, must equal one
    // of them; it is retried only when the two runs differ (a second boundary fell between them,
    // as it often does when each run takes a second, e.g. under a sanitizer) and it equals neither.
    let compared = false;
    for (let attempt = 0; attempt < 20 && !compared; attempt++) {
      const before = cli('restore', '--dry-run', '--json', '--agent', config.agent, '--store', config.store, '--nats', config.nats);
      await open(`/agent/${config.agent}/preview`);
      await page.waitForSelector('#prompt', WAIT);
      const shown = await page.$eval('#prompt', (e) => e.textContent);
      const after = cli('restore', '--dry-run', '--json', '--agent', config.agent, '--store', config.store, '--nats', config.nats);
      const matched = shown === before.prompt || shown === after.prompt;
      if (!matched && before.prompt !== after.prompt) continue;
      compared = true;
      check(matched, `preview prompt byte-equal to restore --dry-run --json (${Buffer.byteLength(shown)} bytes)`);
      check(before.replayed === 3, `the preview replayed the 3 inbox messages (${before.replayed})`);
    }
    check(compared, 'two CLI dry runs agreed around the page preview');
    const tokens = await page.$eval('#tokens', (e) => e.textContent);
    check(/^\d+ of 4000 /.test(tokens), `preview shows tokens against the budget (${tokens})`);
    await shot(page, 'preview');

    // Gates: approving in the page wakes the agent's waiting GET.
    const gateUrl = `http://127.0.0.1:${config.sidecarPort}/v1/gates/${config.gateId}?waitSeconds=120`;
    let waited = null;
    const waiting = fetch(gateUrl).then(async (r) => { waited = { status: r.status, body: await r.json() }; });
    await open(`/agent/${config.agent}/gates`);
    await page.waitForSelector(`#pending-gates tr[data-gate="${config.gateId}"]`, WAIT);
    await shot(page, 'gates');
    await page.type('#by', 'alice');
    await page.type(`#pending-gates tr[data-gate="${config.gateId}"] textarea`, 'figures checked');
    check(waited === null, 'the agent is still waiting before the approval');
    await page.click(`#pending-gates tr[data-gate="${config.gateId}"] button.approve`);
    await page.waitForSelector('#notice', WAIT);
    const notice = await page.$eval('#notice', (e) => e.textContent);
    check(notice === 'approved (via nats)', `page says approved via the sidecar (${notice})`);
    await waiting;
    check(waited.status === 200 && waited.body.state === 'approved', `waiting GET returned approved (${JSON.stringify(waited && waited.body.state)})`);
    check(waited.body.decision && waited.body.decision.by === 'alice' && waited.body.decision.response.comment === 'figures checked',
      'the decision carries who and the comment');
    check((await page.$$(`#decided-gates tr[data-gate="${config.gateId}"]`)).length === 1, 'the gate moved to decided');
    await shot(page, 'gates-decided');

    check(errors.length === 0, 'no console errors: ' + JSON.stringify(errors));
  } finally {
    if (browser) await browser.close();
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
    rmSync(profile, { recursive: true, force: true });
  }
}

main().then(() => {
  console.log(failures.length === 0 ? 'all checks passed' : failures.length + ' checks failed');
  process.exit(failures.length === 0 ? 0 : 1);
}, (e) => {
  console.log('FAIL ' + (e.stack || e));
  process.exit(1);
});
