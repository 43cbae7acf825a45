import type { AppContext } from '../../context';
import { readLink, signLink } from '../../features/auth/links';
import { requireVisible } from '../../features/channels/access';
import { enabledAdapters, openDeliveryConfig } from '../../features/channels/delivery-config';
import { type ChannelRow, findChannel } from '../../features/channels/store';
import { getQuietHours, type QuietHours } from '../../features/current-user/quiet-hours';
import { findMessage, type MessageRow, markRead } from '../../features/messages/store';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import type { Paging } from '../../http/paging';
import {
  DELIVERY_TOTAL_TIMEOUT_MS,
  type DeliveryAdapter,
  DeliveryError,
  type DeliveryItem,
  type SendIo,
} from '../adapter';
import { adapterNamed } from '../registry';
import { type OpenedCallback, openCallback, postCallback } from './callbacks';
import { createDigests } from './digest';
import { type PresentedDelivery, presentDelivery } from './present';
import { quietWindowAt } from './quiet-window';
import {
  cancelDelivery,
  claimDelivery,
  type DeliveryRow,
  type DeliveryStatus,
  deleteFinishedUpTo,
  dueDeliveries,
  failInterruptedTests,
  failQueued,
  findDelivery,
  holdDelivery,
  insertDelivery,
  isReadBy,
  lastIdCreatedBefore,
  markFailed,
  markRetry,
  markSent,
  nextQueuedAt,
  pageDeliveries,
  requeueSending,
} from './store';

/**
 * The outbox's DueSource 'delivery' (wire rules §6.1): claims due `queued` rows (an indexed MIN, then a
 * bounded claim), re-checks read/deleted/config/quiet hours, marks the rest `sending` and sends them
 * through the registry's adapter in a bounded pool, never inside a transaction. Results are applied in
 * small batched transactions: sent, queued again after the backoff, failed, or given up after 24 h.
 */

/**
 * Sends in flight at once (over every user) while the API is quiet: slow remote services (100-500 ms a
 * call) still drain a backlog at 100+ a second.
 */
export const DELIVERY_POOL = 64;
/**
 * Sends in flight while requests are coming (none came or went for 250 ms: quiet). Each completing send
 * costs ~0.3 ms of CPU; with 64 finishing together one event-loop turn held POST /message for ~50 ms
 * (redelivery bench). 8 keeps a turn to a few ms and a loopback drain still well above 500/s.
 */
export const DELIVERY_POOL_BUSY = 8;

function poolLimit(ctx: AppContext): number {
  return ctx.activity.quiet() ? DELIVERY_POOL : DELIVERY_POOL_BUSY;
}
/**
 * Rows claimed per transaction, and results applied per transaction: small, so that a drain never holds
 * the event loop for more than a millisecond or two at a time (POST /message stays fast meanwhile).
 */
const CLAIM_BATCH = 16;
const FLUSH_BATCH = 16;
/** Backoff cap and the give-up horizon (§6.1). */
export const RETRY_CAP_SEC = 3_600;
export const GIVE_UP_AFTER_MS = 24 * 3_600_000;
/** Signed read links live this long (§6.2). */
export const READ_LINK_TTL_MS = 7 * 86_400_000;

interface Outcome {
  id: number;
  ok: boolean;
  error?: string;
  retryable?: boolean;
  retryAfterSec?: number;
}

interface Engine {
  active: number;
  idleWaiters: (() => void)[];
  controllers: Set<AbortController>;
  results: { outcome: Outcome; done: () => void }[];
  flushScheduled: boolean;
  /** A claim stopped for lack of room: a finishing send wakes the due timer. */
  starved: boolean;
  stopped: boolean;
}

const engines = new WeakMap<AppContext, Engine>();

function engine(ctx: AppContext): Engine {
  let e = engines.get(ctx);
  if (!e) {
    e = {
      active: 0,
      idleWaiters: [],
      controllers: new Set(),
      results: [],
      flushScheduled: false,
      starved: false,
      stopped: false,
    };
    engines.set(ctx, e);
  }
  return e;
}

// ---------------------------------------------------------------- links and items

export function messageLink(ctx: AppContext, appid: number, messageId: number | null): string {
  const base = `${ctx.publicUrl()}/inbox?channel=${appid}`;
  return messageId === null ? base : `${base}#message-${messageId}`;
}

/** `{publicUrl}/m/read?token=…`: HMAC-signed message id and owner, 7 days (§6.2). */
export function readLinkFor(ctx: AppContext, messageId: number, ownerId: number): string {
  const token = signLink(ctx, 'read', { m: messageId, u: ownerId }, READ_LINK_TTL_MS);
  return `${ctx.publicUrl()}/m/read?token=${token}`;
}

function parseExtras(raw: string | null): Record<string, unknown> | undefined {
  return raw === null ? undefined : (JSON.parse(raw) as Record<string, unknown>);
}

function redeliveryItem(ctx: AppContext, row: DeliveryRow, m: MessageRow, channelName: string): DeliveryItem {
  const extras = parseExtras(m.extras);
  return {
    outboxId: row.id,
    kind: 'redelivery',
    messageId: m.id,
    title: m.title,
    message: m.message,
    priority: m.priority,
    date: m.date,
    ...(extras ? { extras } : {}),
    channel: { id: row.appid, name: channelName },
    links: { message: messageLink(ctx, row.appid, m.id), read: readLinkFor(ctx, m.id, row.user_id) },
  };
}

/** Digest and test rows carry their content in `payload`. */
export interface StoredContent {
  title: string;
  message: string;
  priority: number;
  date: number;
  extras?: Record<string, unknown>;
}

function payloadItem(ctx: AppContext, row: DeliveryRow, channelName: string): DeliveryItem {
  const c = JSON.parse(row.payload ?? '{}') as StoredContent;
  return {
    outboxId: row.id,
    kind: row.kind === 'digest' ? 'digest' : 'test',
    messageId: null,
    title: c.title,
    message: c.message,
    priority: c.priority,
    date: c.date,
    ...(c.extras ? { extras: c.extras } : {}),
    channel: { id: row.appid, name: channelName },
    links: { message: messageLink(ctx, row.appid, null), read: null },
  };
}

// ---------------------------------------------------------------- sending

/** Private targets allowed (SendIo.allowPrivate): the setting is off, or the owner is an administrator. */
export function allowPrivateFor(ctx: AppContext, userId: number): boolean {
  if (!ctx.config.blockPrivateTargets) return true;
  return ctx.db.first<{ admin: number }>('SELECT admin FROM users WHERE id = ?', [userId])?.admin === 1;
}

const TIMEOUT_TEXT = `timeout after ${DELIVERY_TOTAL_TIMEOUT_MS / 1000} s`;

/**
 * One adapter call with the 15 s total limit and the server's stop, as an outcome (never throws).
 * `stopped` is true when the server's stop aborted it: the entry stays `sending` and start-up queues it.
 */
export async function sendOnce(
  ctx: AppContext,
  adapter: DeliveryAdapter | undefined,
  adapterName: string,
  config: Record<string, unknown>,
  item: DeliveryItem,
  allowPrivate: boolean,
): Promise<Outcome & { stopped: boolean }> {
  const id = item.outboxId;
  if (!adapter)
    return { id, ok: false, error: `unknown adapter "${adapterName}"`, retryable: false, stopped: false };
  return attempt(ctx, id, allowPrivate, (io) => adapter.send(io, config, item));
}

/** One question callback POST (§7.5) with the same limits and classification as an adapter call. */
export function sendCallbackOnce(
  ctx: AppContext,
  id: number,
  cb: OpenedCallback,
  allowPrivate: boolean,
): Promise<Outcome & { stopped: boolean }> {
  return attempt(ctx, id, allowPrivate, (io) => postCallback(io, id, cb));
}

async function attempt(
  ctx: AppContext,
  id: number,
  allowPrivate: boolean,
  call: (io: SendIo) => Promise<void>,
): Promise<Outcome & { stopped: boolean }> {
  const e = engine(ctx);
  const controller = new AbortController();
  e.controllers.add(controller);
  let timer: NodeJS.Timeout | undefined;
  // An adapter that ignores the signal still ends at the limit.
  const aborted = new Promise<never>((_, reject) => {
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
  });
  aborted.catch(() => {});
  timer = setTimeout(() => controller.abort(new Error(TIMEOUT_TEXT)), DELIVERY_TOTAL_TIMEOUT_MS);
  timer.unref();
  try {
    await Promise.race([call({ ctx, signal: controller.signal, allowPrivate }), aborted]);
    return { id, ok: true, stopped: false };
  } catch (err) {
    if (e.stopped && controller.signal.aborted) return { id, ok: false, stopped: true };
    if (controller.signal.aborted)
      return { id, ok: false, error: TIMEOUT_TEXT, retryable: true, stopped: false };
    if (err instanceof DeliveryError)
      return {
        id,
        ok: false,
        error: err.message,
        retryable: err.retryable,
        ...(err.retryAfterSec !== undefined ? { retryAfterSec: err.retryAfterSec } : {}),
        stopped: false,
      };
    // Anything else counts as a retryable network error (adapter.ts).
    return {
      id,
      ok: false,
      error: err instanceof Error ? err.message : String(err),
      retryable: true,
      stopped: false,
    };
  } finally {
    clearTimeout(timer);
    e.controllers.delete(controller);
  }
}

/** Seconds to wait after the n-th failed attempt: min(BASE·2^(n−1), 3600), a larger Retry-After honoured. */
export function retryDelaySec(base: number, attempts: number, retryAfterSec?: number): number {
  const backoff = Math.min(base * 2 ** Math.max(attempts - 1, 0), RETRY_CAP_SEC);
  if (retryAfterSec !== undefined && retryAfterSec > backoff) return Math.min(retryAfterSec, RETRY_CAP_SEC);
  return backoff;
}

function emitChanged(
  ctx: AppContext,
  changed: readonly DeliveryRow[],
  status: (r: DeliveryRow) => string,
): void {
  for (const r of changed)
    ctx.bus.emit('delivery:changed', { userId: r.user_id, appid: r.appid, id: r.id, status: status(r) });
}

/** Applies the outcomes gathered since the last flush in one transaction, then wakes waiters. */
function flushResults(ctx: AppContext): void {
  const e = engine(ctx);
  e.flushScheduled = false;
  const batch = e.results.splice(0, FLUSH_BATCH);
  if (e.results.length > 0) {
    e.flushScheduled = true;
    setImmediate(() => flushResults(ctx));
  }
  if (batch.length === 0) return;
  const now = ctx.clock.now();
  const changed: { row: DeliveryRow; status: DeliveryStatus }[] = [];
  let earliest: number | null = null;
  try {
    // Relaxed (journaled, nobody waits for its fsync): a result lost in a crash leaves the row `sending`,
    // which start-up queues again — a re-send, never a loss — and a drain's train of result commits no
    // longer puts an fdatasync of its own in front of every POST /message (redelivery bench).
    ctx.db.relaxed(() => {
      for (const { outcome: o } of batch) {
        const row = findDelivery(ctx.db, o.id);
        if (row?.status !== 'sending') continue;
        if (o.ok) {
          markSent(ctx.db, o.id, now);
          changed.push({ row, status: 'sent' });
          continue;
        }
        const error = o.error ?? 'failed';
        if (!o.retryable || row.kind === 'test') {
          markFailed(ctx.db, o.id, error);
          changed.push({ row, status: 'failed' });
          continue;
        }
        const next = now + retryDelaySec(ctx.config.retryBaseSec, row.attempts, o.retryAfterSec) * 1000;
        if (next > row.created_at + GIVE_UP_AFTER_MS) {
          markFailed(ctx.db, o.id, `gave up after 24 h: ${error}`);
          changed.push({ row, status: 'failed' });
          continue;
        }
        markRetry(ctx.db, o.id, error, next);
        changed.push({ row, status: 'queued' });
        if (earliest === null || next < earliest) earliest = next;
      }
    });
  } catch (err) {
    // The rows stay `sending`; start-up queues them again. Never lose the waiters.
    ctx.log.error('delivery results could not be applied', { err, count: batch.length });
  }
  for (const c of changed) emitChanged(ctx, [c.row], () => c.status);
  if (earliest !== null) ctx.due.poke(earliest);
  for (const r of batch) r.done();
}

function queueResult(ctx: AppContext, outcome: Outcome): Promise<void> {
  const e = engine(ctx);
  return new Promise<void>((resolve) => {
    e.results.push({ outcome, done: resolve });
    if (!e.flushScheduled) {
      e.flushScheduled = true;
      setImmediate(() => flushResults(ctx));
    }
  });
}

function settleIdle(e: Engine): void {
  if (e.active > 0) return;
  for (const w of e.idleWaiters.splice(0)) w();
}

interface AdapterJob {
  adapterName: string;
  config: Record<string, unknown>;
  item: DeliveryItem;
  allowPrivate: boolean;
}

/** A question callback (§7.5): no adapter, the opened payload instead. */
interface CallbackJob {
  id: number;
  callback: OpenedCallback;
  allowPrivate: boolean;
}

type Job = AdapterJob | CallbackJob;

function startJob(ctx: AppContext, job: Job): void {
  const e = engine(ctx);
  e.active++;
  void (async () => {
    try {
      const o =
        'callback' in job
          ? await sendCallbackOnce(ctx, job.id, job.callback, job.allowPrivate)
          : await sendOnce(
              ctx,
              adapterNamed(ctx, job.adapterName),
              job.adapterName,
              job.config,
              job.item,
              job.allowPrivate,
            );
      if (!o.stopped) await queueResult(ctx, o);
    } catch (err) {
      ctx.log.error('delivery send failed', { err, id: 'callback' in job ? job.id : job.item.outboxId });
    } finally {
      e.active--;
      // Room in the pool again: the due timer looks for more (nextDueAt hides the backlog while full).
      // Refill when half the pool is free: claims in chunks, not one tiny transaction per finished send.
      if (e.starved && !e.stopped && e.active <= poolLimit(ctx) / 2) {
        e.starved = false;
        ctx.due.poke(ctx.clock.now());
      }
      settleIdle(e);
    }
  })();
}

// ---------------------------------------------------------------- DueSource 'delivery'

/** Per-claim caches: a batch touches few channels and owners. */
class ClaimCache {
  private readonly channels = new Map<
    number,
    { name: string; config: Record<string, Record<string, unknown>> } | null
  >();
  private readonly quiet = new Map<number, QuietHours>();
  private readonly privateOk = new Map<number, boolean>();
  constructor(private readonly ctx: AppContext) {}
  channel(appid: number) {
    let c = this.channels.get(appid);
    if (c === undefined) {
      const row = findChannel(this.ctx.db, appid);
      c = row ? { name: row.name, config: openDeliveryConfig(this.ctx.secret, row.delivery_config) } : null;
      this.channels.set(appid, c);
    }
    return c;
  }
  quietHours(userId: number): QuietHours {
    let q = this.quiet.get(userId);
    if (!q) {
      q = getQuietHours(this.ctx, userId);
      this.quiet.set(userId, q);
    }
    return q;
  }
  allowPrivate(userId: number): boolean {
    let a = this.privateOk.get(userId);
    if (a === undefined) {
      a = allowPrivateFor(this.ctx, userId);
      this.privateOk.set(userId, a);
    }
    return a;
  }
}

/** The adapter's settings when it is still enabled for a message of this priority, else null. */
function activeConfig(
  config: Record<string, Record<string, unknown>>,
  adapter: string,
  priority: number | null,
): Record<string, unknown> | null {
  const c = Object.hasOwn(config, adapter) ? config[adapter] : undefined;
  if (!c || c.enabled === false) return null;
  if (priority !== null && typeof c.minPriority === 'number' && priority < c.minPriority) return null;
  return c;
}

/**
 * Decides one due row inside the claim transaction: cancelled, held, folded into a digest, or claimed
 * (`sending`, returned as a job to start after commit).
 */
function decide(
  ctx: AppContext,
  row: DeliveryRow,
  now: number,
  cache: ClaimCache,
  changed: DeliveryRow[],
): Job | null {
  const channel = cache.channel(row.appid);
  if (!channel) {
    cancelDelivery(ctx.db, row.id, 'config');
    changed.push(row);
    return null;
  }
  if (row.kind === 'callback') {
    // A question callback (§7.5, callbacks.ts): no adapter settings to re-check, not for a human (never
    // held by quiet hours, not cancelled by read marks), no quota. A payload that cannot be opened throws:
    // the entry fails alone.
    const callback = openCallback(ctx, row.payload);
    claimDelivery(ctx.db, row.id, now);
    changed.push(row);
    return { id: row.id, callback, allowPrivate: cache.allowPrivate(row.user_id) };
  }
  if (row.kind !== 'redelivery' && row.kind !== 'digest') {
    // A test row is never queued.
    cancelDelivery(ctx.db, row.id, 'config');
    changed.push(row);
    return null;
  }
  let message: MessageRow | undefined;
  if (row.kind === 'redelivery') {
    message = row.message_id === null ? undefined : findMessage(ctx.db, row.message_id);
    if (!message) {
      cancelDelivery(ctx.db, row.id, 'deleted');
      changed.push(row);
      return null;
    }
    if (isReadBy(ctx.db, row.user_id, row.appid, message.id)) {
      cancelDelivery(ctx.db, row.id, 'read');
      changed.push(row);
      return null;
    }
  }
  const config = activeConfig(channel.config, row.adapter, message ? message.priority : null);
  if (!config) {
    cancelDelivery(ctx.db, row.id, 'config');
    changed.push(row);
    return null;
  }
  if (message) {
    const qh = cache.quietHours(row.user_id);
    const w = quietWindowAt(qh, now);
    if (w && message.priority < qh.breakthroughPriority) {
      if (row.held_until !== w.end) {
        holdDelivery(ctx.db, row.id, w.end, JSON.stringify({ heldFrom: w.start }));
        changed.push(row);
      } else holdDelivery(ctx.db, row.id, w.end, row.payload);
      return null;
    }
    if (row.held_until !== null && qh.enabled && qh.digest) {
      createDigests(ctx, row.user_id, row.held_until, qh, now, changed);
      return null;
    }
  }
  claimDelivery(ctx.db, row.id, now);
  changed.push(row);
  const item = message
    ? redeliveryItem(ctx, row, message, channel.name)
    : payloadItem(ctx, row, channel.name);
  return { adapterName: row.adapter, config, item, allowPrivate: cache.allowPrivate(row.user_id) };
}

/** DueSource.nextDueAt: the indexed MIN, hidden while the pool is full (a send ending pokes the timer). */
export function deliveryNextDue(ctx: AppContext): number | null {
  const e = engine(ctx);
  if (e.stopped) return null;
  if (e.active >= poolLimit(ctx)) {
    e.starved = true;
    return null;
  }
  return nextQueuedAt(ctx.db);
}

/** DueSource.runDue: claims what is due at `now` while the pool has room, in bounded transactions. */
export async function runDueDeliveries(ctx: AppContext, now: number): Promise<void> {
  const e = engine(ctx);
  for (;;) {
    const room = poolLimit(ctx) - e.active;
    if (room <= 0) e.starved = true;
    if (e.stopped || room <= 0) return;
    const rows = dueDeliveries(ctx.db, now, Math.min(CLAIM_BATCH, room));
    if (rows.length === 0) return;
    const cache = new ClaimCache(ctx);
    const changed: DeliveryRow[] = [];
    // Relaxed like the results: a claim lost in a crash leaves the row `queued` (sent again after start).
    const jobs = ctx.db.relaxed(() => {
      const out: Job[] = [];
      for (const row of rows) {
        // A digest earlier in this batch may have folded this row already.
        const fresh = findDelivery(ctx.db, row.id);
        if (fresh?.status !== 'queued') continue;
        // One savepoint per row: a row that cannot be judged (unreadable settings) fails alone instead of
        // failing the batch, and with it the due source, again and again.
        const mark = changed.length;
        try {
          const job = ctx.db.transaction(() => decide(ctx, fresh, now, cache, changed));
          if (job) out.push(job);
        } catch (err) {
          changed.length = mark;
          ctx.log.error('a delivery could not be prepared', { err, id: fresh.id });
          failQueued(
            ctx.db,
            fresh.id,
            `could not prepare the delivery: ${err instanceof Error ? err.message : String(err)}`,
          );
          changed.push(fresh);
        }
      }
      return out;
    });
    for (const r of changed) {
      const after = findDelivery(ctx.db, r.id);
      if (after) emitChanged(ctx, [after], (x) => x.status);
    }
    for (const job of jobs) startJob(ctx, job);
    const at = nextQueuedAt(ctx.db);
    if (at !== null && at > now) ctx.due.poke(at);
    // Let requests in between batches.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Resolves when no send is in flight (DueSource.idle, for Scheduler.tick()). */
export function deliveriesIdle(ctx: AppContext): Promise<void> {
  const e = engine(ctx);
  if (e.active === 0) return Promise.resolve();
  return new Promise((resolve) => e.idleWaiters.push(resolve));
}

/** At start-up (§6.1): `sending` rows go back to `queued`, due at once; interrupted tests fail. */
export function recoverOutbox(ctx: AppContext): void {
  const now = ctx.clock.now();
  const n = ctx.db.transaction(() => {
    failInterruptedTests(ctx.db);
    return requeueSending(ctx.db, now);
  });
  if (n > 0) ctx.log.info('interrupted deliveries queued again', { count: n });
}

/** Server stop: aborts sends in flight (their rows stay `sending` for the next start) and waits for them. */
export async function stopOutbox(ctx: AppContext): Promise<void> {
  const e = engine(ctx);
  e.stopped = true;
  for (const c of e.controllers) c.abort(new Error('server stopping'));
  await deliveriesIdle(ctx);
  flushResults(ctx);
}

// ---------------------------------------------------------------- delivery/test, the log, /m/read

/** The channel when the caller owns it and may see it; 404 otherwise (share recipients included, §6.3). */
export function ownedChannel(ctx: AppContext, p: Principal, appid: number): ChannelRow {
  const v = requireVisible(ctx, p, appid);
  if (!v.owned) throw errors.notFound('channel');
  return v.row;
}

/**
 * `POST /application/{id}/delivery/test` (§6.3): every enabled adapter (or the named one) at once,
 * without retries; each send is recorded as a `test` entry (sent or failed).
 */
export async function testDelivery(
  ctx: AppContext,
  p: Principal,
  appid: number,
  adapter?: string,
): Promise<{ results: Record<string, { ok: true } | { ok: false; error: string }> }> {
  const row = ownedChannel(ctx, p, appid);
  if (adapter !== undefined && !adapterNamed(ctx, adapter))
    throw errors.badRequest(`adapter: unknown adapter "${adapter}"`);
  const config = openDeliveryConfig(ctx.secret, row.delivery_config);
  let names = enabledAdapters(config);
  if (adapter !== undefined) names = names.filter((n) => n === adapter);
  if (names.length === 0) throw errors.noAdapterToTest();
  const now = ctx.clock.now();
  const allowPrivate = allowPrivateFor(ctx, row.user_id);
  const entries = ctx.db.transaction(() =>
    names.map((name) => {
      const content: StoredContent = {
        title: 'Belfry test',
        message: `This is a test of the ${name} delivery of channel "${row.name}".`,
        priority: 5,
        date: now,
      };
      const id = insertDelivery(ctx.db, {
        userId: row.user_id,
        appid,
        messageId: null,
        adapter: name,
        kind: 'test',
        status: 'sending',
        attempts: 1,
        createdAt: now,
        nextAttemptAt: null,
        lastAttemptAt: now,
        payload: JSON.stringify(content),
      });
      return { name, row: findDelivery(ctx.db, id)! };
    }),
  );
  const outcomes = await Promise.all(
    entries.map((x) =>
      sendOnce(
        ctx,
        adapterNamed(ctx, x.name),
        x.name,
        config[x.name]!,
        payloadItem(ctx, x.row, row.name),
        allowPrivate,
      ),
    ),
  );
  const done = ctx.clock.now();
  ctx.db.transaction(() => {
    for (const o of outcomes) {
      if (o.ok) markSent(ctx.db, o.id, done);
      else markFailed(ctx.db, o.id, o.stopped ? 'server stopping' : (o.error ?? 'failed'));
    }
  });
  const results: Record<string, { ok: true } | { ok: false; error: string }> = {};
  entries.forEach((x, i) => {
    const o = outcomes[i]!;
    results[x.name] = o.ok
      ? { ok: true }
      : { ok: false, error: o.stopped ? 'server stopping' : (o.error ?? 'failed') };
    ctx.bus.emit('delivery:changed', {
      userId: row.user_id,
      appid,
      id: o.id,
      status: o.ok ? 'sent' : 'failed',
    });
  });
  return { results };
}

export function listDeliveries(
  ctx: AppContext,
  p: Principal,
  appid: number,
  req: { limit: number; since: number; status?: DeliveryStatus; nextUrl: (since: number) => string },
): { paging: Paging; deliveries: PresentedDelivery[] } {
  ownedChannel(ctx, p, appid);
  const rows = pageDeliveries(ctx.db, appid, req.since, req.limit + 1, req.status);
  const hasNext = rows.length > req.limit;
  const shown = hasNext ? rows.slice(0, req.limit) : rows;
  const paging: Paging = { size: shown.length, limit: req.limit };
  if (hasNext) {
    const since = shown[shown.length - 1]!.id;
    paging.since = since;
    paging.next = req.nextUrl(since);
  }
  return { paging, deliveries: shown.map(presentDelivery) };
}

/**
 * `GET /m/read?token=` (§6.2): marks the message read for the owner the link was signed for (the read
 * mark's trigger cancels its queued entries). Idempotent. Bad or expired: 400; message gone: 404.
 */
export function readByLink(ctx: AppContext, token: unknown): { messageId: number; title: string } {
  const data = readLink(ctx, 'read', token);
  const m = data?.m;
  const u = data?.u;
  if (typeof m !== 'number' || typeof u !== 'number') throw errors.badRequest('invalid or expired link');
  const message = findMessage(ctx.db, m);
  if (!message || message.user_id !== u) throw errors.notFound('message');
  ctx.db.transaction(() => markRead(ctx.db, u, [m]));
  return { messageId: m, title: message.title };
}

/** The Deliveries log keeps finished entries this long; queued and sending ones are kept until done. */
export const DELIVERY_LOG_KEEP_MS = 30 * 86_400_000;
/** Rows one retention run deletes at most (the next run takes the rest). */
const PRUNE_MAX = 50_000;

/** Retention task 'deliveries': finished entries older than 30 days go. */
export function pruneDeliveryLog(ctx: AppContext): number {
  const upTo = lastIdCreatedBefore(ctx.db, ctx.clock.now() - DELIVERY_LOG_KEEP_MS);
  if (upTo === 0) return 0;
  return ctx.db.transaction(() => deleteFinishedUpTo(ctx.db, upTo, PRUNE_MAX));
}
