import { generateSync } from 'otplib';
import type { Page, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel, makeUser, sendMessage } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  type BrowserHandle,
  deviceTokenOf,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  screenshot,
  submitSignIn,
} from './browser';

/**
 * The web UI end to end: Debian's Chromium (headless) against the real server on loopback. One server
 * and one browser for the whole file; the steps build on each other like a first session does.
 */
if (!hasChromium)
  console.warn('e2e: /usr/bin/chromium is missing (apt-get install chromium); skipping the browser tests');

describe.skipIf(!hasChromium)('web UI in Chromium', () => {
  let t: TestServer;
  let b: BrowserHandle;
  let page: Page;
  const state: { key?: string; channelId?: number } = {};

  const signIn = (p: Page, email: string, password: string) => submitSignIn(p, t.url, { email, password });
  const send = async (key: string, body: Record<string, unknown>) => {
    const res = await fetch(`${t.url}/message`, {
      method: 'POST',
      headers: { 'X-Service-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { id: number };
  };

  beforeAll(async () => {
    ensureRendererBuilt();
    t = await startTestServer();
    b = await launchBrowser();
    ({ page } = await b.newPage());
    page.on('dialog', (d) => void d.accept());
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await t?.close();
  });

  it('signs in with email and password and lands in the inbox', async () => {
    await signIn(page, t.admin.email, t.admin.password);
    await expect.poll(() => page.getByRole('heading', { name: 'All messages' }).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('link', { name: 'Channels', exact: true }).isVisible()).toBe(true);
    // A wrong password is shown as a readable message.
    const other = await b.newPage();
    await signIn(other.page, t.admin.email, 'wrong-password');
    await expect
      .poll(() => other.page.getByRole('alert').textContent())
      .toContain('wrong username or password');
    await other.context.close();
  });

  it('the empty inbox offers a real key and a copyable curl line', async () => {
    await page.getByRole('button', { name: 'Create a channel and show the command' }).click();
    const curl = page.getByLabel('Send a test message', { exact: true });
    await expect
      .poll(() => curl.inputValue())
      .toMatch(/^curl -X POST '.*\/message' -H 'X-Service-Key: A[A-Za-z0-9]{22}'/);
  });

  it('creates a channel and a key for it', async () => {
    await page.getByRole('link', { name: 'Channels', exact: true }).click();
    await page.getByRole('button', { name: 'New channel' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Backups');
    await page.getByLabel('Tags', { exact: true }).fill('ops, nightly');
    await page.getByLabel('Default priority', { exact: true }).fill('6');
    await page.getByRole('button', { name: 'Create channel' }).click();
    const primary = page.getByLabel('Channel key (shown once)', { exact: true });
    await expect.poll(() => primary.inputValue()).toMatch(/^A[A-Za-z0-9]{22}$/);
    await page.getByLabel('Key name', { exact: true }).fill('nightly job');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = page.getByLabel('New key (shown once)', { exact: true });
    await expect.poll(() => key.inputValue()).toMatch(/^A[A-Za-z0-9]{22}$/);
    state.key = await key.inputValue();
    await expect
      .poll(() => page.getByRole('cell', { name: 'nightly job', exact: true }).isVisible())
      .toBe(true);
    const channels = (await t.request('GET', '/application', { token: await deviceTokenOf(page) })).body as {
      id: number;
      name: string;
      tags: string[];
    }[];
    const backups = channels.find((c) => c.name === 'Backups')!;
    expect(backups.tags).toEqual(['ops', 'nightly']);
    state.channelId = backups.id;
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'channels');
  });

  it('shows a message sent by a program in the open inbox without a reload', async () => {
    await page.getByRole('link', { name: 'Inbox', exact: true }).click();
    await expect.poll(() => page.getByText('Live', { exact: true }).isVisible()).toBe(true);
    const navigations: string[] = [];
    page.on('framenavigated', (f) => navigations.push(f.url()));
    await send(state.key!, {
      title: 'Backup finished',
      message: 'nightly backup of /home took 4 min',
      priority: 4,
    });
    await send(state.key!, {
      title: 'Disk almost full',
      message:
        '**/var** is at 93%\n\n<img src=x onerror="window.pwned=1"> [runbook](https://example.com/runbook)',
      priority: 9,
      extras: { 'client::display': { contentType: 'text/markdown' } },
    });
    // Delivered over the socket, no reload (polls wait up to 10 s: vitest.config.ts).
    await expect.poll(() => page.getByRole('heading', { name: 'Disk almost full' }).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('heading', { name: 'Backup finished' }).isVisible()).toBe(true);
    expect(navigations).toEqual([]);
    // Markdown rendered, script-bearing HTML neutralised, links kept safe.
    const md = page.locator('.markdown').first();
    expect(await md.locator('strong').textContent()).toBe('/var');
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(await md.locator('a').getAttribute('rel')).toContain('noopener');
    expect(await page.getByTitle('Priority 9 (high)').count()).toBe(1);
    await screenshot(page, 'inbox');
  });

  it('marks a message read', async () => {
    await page.getByRole('button', { name: 'Mark read: “Backup finished”' }).click();
    await expect
      .poll(() => page.getByRole('button', { name: 'Mark read: “Backup finished”' }).count())
      .toBe(0);
    const list = (await t.request('GET', '/message', { token: await deviceTokenOf(page) })).body as {
      messages: { title: string; read?: boolean }[];
    };
    expect(list.messages.find((m) => m.title === 'Backup finished')?.read).toBe(true);
    expect(list.messages.find((m) => m.title === 'Disk almost full')?.read).toBeUndefined();
  });

  it('searches messages', async () => {
    await page.getByLabel('Search messages', { exact: true }).fill('backup');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Search: backup' }).isVisible()).toBe(true);
    // Both headings are read in one poll: the old list (kept, dimmed, while the search loads) shows
    // both, and only the result shows exactly the match.
    const shown = async () => ({
      backup: await page.getByRole('heading', { name: 'Backup finished' }).count(),
      disk: await page.getByRole('heading', { name: 'Disk almost full' }).count(),
    });
    await expect.poll(shown).toEqual({ backup: 1, disk: 0 });
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Disk almost full' }).isVisible()).toBe(true);
  });

  it('creates an API token that works', async () => {
    await page.getByRole('link', { name: 'API tokens', exact: true }).click();
    await page.getByLabel('Token name', { exact: true }).fill('grafana');
    await page.getByLabel('Access', { exact: true }).selectOption('read');
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByLabel('Token “grafana” (shown once)', { exact: true });
    await expect.poll(() => shown.inputValue()).toMatch(/^M[A-Za-z0-9]{22}$/);
    const res = await t.request('GET', '/message?limit=1', { token: await shown.inputValue() });
    expect(res.status).toBe(200);
    await expect.poll(() => page.getByRole('cell', { name: 'grafana', exact: true }).isVisible()).toBe(true);
  });

  it('pairs a phone by QR code: the phone browser signs in as a new device', async () => {
    await page.getByRole('link', { name: 'Devices', exact: true }).click();
    await page.getByRole('button', { name: 'Pair a phone' }).click();
    await expect.poll(() => page.getByRole('img', { name: 'Pairing QR code' }).isVisible()).toBe(true);
    const link = await page.getByLabel('Pairing link', { exact: true }).inputValue();
    expect(link).toMatch(/\/pair#code=[A-Za-z0-9]{22}$/);
    const phone = await b.newPage({ phone: true });
    await phone.page.goto(link);
    await phone.page.getByLabel('Device name', { exact: true }).fill('Pixel');
    await phone.page.getByRole('button', { name: 'Pair and sign in' }).click();
    await expect.poll(() => phone.page.getByRole('heading', { name: 'All messages' }).isVisible()).toBe(true);
    // Phone-sized layout: the navigation folds behind a labelled menu button.
    expect(await phone.page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(true);
    await expect.poll(() => page.getByText('Paired: “Pixel”', { exact: false }).isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    await page.reload();
    await expect.poll(() => page.getByText('Pixel', { exact: true }).isVisible()).toBe(true);
    // The phone keeps its message socket open, so it shows as online.
    await expect
      .poll(
        () => page.locator('.device', { hasText: 'Pixel' }).getByRole('img', { name: 'online' }).count(),
        { timeout: 15_000 },
      )
      .toBe(1);
    // The app keeps one message socket open on every page, so this browser is online too.
    await expect
      .poll(
        () =>
          page.locator('.device', { hasText: 'this device' }).getByRole('img', { name: 'online' }).count(),
        { timeout: 15_000 },
      )
      .toBe(1);
    await screenshot(page, 'devices');
    await phone.context.close();
  });

  it('sets up 2FA with the authenticator QR code, signs in with a TOTP code, and confirms a password change with one', async () => {
    const u = makeUser(t, { email: 'mfa@example.com', password: 'password-123' });
    const { context: ctx, page: p } = await b.newPage();
    p.on('dialog', (d) => void d.accept());
    await signIn(p, u.email, u.password);
    await p.getByRole('link', { name: 'Account', exact: true }).click();
    // The usage chart's code is a chunk of its own, loaded when the card first shows.
    await expect
      .poll(() => p.getByRole('figure', { name: 'Events per hour today (UTC)' }).locator('svg').count())
      .toBeGreaterThan(0);
    await p.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    // The API asks for sudo first: the dialog confirms with the password and the action is retried.
    await p.getByRole('dialog').getByLabel('Password', { exact: true }).fill(u.password);
    await p.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => p.getByRole('img', { name: 'Authenticator QR code' }).isVisible()).toBe(true);
    const secret = await p.getByLabel('Or enter this secret by hand', { exact: true }).inputValue();
    const totp = () => generateSync({ secret, epoch: Math.floor(t.clock.now() / 1000) });
    await p.getByLabel('Code from the app', { exact: true }).fill(totp());
    await p.getByRole('button', { name: 'Turn on' }).click();
    await expect
      .poll(() => p.getByRole('list', { name: 'Recovery codes' }).locator('li').count())
      .toBeGreaterThan(5);
    await p.getByRole('button', { name: 'Sign out' }).click();
    await signIn(p, u.email, u.password);
    await expect.poll(() => p.getByRole('heading', { name: 'Second step' }).isVisible()).toBe(true);
    t.clock.advance(30_000); // a code is accepted once: use the next one
    await p.getByLabel('6-digit code', { exact: true }).fill('000000');
    await p.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => p.getByRole('alert').textContent()).toContain('invalid code');
    await p.getByLabel('6-digit code', { exact: true }).fill(totp());
    await p.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => p.getByRole('heading', { name: 'All messages' }).isVisible()).toBe(true);
    // With 2FA on, a password change asks for sudo with an authenticator code, then goes through.
    await p.getByRole('link', { name: 'Account', exact: true }).click();
    await p.getByLabel('Current password', { exact: true }).fill(u.password);
    await p.getByLabel('New password', { exact: true }).fill('a-brand-new-password');
    await p.getByLabel('New password again', { exact: true }).fill('a-brand-new-password');
    await p.getByRole('button', { name: 'Change password' }).click();
    t.clock.advance(30_000);
    await p.getByRole('dialog').getByLabel('Authenticator code', { exact: true }).fill(totp());
    await p.getByRole('button', { name: 'Confirm' }).click();
    await expect
      .poll(() => p.getByText('Password changed. Your other devices were signed out.').isVisible())
      .toBe(true);
    await ctx.close();
  });

  it('drops an older page that answers after the inbox moved to another channel', async () => {
    const u = makeUser(t);
    const setup = await deviceToken(t, u, 'setup');
    const busy = await makeChannel(t, setup.token, { name: 'Busy' });
    const quiet = await makeChannel(t, setup.token, { name: 'Quiet' });
    for (let i = 0; i < 55; i++) await sendMessage(t, busy.token, { title: `busy ${i}` });
    await sendMessage(t, quiet.token, { title: 'quiet one' });
    const { context: ctx, page: p } = await b.newPage();
    // Every "older messages" request is held until the view has changed.
    const held = gate();
    const older = /\/message\?.*since=/;
    await p.route(older, async (route) => {
      await held.opened;
      await route.continue();
    });
    await signIn(p, u.email, u.password);
    await p.getByRole('button', { name: 'Busy', exact: true }).click();
    await expect.poll(() => p.getByRole('heading', { name: 'busy 54' }).isVisible()).toBe(true);
    const answered = p.waitForResponse(older);
    await p.getByRole('button', { name: 'Load older messages' }).click();
    await p.getByRole('button', { name: 'Quiet', exact: true }).click();
    await expect.poll(() => p.getByRole('heading', { name: 'quiet one' }).isVisible()).toBe(true);
    held.open();
    await (await answered).finished();
    // Let the page run what the answer schedules: two frames after its body arrived.
    await p.evaluate(
      () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(null)))),
    );
    expect(await p.getByRole('list', { name: 'Messages' }).getByRole('heading').allTextContents()).toEqual([
      'quiet one',
    ]);
    expect(await p.getByRole('button', { name: 'Load older messages' }).count()).toBe(0);
    await ctx.close();
  });

  it('keeps a message that arrives live while a channel loads, though the first page was read before it', async () => {
    const u = makeUser(t);
    const setup = await deviceToken(t, u, 'setup');
    const first = await makeChannel(t, setup.token, { name: 'First' });
    const second = await makeChannel(t, setup.token, { name: 'Second' });
    await sendMessage(t, first.token, { title: 'first one' });
    await sendMessage(t, second.token, { title: 'second old' });
    const { context: ctx, page: p } = await b.newPage();
    const liveFrame = gate();
    p.on('websocket', (socket) =>
      socket.on('framereceived', (f) => {
        if (String(f.payload).includes('second live')) liveFrame.open();
      }),
    );
    await signIn(p, u.email, u.password);
    await expect.poll(() => p.getByText('Live', { exact: true }).isVisible()).toBe(true);
    // Second's first page is read from the server at once but handed to the page only later.
    const held = gate();
    const served = gate();
    await p.route(`**/application/${second.id}/message?*`, async (route) => {
      const response = await route.fetch();
      served.open();
      await held.opened;
      await route.fulfill({ response });
    });
    await p.getByRole('button', { name: 'Second', exact: true }).click();
    await served.opened;
    await sendMessage(t, second.token, { title: 'second live' });
    // Until then the previous list stays, dimmed and marked busy.
    const list = p.getByRole('list', { name: 'Messages' });
    await expect.poll(() => list.getByRole('heading', { name: 'first one' }).isVisible()).toBe(true);
    expect(await list.getAttribute('aria-busy')).toBe('true');
    await liveFrame.opened; // the page has the live message while the first page is still held
    held.open();
    await expect
      .poll(() => list.getByRole('heading').allTextContents())
      .toEqual(['second live', 'second old']);
    await ctx.close();
  });

  it('catches up on messages sent while the message socket was down, once it reconnects', async () => {
    const u = makeUser(t);
    const setup = await deviceToken(t, u, 'setup');
    const channel = await makeChannel(t, setup.token, { name: 'Flaky wifi' });
    await sendMessage(t, channel.token, { title: 'before the drop' });
    const { context: ctx, page: p } = await b.newPage();
    // The page's socket goes through this route; frames from the server can be swallowed, and the
    // page side closed, as a network drop would.
    let current: { ws: WebSocketRoute; drop: boolean } | undefined;
    await p.routeWebSocket(/\/ws\?/, (ws) => {
      const conn = { ws, drop: false };
      current = conn;
      const server = ws.connectToServer();
      server.onMessage((frame) => {
        if (!conn.drop) ws.send(frame);
      });
    });
    await signIn(p, u.email, u.password);
    await expect.poll(() => p.getByText('Live', { exact: true }).isVisible()).toBe(true);
    await expect.poll(() => p.getByRole('heading', { name: 'before the drop' }).isVisible()).toBe(true);
    // The connection open now drops what the server sends, then closes; the reconnect is clean.
    const dropped = current!;
    dropped.drop = true;
    await sendMessage(t, channel.token, { title: 'sent during the drop' });
    await dropped.ws.close();
    await expect.poll(() => p.getByText('Offline, retrying', { exact: true }).isVisible()).toBe(true);
    await expect
      .poll(() => p.getByRole('list', { name: 'Messages' }).getByRole('heading').allTextContents())
      .toEqual(['sent during the drop', 'before the drop']);
    expect(await p.getByText('Live', { exact: true }).isVisible()).toBe(true);
    await ctx.close();
  });

  it('shows the error when a channel cannot load, undimmed, and still shows what arrives live', async () => {
    const u = makeUser(t);
    const setup = await deviceToken(t, u, 'setup');
    const channel = await makeChannel(t, setup.token, { name: 'Broken' });
    const { context: ctx, page: p } = await b.newPage();
    await p.route(`**/application/${channel.id}/message?*`, (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({
          error: 'Service Unavailable',
          errorCode: 503,
          errorDescription: 'store is busy',
        }),
      }),
    );
    await signIn(p, u.email, u.password);
    await expect.poll(() => p.getByText('Live', { exact: true }).isVisible()).toBe(true);
    await p.getByRole('button', { name: 'Broken', exact: true }).click();
    await expect.poll(() => p.getByRole('alert').textContent()).toContain('store is busy');
    const list = p.getByRole('list', { name: 'Messages' });
    expect(await list.getAttribute('aria-busy')).toBe('false');
    await sendMessage(t, channel.token, { title: 'arrives anyway' });
    await expect.poll(() => list.getByRole('heading').allTextContents()).toEqual(['arrives anyway']);
    await ctx.close();
  });

  it('keeps a shown-once key and a half-filled form with their channel when another one is opened', async () => {
    const u = makeUser(t);
    const setup = await deviceToken(t, u, 'setup');
    await makeChannel(t, setup.token, { name: 'Alpha' });
    await makeChannel(t, setup.token, { name: 'Beta' });
    const { context: ctx, page: p } = await b.newPage();
    await signIn(p, u.email, u.password);
    await p.getByRole('link', { name: 'Channels', exact: true }).click();
    const tree = p.getByRole('list', { name: 'Channel tree' });
    await tree.getByRole('button', { name: /^Alpha/ }).click();
    await p.getByLabel('Key name', { exact: true }).fill('alpha job');
    await p.getByRole('button', { name: 'Create key' }).click();
    const shown = p.getByLabel('New key (shown once)', { exact: true });
    await expect.poll(() => shown.inputValue()).toMatch(/^A[A-Za-z0-9]{22}$/);
    await p.getByLabel('Webhook name', { exact: true }).fill('half typed');
    await tree.getByRole('button', { name: /^Beta/ }).click();
    await expect.poll(() => p.getByLabel('Name', { exact: true }).inputValue()).toBe('Beta');
    expect(await shown.count()).toBe(0);
    expect(await p.getByLabel('Webhook name', { exact: true }).inputValue()).toBe('');
    await ctx.close();
  });
});

/** A promise and the function that settles it: holds a routed request, or waits for an event. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open };
}
