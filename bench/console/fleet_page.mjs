// The fleet page's load time in headless chromium (console_bench --page runs it): from
// navigation to every agent's row drawn, ITERATIONS fresh loads with the token in the tab.
//   node fleet_page.mjs NODE_MODULES_DIR BASE_URL TOKEN AGENTS ITERATIONS
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [modules, base, token, agents, iterations] = process.argv.slice(2);
const puppeteer = createRequire(join(modules, 'package.json'))('puppeteer-core');
const profile = mkdtempSync(join(tmpdir(), 'fleet-bench-'));
const browser = await puppeteer.launch({
  executablePath: '/usr/bin/chromium', headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${profile}`],
});
try {
  const page = await browser.newPage();
  const messages = [];  // what the page logged, shown if a load never draws every row
  page.on('console', (m) => messages.push(`console.${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => messages.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => messages.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  const open = new Set();  // requests sent and not yet answered
  page.on('request', (r) => open.add(r));
  page.on('requestfinished', (r) => open.delete(r));
  page.on('requestfailed', (r) => open.delete(r));
  await page.goto(base, { waitUntil: 'load' });
  // The page has asked /api/session and shows the token form: only then is the token stored.
  await page.waitForSelector('#token-form:not([hidden])', { timeout: 60000 });
  await page.evaluate((t) => sessionStorage.setItem('agentckpt.console.token', t), token);
  const times = [];
  for (let i = 0; i <= Number(iterations); i++) {
    const t0 = performance.now();
    await page.goto(`${base}?load=${i}#/`, { waitUntil: 'load' });
    messages.length = 0;
    try {
      await page.waitForFunction((n) => document.querySelectorAll('#fleet tbody tr').length === n,
        { timeout: 60000, polling: 'raf' }, Number(agents));
    } catch (e) {
      const shown = await page.evaluate(() => document.getElementById('view')?.innerText.slice(0, 300));
      console.error(`load ${i}: ${e.message}; the page shows: ${JSON.stringify(shown)}`);
      for (const m of messages) console.error('  ' + m);
      for (const r of open) console.error(`  unanswered: ${r.method()} ${r.url()}`);
      process.exitCode = 1;
      break;
    }
    if (i > 0) times.push(performance.now() - t0);
  }
  if (!process.exitCode) {
    times.sort((a, b) => a - b);
    const pct = (p) => times[Math.min(times.length - 1, Math.round((p / 100) * (times.length - 1)))];
    console.log(`fleet page load (${agents} rows drawn)        n=${times.length}  p50=${pct(50).toFixed(1)} ms  p90=${pct(90).toFixed(1)} ms  p99=${pct(99).toFixed(1)} ms  max=${pct(100).toFixed(1)} ms`);
  }
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
