/**
 * The browser bench's reference (issue 13): the same three steps as the benched browser workflow, done by
 * bare playwright-core on the same Chromium with the same launch arguments — a fresh context per check,
 * no Belfry (no engine, no request guard, no database). Runs as a child process so its Chromium tree can
 * be told apart from Belfry's in the memory figures. Protocol: a line `check` on stdin → a line with the
 * check's milliseconds on stdout; end of stdin closes the browser and exits.
 * Usage: tsx test/bench/servers/browser-reference.ts <chromium path> <page url>
 */
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';
import { LAUNCH_ARGS } from '../../../server/lib/chromium';

const [executablePath, url] = process.argv.slice(2);
if (!executablePath || !url) throw new Error('usage: browser-reference.ts <chromium path> <page url>');

const browser = await chromium.launch({ executablePath, headless: true, args: LAUNCH_ARGS });
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== 'check') continue;
  const t0 = performance.now();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    await page.fill('#q', 'lamp');
    await page.locator('#out', { hasText: 'searching lamp' }).waitFor({ timeout: 10_000 });
  } finally {
    await context.close();
  }
  process.stdout.write(`${performance.now() - t0}\n`);
}
await browser.close();
