import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { parseHostPort } from '../config';
import type { PublicSurface } from '../context';
import type { Logger } from '../lib/log';
import { guardConnections } from './connections';
import { type ApiError, errorBody, errors, refuseOnSocket } from './errors';

/**
 * The public listener (BELFRY_PUBLIC_LISTEN; docs/public-access.md): a second node:http server in front
 * of the same request listener as the main one (lean lane, then express), that lets through only the
 * routes the internet may call — public ingest, status pages, signed links, /health — and reads no
 * credentials. A tunnel forwards here, never to the main listener.
 */

/** Path prefixes (a token or slug follows) and exact paths served on the public listener. */
const PUBLIC_PREFIXES = [
  '/webhook/',
  '/heartbeat/ping/',
  '/router/',
  '/metric/',
  '/script/',
  '/status/',
  '/status-subscribe/',
  '/image/',
] as const;
const PUBLIC_EXACT: ReadonlySet<string> = new Set(['/a/answer', '/m/read', '/health']);

/**
 * Request headers a credential could travel in (http/auth.ts reads the first four; the rest are what
 * other servers read), removed before dispatch so nothing behind this listener can authenticate.
 */
const CREDENTIAL_HEADERS = [
  'authorization',
  'cookie',
  'x-service-key',
  'x-legacy-key',
  'x-gotify-key',
  'x-api-key',
  'proxy-authorization',
] as const;

/** Sockets accepted by a public listener: authenticate() refuses every credential on them (http/auth.ts). */
const publicSockets = new WeakSet<object>();

/** Whether a request arrived on a public listener (its socket was accepted there). */
export function isPublicSocket(socket: object | undefined): boolean {
  return socket !== undefined && publicSockets.has(socket);
}

/**
 * Whether `path` (the request target before `?`, as sent) is a public route. Case-sensitive and literal:
 * `/Client`, `/webhook` without a token, dot segments and percent-encoded slashes or dots never match.
 */
export function isPublicPath(path: string): boolean {
  if (PUBLIC_EXACT.has(path)) return true;
  if (/\/\.{1,2}(?:\/|$)|%2[ef]|%5c|\\/i.test(path)) return false;
  return PUBLIC_PREFIXES.some((p) => path.length > p.length && path.startsWith(p));
}

/** The gate: a public path goes to `inner` with its credential headers removed; anything else is 404. */
export function publicRequestListener(inner: RequestListener): RequestListener {
  return (req, res) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (!path.startsWith('/') || !isPublicPath(path)) {
      const body = JSON.stringify(errorBody(errors.routeNotFound(req.method ?? 'GET', path.slice(0, 200))));
      res.writeHead(404, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
      });
      res.end(body);
      return;
    }
    stripCredentials(req);
    inner(req, res);
  };
}

function stripCredentials(req: IncomingMessage): void {
  for (const h of CREDENTIAL_HEADERS) delete req.headers[h];
  // The raw list too: nothing below should find a credential by walking it.
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2)
    if ((CREDENTIAL_HEADERS as readonly string[]).includes(raw[i]!.toLowerCase())) raw.splice(i, 2);
}

/** Every upgrade (`/ws`, `/stream`, anything) is refused: the public listener carries no live sockets. */
function refuseUpgrade(req: IncomingMessage, socket: Duplex): void {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  refuseOnSocket(
    socket,
    errors.routeNotFound(req.method ?? 'GET', (q < 0 ? url : url.slice(0, q)).slice(0, 200)),
  );
}

/**
 * The public listener of one server. Listens at start when BELFRY_PUBLIC_LISTEN is set; otherwise on
 * 127.0.0.1:0 the first time a tunnel needs it (ensure()). Stopped with the server.
 */
export class PublicListener implements PublicSurface {
  readonly server: Server;
  tunnelUrl: string | null = null;
  private listening: Promise<{ host: string; port: number }> | null = null;
  private closed = false;

  constructor(
    inner: RequestListener,
    private readonly configured: string | undefined,
    private readonly log: Logger,
  ) {
    this.server = createServer(publicRequestListener(inner));
    // The main listener's caps and header timeouts (connections.ts) guard this one too; its accounting
    // listener counts upgrades, refuseUpgrade answers them.
    guardConnections(this.server, log);
    this.server.on('connection', (socket: Socket) => publicSockets.add(socket));
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
      socket.on('error', () => socket.destroy());
      try {
        refuseUpgrade(req, socket);
      } catch {
        socket.destroy();
      }
    });
  }

  /** BELFRY_PUBLIC_LISTEN, when set. */
  get configuredAddress(): string | undefined {
    return this.configured;
  }

  address(): { host: string; port: number } | null {
    const a = this.server.listening ? (this.server.address() as AddressInfo | null) : null;
    return a ? { host: a.address, port: a.port } : null;
  }

  /** Listens (once) at BELFRY_PUBLIC_LISTEN, or 127.0.0.1:0 without it; resolves the address. */
  ensure(): Promise<{ host: string; port: number }> {
    if (this.closed) return Promise.reject(new Error('the server is stopping'));
    this.listening ??= new Promise<{ host: string; port: number }>((resolve, reject) => {
      const where = this.configured ? parseHostPort(this.configured) : undefined;
      const host = where?.host ?? '127.0.0.1';
      const port = where?.port ?? 0;
      const onError = (err: Error) => {
        this.listening = null;
        reject(err);
      };
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        const a = this.address()!;
        this.log.info('public listener started', { host: a.host, port: a.port });
        resolve(a);
      });
    });
    return this.listening;
  }

  /** Stops accepting; in-flight requests finish (closeAllConnections after `graceMs`). */
  async stop(graceMs = 5_000): Promise<void> {
    this.closed = true;
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const force = setTimeout(() => this.server.closeAllConnections(), graceMs);
    await closed;
    clearTimeout(force);
  }
}

/** 401 for a credential that reached authenticate() through the public listener (defence in depth). */
export function publicListenerCredential(): ApiError {
  return errors.unauthorized('the public listener reads no credentials');
}
