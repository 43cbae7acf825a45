import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../context';
import { ManualClock } from '../../lib/clock';
import { isOnline, WITNESS_CACHE_MS } from './witness';

/** Only what isOnline reads: the clock and the configured probes (loopback here, never the internet). */
function ctxWith(probes: { host: string; port: number }[], clock = new ManualClock()): AppContext {
  return { clock, config: { witnessProbes: probes } } as unknown as AppContext;
}

/** Without a non-internal interface the witness answers offline before probing (a machine with no network). */
const interfaceUp = Object.values(networkInterfaces()).some((l) => (l ?? []).some((a) => !a.internal));

const servers: Server[] = [];
async function listening(): Promise<number> {
  const s = createServer((socket) => socket.destroy());
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return (s.address() as AddressInfo).port;
}
async function closedPort(): Promise<number> {
  const port = await listening();
  const s = servers.pop()!;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
});

describe('connectivity witness probes', () => {
  it('is online when one configured probe accepts a connection, offline when none does', async () => {
    const open = await listening();
    const shut = await closedPort();
    expect(
      await isOnline(
        ctxWith([
          { host: '127.0.0.1', port: shut },
          { host: '127.0.0.1', port: open },
        ]),
      ),
    ).toBe(true);
    expect(await isOnline(ctxWith([{ host: '127.0.0.1', port: shut }]))).toBe(false);
  });

  it('asks again only after the cache time', async () => {
    const clock = new ManualClock();
    const port = await listening();
    const ctx = ctxWith([{ host: '127.0.0.1', port }], clock);
    expect(await isOnline(ctx)).toBe(interfaceUp);
    await new Promise<void>((r) => servers.pop()!.close(() => r()));
    expect(await isOnline(ctx)).toBe(interfaceUp); // cached verdict
    clock.advance(WITNESS_CACHE_MS);
    expect(await isOnline(ctx)).toBe(false);
  });
});
