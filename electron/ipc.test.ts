import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { IPC } from './ipc/channels';
import { IpcRefused, registerIpc } from './ipc/register';
import { FakeSession, FakeWebContents, fakeElectron } from './testing/fake-electron';
import { isTrustedSender } from './trusted-sender';

const origin = 'http://127.0.0.1:7878';

describe('IPC sender checks', () => {
  const own = new FakeWebContents(new FakeSession());
  const other = new FakeWebContents(new FakeSession());
  const ev = (contents: FakeWebContents, url: string | null) => ({
    sender: contents,
    senderFrame: url === null ? null : { url },
  });
  it('isTrustedSender accepts only our window showing the app origin', () => {
    const ids = new Set([own.id]);
    expect(isTrustedSender(ev(own, `${origin}/inbox`), origin, ids)).toBe(true);
    expect(isTrustedSender(ev(other, `${origin}/inbox`), origin, ids)).toBe(false);
    expect(isTrustedSender(ev(own, 'https://evil.example/'), origin, ids)).toBe(false);
    expect(isTrustedSender(ev(own, 'http://127.0.0.1:9999/'), origin, ids)).toBe(false);
    expect(isTrustedSender(ev(own, null), origin, ids)).toBe(false);
  });
  it('registerIpc runs a handler for a trusted sender and refuses an untrusted one without running it', async () => {
    const e = fakeElectron({ userData: '/tmp/none' });
    const ran: unknown[][] = [];
    const refused: string[] = [];
    const handler = (...args: unknown[]) => {
      ran.push(args);
      return 'ok';
    };
    const dispose = registerIpc(
      e.ipcMain,
      {
        [IPC.setSession]: handler,
        [IPC.unreadChanged]: handler,
        [IPC.openExternal]: handler,
        [IPC.getSettings]: handler,
        [IPC.setSettings]: handler,
      },
      (event) => isTrustedSender(event, origin, new Set([own.id])),
      (channel) => refused.push(channel),
    );
    expect(await e.invoke(IPC.getSettings, { contents: own, frameUrl: `${origin}/` }, 1, 'a')).toBe('ok');
    expect(ran).toEqual([[1, 'a']]);
    await expect(
      e.invoke(IPC.setSession, { contents: own, frameUrl: 'https://evil.example/' }, 'x'),
    ).rejects.toThrow(IpcRefused);
    await expect(
      e.invoke(IPC.openExternal, { contents: other, frameUrl: `${origin}/` }, 'x'),
    ).rejects.toThrow(IpcRefused);
    expect(ran).toHaveLength(1);
    expect(refused).toEqual([IPC.setSession, IPC.openExternal]);
    dispose();
    expect(e.handlers.size).toBe(0);
  });
  it('the preload exposes one function per channel with the same names, never ipcRenderer itself', () => {
    const src = readFileSync(new URL('./preload/preload.cts', import.meta.url), 'utf8');
    const used = new Set([...src.matchAll(/'(belfry:[a-z-]+)'/g)].map((m) => m[1]));
    expect([...used].sort()).toEqual(Object.values(IPC).sort());
    expect(src).toMatch(/exposeInMainWorld\('belfryDesktop', api\)/);
    expect(src).not.toMatch(/exposeInMainWorld\([^)]*ipcRenderer/);
    expect(src).not.toMatch(/ipcRenderer\.send\(/);
  });
});
