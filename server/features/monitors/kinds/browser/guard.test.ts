import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { AppContext } from '../../../../context';
import { installGuard } from './guard';

const CHROMIUM = '/usr/bin/chromium';

/** installGuard against a real Chromium: a page's WebSocket meets the same rule as its requests. */
describe.skipIf(!existsSync(CHROMIUM))('browser request guard', () => {
  let browser: Browser;
  let wss: WebSocketServer;
  let wsPort: number;
  let connections = 0;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    wsPort = (wss.address() as AddressInfo).port;
    wss.on('connection', (s) => {
      connections++;
      s.send('hello');
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    wss?.close();
  });

  /** Opens ws://127.0.0.1:{wsPort} from a page the guard let through; resolves with what the page saw. */
  async function openSocket(allowPrivate: boolean): Promise<string> {
    const context = await browser.newContext();
    try {
      const guard = await installGuard({} as AppContext, context);
      guard.arm(allowPrivate);
      const page = await context.newPage();
      // The page itself is about:blank (not http): only the socket meets the guard's rule.
      return await page.evaluate(
        (port) =>
          new Promise<string>((resolve) => {
            const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
            ws.onmessage = (e) => resolve(`message ${String(e.data)}`);
            ws.onclose = (e) => resolve(`closed ${e.code}`);
          }),
        wsPort,
      );
    } finally {
      await context.close();
    }
  }

  it('refuses a WebSocket to a private address when private targets are blocked', async () => {
    const before = connections;
    expect(await openSocket(false)).toMatch(/^closed /);
    expect(connections).toBe(before);
  }, 60_000);

  it('lets the same WebSocket through to its server when private targets are allowed', async () => {
    const before = connections;
    expect(await openSocket(true)).toBe('message hello');
    expect(connections).toBe(before + 1);
  }, 60_000);
});
