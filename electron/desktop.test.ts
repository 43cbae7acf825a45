import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../server/config';
import { createServer } from '../server/index';
import { memoryLogger } from '../server/lib/log';
import { isOnBattery, presentPower } from '../server/lib/power';
import { applicationMenu, type DesktopDeps, type DesktopHandle, runDesktop } from './desktop';
import type { FetchLike } from './desktop-session';
import { IPC } from './ipc/channels';
import type { DesktopSettings } from './settings';
import { type FakeElectron, fakeElectron, memoryStore } from './testing/fake-electron';
import { V8_FLAGS_GIVEN_ENV } from './v8-relaunch';

const TOKEN = `C${'a'.repeat(22)}`;

/** The API as the main process reads it, canned: channels 10 and 11, this device mutes 11, 3 unread. */
function fakeApi(): { fetch: FetchLike; calls: string[] } {
  const calls: string[] = [];
  const routes: Record<string, unknown> = {
    '/application': [
      { id: 10, name: 'Backups', image: '' },
      { id: 11, name: 'Noisy', image: '' },
    ],
    '/client': [
      { id: 4, current: false },
      { id: 5, current: true },
    ],
    '/client/5/subscriptions': { channelIds: [11] },
    '/current/user/quiet-hours': {
      enabled: false,
      timezone: 'UTC',
      start: '23:00',
      end: '08:00',
      days: [],
      breakthroughPriority: 8,
      digest: false,
    },
    '/message?limit=200': { paging: { size: 4, limit: 200 }, messages: [{}, {}, { read: true }, {}] },
  };
  const fetch: FetchLike = async (url, init) => {
    const path = new URL(url).pathname + new URL(url).search;
    calls.push(`${path} ${init?.headers?.Authorization ?? ''}`);
    const body = routes[path];
    return {
      ok: body !== undefined,
      status: body === undefined ? 404 : 200,
      json: async () => body,
      arrayBuffer: async () => new ArrayBuffer(0),
    };
  };
  return { fetch, calls };
}

describe('desktop main process (with a stand-in for electron)', () => {
  let userData = '';
  let handle: DesktopHandle | null = null;
  /** The host each server was asked to bind; tests bind loopback only, whatever was asked. */
  const askedHosts: string[] = [];
  afterEach(async () => {
    await handle?.shutdown();
    if (userData) rmSync(userData, { recursive: true, force: true });
  });

  const start = async (
    e: FakeElectron,
    api = fakeApi(),
    now = () => Date.parse('2026-01-05T12:00:00Z'),
    more: Partial<DesktopDeps> = {},
  ) => {
    handle = await runDesktop({
      electron: e,
      factory: {
        createServer: (config) => {
          askedHosts.push(config.host);
          return createServer(
            { ...config, host: '127.0.0.1' },
            { log: memoryLogger(), schedulerTickMs: 3_600_000 },
          );
        },
        loadConfig: (input) =>
          loadConfig({
            ...input,
            overrides: { ...input.overrides, port: 0, bcryptRounds: 4, adminEmail: 'a@example.com' },
          }),
      },
      store: memoryStore<DesktopSettings>(),
      paths: { preload: '/app/dist/electron/preload.cjs', icon: '/app/icon.png', trayIcon: '/app/tray.png' },
      env: {},
      networkInterfaces: () => ({
        eth0: [{ address: '192.168.1.9', family: 'IPv4', internal: false } as never],
      }),
      fetch: api.fetch,
      now,
      log: () => {},
      ...more,
    });
    return { handle: handle!, api };
  };

  it('a second instance quits at once without starting a server', async () => {
    userData = mkdtempSync(join(tmpdir(), 'belfry-desktop-'));
    const e = fakeElectron({ userData, singleInstance: false });
    expect(await runDesktop({ electron: e } as unknown as DesktopDeps)).toBeNull();
    expect(e.quitCalls).toBe(1);
    expect(e.windows).toHaveLength(0);
  });

  describe('the server’s V8 flags (they only work at launch)', () => {
    const flags = ['--max-semi-space-size=16'];

    it('a start without them (from the icon) relaunches once with them, before any server or window', async () => {
      userData = mkdtempSync(join(tmpdir(), 'belfry-desktop-'));
      const e = fakeElectron({ userData });
      const env: NodeJS.ProcessEnv = {};
      const hosts = askedHosts.length;
      const { handle } = await start(e, fakeApi(), undefined, {
        env,
        v8: { flags, argv: ['/opt/Belfry/belfry', '--hidden'] },
      });
      expect(handle).toBeNull();
      expect(e.relaunches).toEqual([['--hidden', '--js-flags=--max-semi-space-size=16']]);
      expect(e.exitCodes).toEqual([0]);
      expect(env[V8_FLAGS_GIVEN_ENV]).toBe('1');
      expect(askedHosts).toHaveLength(hosts);
      expect(e.windows).toHaveLength(0);
    });

    it('the relaunched instance, with the flags, starts as usual', async () => {
      userData = mkdtempSync(join(tmpdir(), 'belfry-desktop-'));
      const e = fakeElectron({ userData });
      const { handle } = await start(e, fakeApi(), undefined, {
        v8: { flags, argv: ['/opt/Belfry/belfry', '--hidden', '--js-flags=--max-semi-space-size=16'] },
      });
      expect(handle).not.toBeNull();
      expect(e.relaunches).toEqual([]);
      expect(e.windows).toHaveLength(1);
    });

    it('a second instance only hands over to the first: no relaunch', async () => {
      userData = mkdtempSync(join(tmpdir(), 'belfry-desktop-'));
      const e = fakeElectron({ userData, singleInstance: false });
      const deps = { electron: e, env: {}, v8: { flags, argv: ['belfry'] } };
      expect(await runDesktop(deps as unknown as DesktopDeps)).toBeNull();
      expect(e.relaunches).toEqual([]);
      expect(e.quitCalls).toBe(1);
    });
  });

  it('hosts the server with its data in userData, opens one locked-down window and tells the first-run password', async () => {
    userData = mkdtempSync(join(tmpdir(), 'belfry-desktop-'));
    const e = fakeElectron({ userData });
    const { handle } = await start(e);
    const { server, url } = handle.hosted();
    expect(server.ctx.config.dataDir).toBe(join(userData, 'data'));
    expect(server.ctx.config.host).toBe('127.0.0.1');
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect(e.windows).toHaveLength(1);
    const win = e.windows[0]!;
    expect(win.options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    });
    expect(win.webContents.url).toBe(`http://127.0.0.1:${handle.hosted().port}`);
    expect(win.webContents.windowOpenHandler).not.toBeNull(); // hardened through web-contents-created
    expect(e.loginItems).toEqual([{ openAtLogin: false, openAsHidden: true }]);
    expect(e.messageBoxes[0]!.message).toBe('Sign in as a@example.com');
    // Closing the window hides it to the tray.
    win.close();
    expect(win.destroyed).toBe(false);
  });

  it('tray count, notifications honouring mutes and the pause, click opens the message', async () => {
    userData = mkdtempSync(join(tmpdir(), 'belfry-desktop-'));
    const e = fakeElectron({ userData });
    const { handle, api } = await start(e);
    const win = e.windows[0]!;
    const origin = `http://127.0.0.1:${handle.hosted().port}`;
    const as = { contents: win.webContents, frameUrl: `${origin}/inbox` };
    await e.invoke(IPC.setSession, as, TOKEN);
    expect(api.calls).toContain(`/application Bearer ${TOKEN}`);
    const tray = e.trays[0]!;
    expect(tray.title).toBe('3');

    const bus = handle.hosted().server.ctx.bus;
    const message = {
      id: 7,
      appid: 10,
      title: 'Backup failed',
      message: 'disk full',
      priority: 6,
      date: '2026-01-05T12:00:00.000Z',
    };
    bus.emit('message:created', { message, ownerId: 1 });
    await vi.waitFor(() => expect(e.notifications).toHaveLength(1));
    const n = e.notifications[0]!;
    expect(n.options).toMatchObject({
      title: 'Backup failed',
      body: 'disk full',
      silent: false,
      urgency: 'normal',
    });
    expect(n.shown).toBe(true);
    expect(tray.title).toBe('4');

    bus.emit('message:created', { message: { ...message, id: 8, appid: 11 }, ownerId: 1 }); // muted here
    bus.emit('message:created', { message: { ...message, id: 9, appid: 999 }, ownerId: 2 }); // not visible
    const silent = { ...message, id: 11, extras: { 'service::silent': true } }; // in a maintenance window
    bus.emit('message:created', { message: silent, ownerId: 1 });
    await vi.waitFor(() =>
      expect(handle.notifier.recent.map((r) => r.decision.reason).sort()).toEqual([
        'maintenance',
        'muted',
        'normal',
        'not-visible',
      ]),
    );
    expect(e.notifications).toHaveLength(1);
    expect(tray.title).toBe('6');

    win.hide();
    n.click();
    expect(win.visible).toBe(true);
    expect(win.webContents.sent).toEqual([{ channel: IPC.openMessage, args: [{ id: 7, appid: 10 }] }]);

    tray.menu.find((i) => i.label === 'Pause notifications for 1 hour')!.click!();
    expect(tray.menu[1]!.label).toBe('Resume notifications');
    bus.emit('message:created', { message: { ...message, id: 10 }, ownerId: 1 });
    await vi.waitFor(() => expect(handle.notifier.recent.at(-1)!.decision.reason).toBe('paused'));
    expect(e.notifications).toHaveLength(1);

    await e.invoke(IPC.setSession, as, null);
    expect(tray.title).toBe('');
  });

  it('IPC refuses other senders and bad arguments; openExternal only for http(s)', async () => {
    userData = mkdtempSync(join(tmpdir(), 'belfry-desktop-'));
    const e = fakeElectron({ userData });
    const { handle } = await start(e);
    const win = e.windows[0]!;
    const origin = `http://127.0.0.1:${handle.hosted().port}`;
    const as = { contents: win.webContents, frameUrl: `${origin}/` };
    await expect(
      e.invoke(IPC.setSession, { contents: win.webContents, frameUrl: 'https://evil.example/' }, TOKEN),
    ).rejects.toThrow(/untrusted/);
    await expect(e.invoke(IPC.setSession, as, 'not-a-token')).rejects.toThrow(/device token/);
    expect(await e.invoke(IPC.openExternal, as, 'javascript:alert(1)')).toBe(false);
    expect(await e.invoke(IPC.openExternal, as, 'https://example.com/')).toBe(true);
    expect(e.opened).toEqual(['https://example.com/']);
    await expect(e.invoke(IPC.setSettings, as, { port: 1 })).rejects.toThrow(/port/);
    expect(await e.invoke(IPC.getSettings, as)).toEqual({
      settings: { openAtLogin: false, lanAccess: false, port: 7878 },
      lanUrls: [],
      url: origin,
    });
    expect(await e.invoke(IPC.setSettings, as, { openAtLogin: true })).toEqual({
      settings: { openAtLogin: true, lanAccess: false, port: 7878 },
      restarting: false,
    });
    expect(e.loginItems.at(-1)).toEqual({ openAtLogin: true, openAsHidden: true });
  });

  it('LAN access restarts the server on 0.0.0.0 and shows the LAN URL in the tray', async () => {
    userData = mkdtempSync(join(tmpdir(), 'belfry-desktop-'));
    const e = fakeElectron({ userData });
    const { handle } = await start(e);
    const win = e.windows[0]!;
    const as = { contents: win.webContents, frameUrl: `http://127.0.0.1:${handle.hosted().port}/` };
    const first = handle.hosted().server;
    expect(await e.invoke(IPC.setSettings, as, { lanAccess: true })).toMatchObject({ restarting: true });
    await vi.waitFor(() => expect(handle.hosted().server).not.toBe(first), { timeout: 10_000 });
    await vi.waitFor(() => expect(win.webContents.url).toBe(`http://127.0.0.1:${handle.hosted().port}`));
    expect(askedHosts.at(-1)).toBe('0.0.0.0');
    expect(handle.hosted().server.ctx.config).toMatchObject({ lan: true });
    const lan = `http://192.168.1.9:${handle.hosted().port}`;
    expect(e.trays[0]!.menu.map((i) => i.label)).toContain(`LAN: ${lan}`);
    const asNow = { contents: win.webContents, frameUrl: `http://127.0.0.1:${handle.hosted().port}/` };
    expect(await e.invoke(IPC.getSettings, asNow)).toMatchObject({ lanUrls: [lan] });
  });

  it('wake tells the server it resumed (clock gap, jobs re-planned); quitting shuts down in order and exits 0', async () => {
    userData = mkdtempSync(join(tmpdir(), 'belfry-desktop-'));
    const e = fakeElectron({ userData });
    const { handle } = await start(e);
    const server = handle.hosted().server;
    const resumed = vi.spyOn(server, 'resumed');
    const replan = vi.spyOn(server.scheduler, 'replan');
    const gaps: unknown[] = [];
    server.ctx.bus.on('clock:gap', (g) => gaps.push(g));
    e.powerEvents.fire('resume');
    expect(resumed).toHaveBeenCalledTimes(1);
    expect(replan).toHaveBeenCalledTimes(1);
    await vi.waitFor(() => expect(gaps).toEqual([expect.objectContaining({ reason: 'resume' })]));

    const order: string[] = [];
    const schedStop = server.scheduler.stop.bind(server.scheduler);
    vi.spyOn(server.scheduler, 'stop').mockImplementation(async () => {
      order.push('jobs');
      await schedStop();
    });
    const storeClose = server.store.close.bind(server.store);
    vi.spyOn(server.store, 'close').mockImplementation(async () => {
      order.push('store');
      await storeClose();
    });
    e.app.quit();
    await vi.waitFor(() => expect(e.exitCodes).toEqual([0]));
    expect(order).toEqual(['jobs', 'store']);
    expect(e.trays[0]!.destroyed).toBe(true);
    expect(e.handlers.size).toBe(0);
    expect(server.httpServer.listening).toBe(false);
  });

  it('forwards the power source to the hosted server at start and on on-battery / on-ac', async () => {
    userData = mkdtempSync(join(tmpdir(), 'belfry-desktop-'));
    const e = fakeElectron({ userData });
    e.onBattery = true;
    const { handle } = await start(e);
    const ctx = handle.hosted().server.ctx;
    expect(presentPower(ctx)).toMatchObject({ onBattery: true, source: 'electron', intervalFactor: 2 });
    const changes: unknown[] = [];
    ctx.bus.on('power:changed', (c) => changes.push(c));
    e.powerEvents.fire('on-ac');
    expect(isOnBattery(ctx)).toBe(false);
    e.powerEvents.fire('on-ac'); // no change, no event
    e.powerEvents.fire('on-battery');
    expect(isOnBattery(ctx)).toBe(true);
    expect(changes).toEqual([{ onBattery: false }, { onBattery: true }]);
  });
});

describe('applicationMenu', () => {
  it('gives macOS the Edit roles copy and paste need, and other platforms no menu bar', () => {
    expect(applicationMenu('darwin')).toEqual([
      { role: 'appMenu' },
      { role: 'editMenu' },
      { role: 'windowMenu' },
    ]);
    expect(applicationMenu('linux')).toBeNull();
    expect(applicationMenu('win32')).toBeNull();
  });
});
