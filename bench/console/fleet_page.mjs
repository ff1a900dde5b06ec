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
  await page.goto(base, { waitUntil: 'load' });
  await page.evaluate((t) => sessionStorage.setItem('agentckpt.console.token', t), token);
  const times = [];
  for (let i = 0; i <= Number(iterations); i++) {
    const t0 = performance.now();
    await page.goto(`${base}?load=${i}#/`, { waitUntil: 'load' });
    await page.waitForFunction((n) => document.querySelectorAll('#fleet tbody tr').length === n,
      { timeout: 60000, polling: 'raf' }, Number(agents));
    if (i > 0) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const pct = (p) => times[Math.min(times.length - 1, Math.round((p / 100) * (times.length - 1)))];
  console.log(`fleet page load (${agents} rows drawn)        n=${times.length}  p50=${pct(50).toFixed(1)} ms  p90=${pct(90).toFixed(1)} ms  p99=${pct(99).toFixed(1)} ms  max=${pct(100).toFixed(1)} ms`);
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
