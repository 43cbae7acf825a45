import { EventEmitter } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { printable, serviceFromBanner, tcpScan } from './scanner';

/** A loopback listener that greets each connection with `greeting`. */
async function listener(greeting: Buffer | string | null) {
  const server = net.createServer((s) => {
    s.on('error', () => undefined);
    if (greeting !== null) s.end(greeting);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((r) => server.close(r)) };
}

/** A socket whose connect fails with `code` (what node emits when the machine is out of descriptors). */
function failingSocket(code: string): net.Socket {
  const s = new EventEmitter() as unknown as net.Socket;
  Object.assign(s, { destroy: () => s });
  setImmediate(() => s.emit('error', Object.assign(new Error(`connect ${code}`), { code })));
  return s;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('printable', () => {
  it('keeps printable ASCII, turns line breaks into spaces, drops other bytes, caps at 256', () => {
    expect(printable(Buffer.from('SSH-2.0-x\r\n\x00\x01\xff'))).toBe('SSH-2.0-x');
    expect(printable(Buffer.from(`220 a\r\n220 b ${'y'.repeat(400)}`))).toHaveLength(256);
    expect(serviceFromBanner('SSH-2.0-OpenSSH_9.6')).toBe('ssh');
    expect(serviceFromBanner('220 mail.example.com ESMTP Postfix')).toBe('smtp');
    expect(serviceFromBanner('hello')).toBeUndefined();
  });
});

describe('tcpScan', () => {
  it('finds open ports with their banner, closed ones count as scanned', async () => {
    const a = await listener('SSH-2.0-Test\r\n');
    const b = await listener(null);
    const closedServer = await listener(null);
    const closed = closedServer.port;
    await closedServer.close();
    const open: { port: number; banner?: string }[] = [];
    let scanned = 0;
    await tcpScan({
      address: '127.0.0.1',
      ports: [a.port, b.port, closed],
      concurrency: 3,
      timeoutMs: 1_000,
      signal: new AbortController().signal,
      onOpen: (p) => open.push(p),
      onScanned: () => scanned++,
    });
    expect(scanned).toBe(3);
    expect(open.sort((x, y) => x.port - y.port)).toEqual(
      [{ port: a.port, banner: 'SSH-2.0-Test' }, { port: b.port }].sort((x, y) => x.port - y.port),
    );
    await a.close();
    await b.close();
  });

  it('retries ports that hit EMFILE with a smaller pool and still scans every port', async () => {
    const real = net.connect;
    let failures = 0;
    vi.spyOn(net, 'connect').mockImplementation(((...args: Parameters<typeof net.connect>) => {
      if (failures < 30) {
        failures++;
        return failingSocket('EMFILE');
      }
      return real(...args);
    }) as typeof net.connect);
    const srv = await listener(null);
    const ports = Array.from({ length: 40 }, (_, i) => srv.port - 20 + i).filter((p) => p > 0 && p < 65_536);
    let scanned = 0;
    const open: number[] = [];
    await tcpScan({
      address: '127.0.0.1',
      ports,
      concurrency: 10,
      timeoutMs: 500,
      signal: new AbortController().signal,
      onOpen: (p) => open.push(p.port),
      onScanned: () => scanned++,
    });
    expect(failures).toBe(30);
    expect(scanned).toBe(ports.length);
    expect(open).toContain(srv.port);
    await srv.close();
  });

  it('rejects (and never throws out of a socket) when descriptors stay exhausted', async () => {
    vi.spyOn(net, 'connect').mockImplementation((() => failingSocket('EMFILE')) as typeof net.connect);
    await expect(
      tcpScan({
        address: '127.0.0.1',
        ports: [1, 2, 3],
        concurrency: 3,
        timeoutMs: 100,
        signal: new AbortController().signal,
        onOpen: () => undefined,
        onScanned: () => undefined,
      }),
    ).rejects.toThrow('EMFILE: out of sockets or file descriptors');
  }, 20_000);
});
