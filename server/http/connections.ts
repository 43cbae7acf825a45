import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  HTTP_FD_RESERVE,
  HTTP_HEADERS_TIMEOUT_MS,
  HTTP_MAX_CONNECTIONS,
  HTTP_MAX_PENDING_SOCKETS,
  HTTP_REQUEST_TIMEOUT_MS,
} from '../lib/limits';
import type { Logger } from '../lib/log';
import { ApiError, errors, refuseOnSocket } from './errors';

export interface ConnectionLimits {
  /** Sockets without a request in progress (not yet sent one, or idle between keep-alive requests). */
  maxPending: number;
  /** Every open socket, live WebSockets and SSE streams included. */
  maxConnections: number;
}

/** What a socket is doing; a Map keeps insertion order, so the first entry of a set is the oldest. */
interface Tracked {
  /** The request in progress on this socket, or null between requests. */
  req: IncomingMessage | null;
}

/**
 * Connection accounting in front of the HTTP server (issue 21: ~1,000 slow-header sockets exhausted the
 * file descriptors and every new connection was reset, /health included). Nobody is refused for arriving
 * while an attacker holds sockets: when a cap is reached the OLDEST socket that has nothing to show for
 * it is closed instead, so a quick client (/health, the owner's UI) always gets through:
 * - over `maxPending`, the oldest pending socket (no request in progress) is closed;
 * - over `maxConnections`, the oldest pending one, else the oldest one still sending its request body
 *   (slow uploads), else the newcomer (everything else is a live socket, capped per token and user).
 * Node's own headersTimeout/requestTimeout bound how long a request may take to arrive.
 */
export class ConnectionGuard {
  private readonly all = new Map<Socket, Tracked>();
  private readonly pending = new Set<Socket>();
  readonly limits: ConnectionLimits;
  readonly counters = { accepted: 0, evicted: 0, refused: 0 };

  constructor(
    private readonly log: Logger,
    limits: Partial<ConnectionLimits> = {},
  ) {
    this.limits = {
      maxPending: HTTP_MAX_PENDING_SOCKETS,
      maxConnections: connectionCap(HTTP_MAX_CONNECTIONS, openFileLimit()),
      ...limits,
    };
  }

  /** Lowers or raises the caps of a running server (tests lower them instead of opening thousands). */
  configure(limits: Partial<ConnectionLimits>): void {
    Object.assign(this.limits, limits);
  }

  /** Open sockets and pending ones. */
  size(): { open: number; pending: number } {
    return { open: this.all.size, pending: this.pending.size };
  }

  attach(server: Server): void {
    server.headersTimeout = HTTP_HEADERS_TIMEOUT_MS;
    server.requestTimeout = HTTP_REQUEST_TIMEOUT_MS;
    server.on('connection', (socket: Socket) => this.onConnection(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.onRequest(req, res));
    const onUpgrade = (req: IncomingMessage) => this.onUpgrade(req);
    accounting.add(onUpgrade);
    server.on('upgrade', onUpgrade);
    // Requests node's parser rejects (bad request line, header too large, header timeout) get the API's
    // error body like every other 4xx, instead of node's plain-text answer.
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket));
    // Without a listener an accept error (EMFILE) would be thrown as an uncaught 'error' event.
    server.on('error', (err: NodeJS.ErrnoException) => {
      if (!server.listening) return; // start() reports listen errors itself
      this.log.warn('accepting a connection failed', { code: err.code, err: err.message });
      if (err.code === 'EMFILE' || err.code === 'ENFILE') this.evictOldestPending();
    });
  }

  private onConnection(socket: Socket): void {
    this.counters.accepted++;
    if (this.all.size >= this.limits.maxConnections && !this.makeRoom()) {
      this.counters.refused++;
      socket.destroy();
      return;
    }
    this.all.set(socket, { req: null });
    this.pending.add(socket);
    socket.once('close', () => {
      this.all.delete(socket);
      this.pending.delete(socket);
    });
    while (this.pending.size > this.limits.maxPending && this.evictOldestPending()) {}
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    const entry = this.all.get(socket);
    if (!entry) return;
    this.pending.delete(socket);
    entry.req = req;
    res.once('close', () => {
      if (entry.req !== req) return;
      entry.req = null;
      // Idle keep-alive: pending again, as the newest (delete + add moves it to the end).
      if (!socket.destroyed && this.all.has(socket)) this.pending.add(socket);
    });
  }

  private onUpgrade(req: IncomingMessage): void {
    const entry = this.all.get(req.socket);
    if (!entry) return;
    this.pending.delete(req.socket);
    entry.req = req;
  }

  private evictOldestPending(): boolean {
    for (const socket of this.pending) {
      this.evict(socket);
      return true;
    }
    return false;
  }

  /** Frees one slot for a newcomer: the oldest pending socket, else the oldest still uploading. */
  private makeRoom(): boolean {
    if (this.evictOldestPending()) return true;
    for (const [socket, entry] of this.all)
      if (entry.req && !entry.req.complete && !entry.req.headers.upgrade) {
        this.evict(socket);
        return true;
      }
    return false;
  }

  private evict(socket: Socket): void {
    this.counters.evicted++;
    this.pending.delete(socket);
    this.all.delete(socket);
    socket.destroy();
  }
}

const guards = new WeakMap<Server, ConnectionGuard>();
/** The guard's own 'upgrade' listeners: they count sockets and never answer one. */
const accounting = new WeakSet<(...args: never[]) => unknown>();

/** Whether an 'upgrade' listener only counts (realtime/ws.ts answers 404 when no other listener owns a path). */
export function isAccountingListener(listener: unknown): boolean {
  return typeof listener === 'function' && accounting.has(listener as (...args: never[]) => unknown);
}

/** Installs the guard on a server (server/index.ts does, before the realtime feature attaches). */
export function guardConnections(server: Server, log: Logger): ConnectionGuard {
  const guard = new ConnectionGuard(log);
  guard.attach(server);
  guards.set(server, guard);
  return guard;
}

/** The guard of a running server (tests lower its caps and read its counters). */
export function connectionGuardOf(server: Server): ConnectionGuard {
  const guard = guards.get(server);
  if (!guard) throw new Error('this server has no connection guard');
  return guard;
}

/** The cap, lowered to leave HTTP_FD_RESERVE descriptors free when the OS allows fewer open files. */
export function connectionCap(cap: number, fdLimit: number | null): number {
  if (fdLimit === null) return cap;
  return Math.max(64, Math.min(cap, fdLimit - HTTP_FD_RESERVE));
}

/** The soft open-files limit on Linux (/proc/self/limits); null elsewhere or when unreadable. */
function openFileLimit(): number | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft && /^\d+$/.test(soft) ? Number(soft) : null;
  } catch {
    return null;
  }
}

/** What a request node's HTTP parser refused is told (a `clientError`): 408, 431 or 400, with the error body. */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    refuseOnSocket(socket, new ApiError(408, 'the request took too long to arrive'));
    return;
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    refuseOnSocket(socket, new ApiError(431, 'request headers too large'));
    return;
  }
  refuseOnSocket(socket, errors.badRequest('malformed HTTP request'));
}
