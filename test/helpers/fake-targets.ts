import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppContext } from '../../server/context';
import { type CheckIo, monitorNet } from '../../server/features/monitors/kind';
import { ApiError } from '../../server/http/errors';
import { ManualClock } from '../../server/lib/clock';

const tlsDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'tls');

/** The checked-in self-signed certificate (localhost, monitored.test, 127.0.0.1; valid until 2126). */
export const selfSigned = {
  cert: readFileSync(join(tlsDir, 'self-signed.crt')),
  key: readFileSync(join(tlsDir, 'self-signed.key')),
};

export interface FakeTarget {
  /** `http(s)://127.0.0.1:{port}` */
  url: string;
  port: number;
  /** Requests seen, in order (method, path, headers, body). */
  seen: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

/**
 * A monitored site on loopback: `handle` answers each request (after its body was read). With `tls`, it
 * serves the self-signed test certificate. Slow answers are real waits on a real socket, kept short.
 */
export async function startTarget(
  handle: (req: IncomingMessage, res: ServerResponse, body: string) => void,
  opts: { tls?: boolean } = {},
): Promise<FakeTarget> {
  const seen: FakeTarget['seen'] = [];
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      handle(req, res, body);
    });
  };
  const server = opts.tls ? https.createServer(selfSigned, listener) : http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** A loopback TCP server that accepts and then does nothing (a TLS client waits on it: handshake timeout). */
export function startSilentTcp(): Promise<{ port: number; close(): Promise<void> }> {
  return startTcpListener();
}

/**
 * A loopback TCP server that writes `greeting` (if any) to each connection and keeps it open: a service
 * that greets with a banner (`SSH-2.0-…`, `220 … ESMTP`), or a silent one.
 */
export async function startTcpListener(greeting?: string): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const s = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('error', () => undefined);
    sock.on('close', () => sockets.delete(sock));
    if (greeting !== undefined) sock.write(greeting);
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        for (const sock of sockets) sock.destroy();
        s.close(() => resolve());
      }),
  };
}

/**
 * A context for unit tests of monitor kinds and the network layer: a ManualClock and the monitorNet host
 * overrides (`monitored.test` → 127.0.0.1); nothing else of AppContext is read by them.
 */
export function monitorTestCtx(): AppContext {
  const ctx = { clock: new ManualClock() } as unknown as AppContext;
  monitorNet(ctx).hosts = new Map([['monitored.test', '127.0.0.1']]);
  return ctx;
}

/** The CheckIo the engine would hand a kind: a real timeout signal (short, loopback only). */
export function testIo(ctx: AppContext, over: Partial<CheckIo> = {}): CheckIo {
  const timeoutSec = over.timeoutSec ?? 5;
  return {
    ctx,
    name: 'test monitor',
    signal: AbortSignal.timeout(timeoutSec * 1000),
    timeoutSec,
    startedAt: ctx.clock.now(),
    allowPrivate: true,
    test: true,
    ...over,
  };
}

/** The description of the 400 `fn` throws (a kind's parse), failing the test when it throws nothing else. */
export function badRequestOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError && e.status === 400) return e.description;
    throw e;
  }
  throw new Error('expected a 400, but the input was accepted');
}
