import type { ServerResponse } from 'node:http';
import { WebSocket } from 'ws';
import type { AppContext, RequestMeta } from '../context';
import { channelHealth } from '../features/sources/registry';
import { type Principal, resolveToken } from '../http/auth';
import { ApiError, errors } from '../http/errors';
import type { BusMessage } from '../lib/bus';
import { isManualClock, rfc3339 } from '../lib/clock';
import {
  LIVE_CONNECTIONS_PER_TOKEN,
  LIVE_CONNECTIONS_PER_USER,
  SSE_KEEPALIVE_MS,
  SSE_MAX_BUFFERED_BYTES,
  WS_CLOSE_GRACE_MS,
  WS_MAX_BUFFERED_BYTES,
  WS_PING_INTERVAL_MS,
} from '../lib/limits';
import { presentPower } from '../lib/power';
import { type Audience, sqlAudience } from './audience';
import { type FrameShape, messageFrame, SSE_KEEPALIVE_FRAME, serviceFrame, sseEvent } from './frames';

/** WebSocket close codes Belfry sends (docs/api.md, "Live streams"). */
export const CLOSE = {
  /** The server is stopping. */
  GOING_AWAY: 1001,
  /** More than WS_MAX_BUFFERED_BYTES unsent: reconnect and page GET /message for what was missed. */
  SLOW_CONSUMER: 1013,
  /** The token stopped being valid: device suspended, revoked, rotated or deleted; key revoked or rotated. */
  CREDENTIAL_INVALID: 4401,
} as const;

/** What a live connection was authenticated with; the token is kept to re-check it on each ping round. */
export interface LiveAuth {
  principal: Principal;
  token: string;
  meta: RequestMeta;
}

export interface LiveSocket extends LiveAuth {
  readonly ws: WebSocket;
  readonly shape: FrameShape;
  /** Opened as `/ws?events=1`: also receives service frames (docs/api.md, "Live streams"). */
  readonly events: boolean;
  /** Answered the last ping (or sent anything) since the previous round. */
  alive: boolean;
  closing: boolean;
  killTimer?: NodeJS.Timeout;
}

export interface LiveStream extends LiveAuth {
  readonly res: ServerResponse;
  /** When this stream last got `channel:status_changed` per channel, and which ones wait for their second. */
  readonly statusSentAt: Map<number, number>;
  readonly statusPending: Set<number>;
}

/** What every live entry carries from its authentication, copied field by field in one order. */
class LiveEntry implements LiveAuth {
  readonly principal: Principal;
  readonly token: string;
  readonly meta: RequestMeta;
  constructor(auth: LiveAuth) {
    this.principal = auth.principal;
    this.token = auth.token;
    this.meta = auth.meta;
  }
}

/**
 * A socket's entry, as a class with every field set in the constructor: all entries share one hidden
 * class, so the fan-out loop's property loads stay monomorphic. Built as `{ ...auth, ws, ... }` they
 * did not: V8 kept missing its inline caches there (LoadIC_Miss, MigrateDeprecated and megamorphic
 * stub-cache lookups in `perf`), and the loop over 1,000 sockets took ~25 % longer than the raw
 * reference server's (p50 ~19 vs ~15 ms); with the class it is within noise of it.
 */
class SocketEntry extends LiveEntry implements LiveSocket {
  alive = true;
  closing = false;
  killTimer: NodeJS.Timeout | undefined = undefined;
  constructor(
    auth: LiveAuth,
    readonly ws: WebSocket,
    readonly shape: FrameShape,
    readonly events: boolean,
  ) {
    super(auth);
  }
}

/** An SSE stream's entry: a class for the same reason as SocketEntry. */
class StreamEntry extends LiveEntry implements LiveStream {
  readonly statusSentAt = new Map<number, number>();
  readonly statusPending = new Set<number>();
  constructor(
    auth: LiveAuth,
    readonly res: ServerResponse,
  ) {
    super(auth);
  }
}

export interface HubOptions {
  pingIntervalMs: number;
  keepaliveMs: number;
  maxBufferedBytes: number;
  sseMaxBufferedBytes: number;
  closeGraceMs: number;
  /** Live connections (sockets and streams together) one credential, and one user, may hold. */
  maxPerToken: number;
  maxPerUser: number;
  audience?: Audience;
}

/** SSE `channel:status_changed` goes out at most once per channel per second per stream (§1.7). */
export const STATUS_SIGNAL_COALESCE_MS = 1_000;

/** Retry-After of a 429 for a live connection over its cap. */
const LIVE_RETRY_AFTER_SEC = 10;
/** Sockets pinged (and re-checked) per turn of the event loop in a ping round (pingRound). */
export const PING_SLICE = 64;

export const DEFAULT_HUB_OPTIONS: HubOptions = {
  pingIntervalMs: WS_PING_INTERVAL_MS,
  keepaliveMs: SSE_KEEPALIVE_MS,
  maxBufferedBytes: WS_MAX_BUFFERED_BYTES,
  sseMaxBufferedBytes: SSE_MAX_BUFFERED_BYTES,
  closeGraceMs: WS_CLOSE_GRACE_MS,
  maxPerToken: LIVE_CONNECTIONS_PER_TOKEN,
  maxPerUser: LIVE_CONNECTIONS_PER_USER,
};

/**
 * The live hub (docs/api.md, "Live streams"): maps each bus event to the sockets and streams that
 * may see it, serialises once per audience shape, and sends. Device sockets are indexed by user,
 * channel-key and share-token sockets by channel, SSE streams by user.
 */
export class LiveHub {
  private readonly deviceSockets = new Map<number, Set<LiveSocket>>();
  private readonly keySockets = new Map<number, Set<LiveSocket>>();
  private readonly streams = new Map<number, Set<LiveStream>>();
  private readonly audience: Audience;
  private readonly opts: HubOptions;
  private pingTimer: NodeJS.Timeout | null = null;
  private keepaliveTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void)[] = [];
  /** Admitted live connections per credential and per user (admit() counts, the close gives back). */
  private readonly liveByToken = new Map<string, number>();
  private readonly liveByUser = new Map<number, number>();
  /** Deliveries waiting for the journal fsync that covers their message, in commit order. */
  private deliveryChain: Promise<void> = Promise.resolve();
  private waiting = 0;
  /** The ping round still going over its slices, if any. */
  private pinging: Promise<void> | null = null;
  /** Open sockets with the events flag: service frames cost nothing while there are none. */
  private eventSockets = 0;
  /** Streams holding a coalesced `channel:status_changed`, and what delivers it when its second is up. */
  private readonly pendingStreams = new Set<LiveStream>();
  private coalesceTimer: NodeJS.Timeout | null = null;
  private coalesceAt = Number.POSITIVE_INFINITY;
  stopping = false;
  readonly counters = { delivered: 0, slowConsumers: 0, deadPeers: 0, revoked: 0, pings: 0 };

  constructor(
    private readonly ctx: AppContext,
    opts: Partial<HubOptions> = {},
  ) {
    this.opts = { ...DEFAULT_HUB_OPTIONS, ...opts };
    this.audience = this.opts.audience ?? sqlAudience(ctx.db);
  }

  /** Subscribes to the bus. Runs in the feature's init, before any request. */
  subscribe(): void {
    const bus = this.ctx.bus;
    // A ManualClock moves only when a test says so: coalesced signals then go out on its change,
    // without any real timer (the system clock is served by a real timer, see armCoalesce).
    if (isManualClock(this.ctx.clock))
      this.unsubscribe.push(this.ctx.clock.onChange(() => this.flushCoalesced()));
    this.unsubscribe.push(
      bus.on('message:created', ({ message, ownerId }) => this.publishMessage(message, ownerId)),
      bus.on('device:invalidated', ({ userId, deviceId }) =>
        this.closeDevices(userId, (id) => id === deviceId),
      ),
      bus.on('user:devices_invalidated', ({ userId, keepDeviceId }) =>
        this.closeDevices(userId, (id) => id !== keepDeviceId),
      ),
      bus.on('token:invalidated', ({ kind, tokenId }) => this.closeToken(kind, tokenId)),
      bus.on('channel:status_changed', ({ appid, userIds }) => {
        this.signal('channel:status_changed', appid, userIds);
        this.publishChannelStatus(appid, userIds);
      }),
      bus.on('source:event', ({ appid, kind, data, at }) => this.publishService(kind, appid, data, at)),
      bus.on('share:changed', ({ appid, userIds }) => this.signal('share:changed', appid, userIds)),
      bus.on('power:changed', () => this.publishPower()),
    );
  }

  /** Starts the ping and keepalive timers; called again by configure() with new settings. */
  startTimers(): void {
    this.stopTimers();
    if (this.stopping) return;
    this.pingTimer = setInterval(() => void this.pingRound(), this.opts.pingIntervalMs);
    this.pingTimer.unref();
    this.keepaliveTimer = setInterval(() => this.keepaliveRound(), this.opts.keepaliveMs);
    this.keepaliveTimer.unref();
  }

  /** Changes intervals and bounds of a running hub (tests shorten them instead of waiting). */
  configure(opts: Partial<Omit<HubOptions, 'audience'>>): void {
    Object.assign(this.opts, opts);
    if (this.pingTimer) this.startTimers();
  }

  private stopTimers(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
    if (this.keepaliveTimer) clearInterval(this.keepaliveTimer);
    this.pingTimer = this.keepaliveTimer = null;
  }

  // ---------------------------------------------------------------------------------------------
  // Connections

  /**
   * Takes a live slot for a connection about to open (issue 21: a read-only channel key opened sockets
   * until the server ran out of file descriptors), or throws 429 when the credential or its user already
   * holds its cap. The slot is given back when `closed` (the socket, or the SSE response) emits 'close'.
   */
  admit(auth: LiveAuth, closed: { once(event: 'close', listener: () => void): unknown }): void {
    const userId = auth.principal.userId;
    const byToken = this.liveByToken.get(auth.token) ?? 0;
    const byUser = this.liveByUser.get(userId) ?? 0;
    if (byToken >= this.opts.maxPerToken)
      throw errors.tooManyRequests(
        `too many live connections with this token (at most ${this.opts.maxPerToken})`,
        LIVE_RETRY_AFTER_SEC,
      );
    if (byUser >= this.opts.maxPerUser)
      throw errors.tooManyRequests(
        `too many live connections for this account (at most ${this.opts.maxPerUser})`,
        LIVE_RETRY_AFTER_SEC,
      );
    this.liveByToken.set(auth.token, byToken + 1);
    this.liveByUser.set(userId, byUser + 1);
    closed.once('close', () => {
      countDown(this.liveByToken, auth.token);
      countDown(this.liveByUser, userId);
    });
  }

  /** Admitted live connections (tests check that closing gives the slots back). */
  admitted(): number {
    let n = 0;
    for (const c of this.liveByUser.values()) n += c;
    return n;
  }

  addSocket(ws: WebSocket, auth: LiveAuth, shape: FrameShape, events = false): LiveSocket {
    const s: LiveSocket = new SocketEntry(auth, ws, shape, events);
    if (events) this.eventSockets++;
    const index = this.indexOf(s.principal);
    const key = index === this.deviceSockets ? s.principal.userId : s.principal.channelId!;
    const set = index.get(key) ?? new Set<LiveSocket>();
    index.set(key, set);
    set.add(s);
    ws.on('pong', () => {
      s.alive = true;
    });
    // Clients send nothing meaningful; anything they send still proves they are there.
    ws.on('message', () => {
      s.alive = true;
    });
    ws.on('error', (err) => this.ctx.log.debug('websocket error', { err: err.message }));
    ws.on('close', () => {
      if (s.killTimer) clearTimeout(s.killTimer);
      if (events) this.eventSockets--;
      const current = index.get(key);
      if (current?.delete(s) && current.size === 0) index.delete(key);
    });
    return s;
  }

  private indexOf(p: Principal): Map<number, Set<LiveSocket>> {
    return p.kind === 'device' ? this.deviceSockets : this.keySockets;
  }

  /** Registers an SSE response whose headers are already sent; ends it with the response. */
  addStream(res: ServerResponse, auth: LiveAuth): LiveStream {
    const st: LiveStream = new StreamEntry(auth, res);
    const userId = st.principal.userId;
    const set = this.streams.get(userId) ?? new Set<LiveStream>();
    this.streams.set(userId, set);
    set.add(st);
    res.on('close', () => {
      this.pendingStreams.delete(st);
      const current = this.streams.get(userId);
      if (current?.delete(st) && current.size === 0) this.streams.delete(userId);
    });
    return st;
  }

  /** `GET /client/online`: ids of the user's devices with an open WebSocket, ascending. */
  onlineDevices(userId: number): number[] {
    const ids = new Set<number>();
    for (const s of this.deviceSockets.get(userId) ?? [])
      if (!s.closing && s.ws.readyState === WebSocket.OPEN) ids.add(s.principal.deviceId!);
    return [...ids].sort((a, b) => a - b);
  }

  /** Open sockets and streams, for tests and the benchmarks. */
  size(): { sockets: number; streams: number } {
    let sockets = 0;
    let streams = 0;
    for (const set of this.deviceSockets.values()) sockets += set.size;
    for (const set of this.keySockets.values()) sockets += set.size;
    for (const set of this.streams.values()) streams += set.size;
    return { sockets, streams };
  }

  // ---------------------------------------------------------------------------------------------
  // Messages

  /**
   * A committed message goes out once the journal fsync covering it is done: nobody is shown a
   * message that a crash could take back (the HTTP response waits for the same fsync). Order is kept.
   */
  publishMessage(message: BusMessage, ownerId: number): void {
    this.afterDurable(() => this.deliverMessage(message, ownerId), message.id);
  }

  /**
   * Runs `deliver` once everything committed so far is durable, in commit order with the messages
   * (a `heartbeat:alert` frame never overtakes the message it names).
   */
  private afterDurable(deliver: () => void, messageId?: number): void {
    if (this.stopping) return;
    if (this.waiting === 0 && !this.ctx.store.hasUnsynced()) {
      deliver();
      return;
    }
    // sync() now covers this message's commit and nothing later, so a busy journal cannot delay it
    // by more than its own fsync; the chain keeps commit order.
    const durable = this.ctx.store.hasUnsynced() ? this.ctx.store.sync() : Promise.resolve();
    this.waiting++;
    this.deliveryChain = Promise.all([this.deliveryChain, durable])
      .then(
        () => {
          if (!this.stopping) deliver();
        },
        (err: unknown) =>
          this.ctx.log.error('message not pushed: the journal fsync failed', { err, id: messageId }),
      )
      .finally(() => {
        this.waiting--;
      });
  }

  /** Sends one message to every socket allowed to see it now; returns how many sockets it went to. */
  deliverMessage(m: BusMessage, ownerId: number): number {
    const frames: Partial<Record<FrameShape, Buffer>> = {};
    const frameFor = (s: LiveSocket): Buffer => {
      let frame = frames[s.shape];
      if (!frame) {
        frame = messageFrame(m, s.shape);
        frames[s.shape] = frame;
      }
      return frame;
    };
    let sent = 0;
    if (this.deviceSockets.size > 0) {
      let muted: ReadonlySet<number> | undefined;
      for (const userId of this.audience.recipients(m.appid, ownerId)) {
        const set = this.deviceSockets.get(userId);
        if (!set) continue;
        muted ??= this.audience.mutedDevices(m.appid);
        for (const s of set) {
          if (muted.has(s.principal.deviceId!)) continue;
          if (this.send(s, frameFor(s))) sent++;
        }
      }
    }
    for (const s of this.keySockets.get(m.appid) ?? []) if (this.send(s, frameFor(s))) sent++;
    this.counters.delivered += sent;
    return sent;
  }

  // ---------------------------------------------------------------------------------------------
  // Service frames (/ws?events=1 only)

  /** A `source:event`: to the flagged sockets in the audience of a message of `appid`. */
  publishService(kind: string, appid: number, data: Record<string, unknown>, at?: number): void {
    if (this.eventSockets === 0) return;
    const owner = this.ctx.db.first<{ user_id: number }>('SELECT user_id FROM channels WHERE id = ?', [
      appid,
    ]);
    if (!owner) return;
    const when = rfc3339(at ?? this.ctx.clock.now());
    this.afterDurable(() =>
      this.deliverService(appid, this.audience.recipients(appid, owner.user_id), () =>
        serviceFrame(kind, appid, when, data),
      ),
    );
  }

  /** The WebSocket side of `channel:status_changed`: the channel's health fields as a service frame. */
  private publishChannelStatus(appid: number, userIds: readonly number[]): void {
    if (this.eventSockets === 0) return;
    const at = rfc3339(this.ctx.clock.now());
    const health = channelHealth(this.ctx, [appid]).get(appid) ?? {};
    this.afterDurable(() =>
      this.deliverService(appid, userIds, () => serviceFrame('channel:status_changed', appid, at, health)),
    );
  }

  /**
   * `power:changed` (battery ↔ mains power, server/lib/power.ts): the machine's state, which is no
   * channel's (`appid` 0), as `GET /power` answers it, to every flagged device socket of every user
   * (their browser workflows pause and intervals stretch alike); channel-key and share sockets see
   * one channel only and get none. Nothing is committed, so it leaves at once.
   */
  private publishPower(): void {
    if (this.eventSockets === 0) return;
    const frame = serviceFrame('power:changed', 0, rfc3339(this.ctx.clock.now()), presentPower(this.ctx));
    for (const sockets of this.deviceSockets.values())
      for (const s of sockets) if (s.events) this.send(s, frame);
  }

  /** Sends one service frame (built at most once) to the flagged sockets of these users and of the channel's keys. */
  deliverService(appid: number, userIds: readonly number[], build: () => Buffer): number {
    let frame: Buffer | undefined;
    let sent = 0;
    let muted: ReadonlySet<number> | undefined;
    for (const userId of new Set(userIds))
      for (const s of this.deviceSockets.get(userId) ?? []) {
        if (!s.events) continue;
        muted ??= this.audience.mutedDevices(appid);
        if (muted.has(s.principal.deviceId!)) continue;
        frame ??= build();
        if (this.send(s, frame)) sent++;
      }
    for (const s of this.keySockets.get(appid) ?? [])
      if (s.events) {
        frame ??= build();
        if (this.send(s, frame)) sent++;
      }
    return sent;
  }

  private send(s: LiveSocket, frame: Buffer): boolean {
    if (s.closing || s.ws.readyState !== WebSocket.OPEN) return false;
    if (s.ws.bufferedAmount + frame.length > this.opts.maxBufferedBytes) {
      this.counters.slowConsumers++;
      this.ctx.log.info('cut off a slow websocket', {
        userId: s.principal.userId,
        buffered: s.ws.bufferedAmount,
      });
      this.close(s, CLOSE.SLOW_CONSUMER, 'slow consumer');
      return false;
    }
    s.ws.send(frame, { binary: false, compress: false });
    return true;
  }

  /** Sends a close frame and destroys the socket if the peer has not closed within the grace period. */
  close(s: LiveSocket, code: number, reason: string): void {
    if (s.closing) return;
    s.closing = true;
    try {
      s.ws.close(code, reason);
    } catch {
      s.ws.terminate();
      return;
    }
    s.killTimer = setTimeout(() => s.ws.terminate(), this.opts.closeGraceMs);
    s.killTimer.unref();
  }

  // ---------------------------------------------------------------------------------------------
  // Change signals (SSE)

  signal(event: 'channel:status_changed' | 'share:changed', appid: number, userIds: readonly number[]): void {
    const frame = sseEvent(event, { appid });
    const now = this.ctx.clock.now();
    for (const userId of new Set(userIds))
      for (const st of this.streams.get(userId) ?? []) {
        if (event === 'share:changed') {
          this.writeStream(st, frame);
          continue;
        }
        // Coalesced: the first goes out at once, the rest of that second becomes one, sent when it is up.
        const last = st.statusSentAt.get(appid);
        if (last === undefined || now - last >= STATUS_SIGNAL_COALESCE_MS || now < last) {
          st.statusSentAt.set(appid, now);
          st.statusPending.delete(appid);
          this.writeStream(st, frame);
        } else {
          st.statusPending.add(appid);
          this.pendingStreams.add(st);
          this.armCoalesce(last + STATUS_SIGNAL_COALESCE_MS);
        }
      }
  }

  /** Sends every coalesced `channel:status_changed` whose second is up; re-arms for the rest. */
  flushCoalesced(): void {
    if (this.pendingStreams.size === 0) return;
    const now = this.ctx.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const st of this.pendingStreams) {
      for (const appid of st.statusPending) {
        const last = st.statusSentAt.get(appid) ?? now - STATUS_SIGNAL_COALESCE_MS;
        const due = last + STATUS_SIGNAL_COALESCE_MS;
        if (now >= due || now < last) {
          st.statusPending.delete(appid);
          st.statusSentAt.set(appid, now);
          this.writeStream(st, sseEvent('channel:status_changed', { appid }));
        } else next = Math.min(next, due);
      }
      if (st.statusPending.size === 0) this.pendingStreams.delete(st);
    }
    this.coalesceAt = Number.POSITIVE_INFINITY;
    if (next !== Number.POSITIVE_INFINITY) this.armCoalesce(next);
  }

  /** A real timer for the system clock; a ManualClock flushes on its change instead (subscribe). */
  private armCoalesce(at: number): void {
    if (this.stopping || isManualClock(this.ctx.clock) || at >= this.coalesceAt) return;
    if (this.coalesceTimer) clearTimeout(this.coalesceTimer);
    this.coalesceAt = at;
    this.coalesceTimer = setTimeout(
      () => {
        this.coalesceTimer = null;
        this.coalesceAt = Number.POSITIVE_INFINITY;
        this.flushCoalesced();
      },
      Math.max(0, at - this.ctx.clock.now()),
    );
    this.coalesceTimer.unref();
  }

  writeStream(st: LiveStream, chunk: Buffer): void {
    if (st.res.destroyed || st.res.writableEnded) return;
    if (st.res.writableLength + chunk.length > this.opts.sseMaxBufferedBytes) {
      this.counters.slowConsumers++;
      st.res.destroy();
      return;
    }
    st.res.write(chunk);
  }

  // ---------------------------------------------------------------------------------------------
  // Invalidation

  private closeDevices(userId: number, match: (deviceId: number) => boolean): void {
    for (const s of this.deviceSockets.get(userId) ?? []) {
      if (!match(s.principal.deviceId!)) continue;
      this.counters.revoked++;
      this.close(s, CLOSE.CREDENTIAL_INVALID, 'device token no longer valid');
    }
    for (const st of this.streams.get(userId) ?? []) if (match(st.principal.deviceId!)) st.res.end();
  }

  private closeToken(kind: 'app' | 'share', tokenId: number): void {
    for (const set of this.keySockets.values())
      for (const s of set)
        if (s.principal.kind === kind && s.principal.tokenId === tokenId) {
          this.counters.revoked++;
          this.close(s, CLOSE.CREDENTIAL_INVALID, 'token no longer valid');
        }
  }

  /**
   * A safety net behind the bus events: every ping round re-resolves each connection's token (once per
   * distinct token), so expiry, a deleted channel or a missed event closes the connection within a round.
   * Returns the check for one connection; its verdicts are kept for one round.
   */
  private validator(): (c: LiveAuth) => boolean {
    const verdicts = new Map<string, boolean>();
    return (c) => {
      let ok = verdicts.get(c.token);
      if (ok === undefined) {
        ok = this.stillValid(c);
        verdicts.set(c.token, ok);
      }
      return ok;
    };
  }

  private stillValid(c: LiveAuth): boolean {
    try {
      const p = resolveToken(this.ctx, c.token, c.meta);
      if (p.kind !== c.principal.kind || p.userId !== c.principal.userId) return false;
      return p.kind === 'device' || p.canRead;
    } catch (err) {
      if (err instanceof ApiError) return false;
      this.ctx.log.warn('could not re-check a live connection; keeping it', { err });
      return true;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Timers

  /**
   * Dead-peer detection and the credential re-check (validator), PING_SLICE sockets per turn of the
   * event loop: a round over 1,000 sockets (a ping is a write each, a re-check a lookup per token) held
   * the loop for ~13 ms at once (measured: 64 sockets take ~0.85 ms), and a message committed meanwhile
   * reached all of its sockets that much later. The first slice runs at once; the promise settles when
   * the round is over (or a slice failed, logged: the next round starts afresh). A round still going when
   * the next is due is not doubled.
   */
  pingRound(): Promise<void> {
    if (this.pinging) return this.pinging;
    const sockets: LiveSocket[] = [];
    for (const index of [this.deviceSockets, this.keySockets])
      for (const set of index.values()) for (const s of set) sockets.push(s);
    const valid = this.validator();
    const slice = (from: number): boolean => {
      const to = Math.min(sockets.length, from + PING_SLICE);
      for (let i = from; i < to; i++) this.pingOne(sockets[i]!, valid);
      if (to < sockets.length) return false;
      for (const set of this.streams.values()) for (const st of set) if (!valid(st)) st.res.end();
      return true;
    };
    if (slice(0)) return Promise.resolve();
    this.pinging = new Promise<void>((resolve) => {
      const next = (from: number) =>
        setImmediate(() => {
          try {
            if (this.stopping || slice(from)) resolve();
            else next(from + PING_SLICE);
          } catch (err) {
            this.ctx.log.error('a ping round failed', { err });
            resolve();
          }
        });
      next(PING_SLICE);
    }).finally(() => {
      this.pinging = null;
    });
    return this.pinging;
  }

  private pingOne(s: LiveSocket, valid: (c: LiveAuth) => boolean): void {
    if (s.closing) return;
    if (!s.alive) {
      this.counters.deadPeers++;
      s.closing = true;
      s.ws.terminate();
      return;
    }
    if (!valid(s)) {
      this.counters.revoked++;
      this.close(s, CLOSE.CREDENTIAL_INVALID, 'token no longer valid');
      return;
    }
    s.alive = false;
    this.counters.pings++;
    try {
      s.ws.ping();
    } catch {
      s.ws.terminate();
    }
  }

  /** The spec's keepalive comment on every SSE stream. */
  keepaliveRound(): void {
    const now = this.ctx.clock.now();
    for (const set of this.streams.values())
      for (const st of set) {
        this.writeStream(st, SSE_KEEPALIVE_FRAME);
        // Forget channels whose second is long over (a stream open for weeks sees many channels).
        for (const [appid, at] of st.statusSentAt)
          if (now - at >= STATUS_SIGNAL_COALESCE_MS && !st.statusPending.has(appid))
            st.statusSentAt.delete(appid);
      }
  }

  /** Feature stop: after jobs, before the store. Closes every socket (1001) and ends every stream. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopTimers();
    if (this.coalesceTimer) clearTimeout(this.coalesceTimer);
    this.coalesceTimer = null;
    this.pendingStreams.clear();
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    const closed: Promise<void>[] = [];
    for (const index of [this.deviceSockets, this.keySockets])
      for (const set of index.values())
        for (const s of set) {
          if (s.ws.readyState !== WebSocket.CLOSED)
            closed.push(new Promise((resolve) => s.ws.once('close', () => resolve())));
          this.close(s, CLOSE.GOING_AWAY, 'server shutting down');
        }
    for (const set of this.streams.values()) for (const st of set) st.res.end();
    await Promise.all(closed);
  }
}

function countDown<K>(counts: Map<K, number>, key: K): void {
  const n = (counts.get(key) ?? 0) - 1;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}
