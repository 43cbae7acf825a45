import type { AppContext } from '../../context';
import type { Db } from '../../db/database';
import { enqueueRedelivery, redeliveryPlan } from '../../delivery/outbox/enqueue';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import type { Paging } from '../../http/paging';
import type { BusMessage } from '../../lib/bus';
import { rfc3339 } from '../../lib/clock';
import { LAST_USED_RESOLUTION_MS } from '../../lib/limits';
import {
  isRestricted,
  type MessageScope,
  messageScope,
  ownedScope,
  requireVisible,
  targetChannelIds,
} from '../channels/access';
import { ensureSystemChannel } from '../channels/service';
import { findSendTarget, type SendTarget, touchChannel } from '../channels/store';
import { isChannelCovered } from '../maintenance/coverage';
import { SILENT_EXTRA } from '../maintenance/silent';
import { consumeEvents } from '../quota/service';
import { presentMessage } from './present';
import { flushSearchIndex } from './search-index';
import {
  deleteMessageById,
  deleteMessagesOfChannel,
  deleteMessagesOfUser,
  findMessage,
  insertMessage,
  type MessageRow,
  markChannelRead,
  markRead,
  pageMessages,
  readIds,
  searchMatchesAny,
  searchMessages,
  setMessageExtras,
} from './store';

export interface SendInput {
  message: string;
  title?: string;
  priority?: number;
  extras?: Record<string, unknown>;
  /** Overrides the sender given to sendMessages (alert receivers name their source). */
  senderName?: string;
  /** The message's time when it is not now (a heartbeat timeout is dated at its deadline). */
  date?: number;
  /**
   * Extras that name the message's own id (a question's `client::notification` click URL), merged over
   * `extras` once the id is known.
   */
  extrasFor?: (messageId: number) => Record<string, unknown>;
}

/**
 * The one writing path of messages (POST /message, public webhooks, alert receivers, system notices):
 * quota and insert in one transaction, `message:created` after the outermost commit. Returns the wire messages.
 */
export function sendMessages(
  ctx: AppContext,
  channelId: number,
  senderName: string,
  inputs: readonly SendInput[],
  opts: { system?: boolean } = {},
): BusMessage[] {
  const target = findSendTarget(ctx.db, channelId);
  if (!target) throw errors.notFound('channel');
  if (target.internal === 1 && !opts.system) throw errors.systemChannel();
  const out = ctx.db.transaction(() => insertAll(ctx, target, senderName, inputs, opts.system ?? false));
  // Inside a caller's transaction (a source family's state change, a router batch) the messages are not
  // committed yet: they are announced once they are, and never when that transaction rolls back.
  // Announced after the commit, so the bus isolates its listeners: one that throws (the hub, a job) is
  // logged and the rest still run; the messages are stored, so their writers get their answer (a 500 for
  // a kept message would make a client send it again).
  ctx.db.afterCommit(() => {
    for (const message of out) ctx.bus.emit('message:created', { message, ownerId: target.user_id });
  });
  return out;
}

function insertAll(
  ctx: AppContext,
  target: SendTarget,
  senderName: string,
  inputs: readonly SendInput[],
  system: boolean,
): BusMessage[] {
  const now = ctx.clock.now();
  // The server's own notices do not spend the user's quota.
  if (!system && inputs.length > 0) consumeEvents(ctx, target.user_id, inputs.length);
  const date = rfc3339(now);
  const out: BusMessage[] = [];
  // A channel covered by an active maintenance window: every message arrives with
  // `"service::silent": true` (sender's extras kept). Issue 15's outbox must skip these: they are never
  // re-delivered (docs/api.md, "Maintenance windows").
  const silent = isChannelCovered(ctx, target.id);
  // Re-delivery (issue 15): null for a channel without adapters (no query), the internal channel and
  // silent (maintenance) messages, which are never re-delivered.
  const plan = silent || target.internal === 1 ? null : redeliveryPlan(target.delivery_config);
  for (const raw of inputs) {
    const input = silent ? { ...raw, extras: { ...raw.extras, [SILENT_EXTRA]: true } } : raw;
    // A missing or blank title becomes the channel's name, as the older protocol does.
    const title = input.title !== undefined && input.title.trim() !== '' ? input.title : target.name;
    const priority = input.priority ?? target.default_priority;
    const sender = input.senderName ?? senderName;
    const at = input.date ?? now;
    const id = insertMessage(ctx.db, {
      channelId: target.id,
      userId: target.user_id,
      message: input.message,
      title,
      priority,
      date: at,
      senderName: sender,
      extras: input.extras === undefined ? null : JSON.stringify(input.extras),
    });
    const extras = input.extrasFor ? { ...input.extras, ...input.extrasFor(id) } : input.extras;
    if (input.extrasFor) setMessageExtras(ctx.db, id, JSON.stringify(extras));
    if (plan !== null && input.extras?.[SILENT_EXTRA] !== true)
      enqueueRedelivery(ctx, plan, {
        ownerId: target.user_id,
        appid: target.id,
        messageId: id,
        priority,
        date: at,
        now,
      });
    out.push({
      id,
      appid: target.id,
      message: input.message,
      title,
      priority,
      date: at === now ? date : rfc3339(at),
      senderName: sender,
      ...(extras === undefined ? {} : { extras }),
    });
  }
  if (target.last_used === null || now - target.last_used >= LAST_USED_RESOLUTION_MS)
    touchChannel(ctx.db, target.id, now);
  return out;
}

/** A notice from Belfry to a user, in their internal channel (created on first need). */
export function postSystemMessage(
  ctx: AppContext,
  userId: number,
  title: string,
  message: string,
): BusMessage {
  const channel = ensureSystemChannel(ctx, userId);
  return sendMessages(ctx, channel.id, 'Belfry', [{ title, message }], { system: true })[0]!;
}

/** Who is sending: the key's name (or the channel's for the primary/unnamed key), a recipient's email. */
/** The sender a message names: the key's name (or its channel's), or the share recipient's email. */
export function senderNameOf(p: Principal): string {
  return p.label ?? '';
}

export interface PageRequest {
  limit: number;
  since: number;
  /** Requests through X-Legacy-Key/X-Gotify-Key get paging.since on every page (contract). */
  legacy: boolean;
  /** Builds the URL of the next page from its cursor. */
  nextUrl: (since: number) => string;
}

function page(ctx: AppContext, p: Principal, rows: MessageRow[], req: PageRequest) {
  const hasNext = rows.length > req.limit;
  const shown = hasNext ? rows.slice(0, req.limit) : rows;
  const read = readIds(ctx.db, p.userId, shown);
  const paging: Paging = { size: shown.length, limit: req.limit };
  if (hasNext) {
    const since = shown[shown.length - 1]!.id;
    paging.since = since;
    paging.next = req.nextUrl(since);
  } else if (req.legacy) paging.since = 0;
  return { paging, messages: shown.map((r) => presentMessage(r, read.has(r.id))) };
}

export function listMessages(ctx: AppContext, p: Principal, req: PageRequest) {
  return page(ctx, p, pageMessages(ctx.db, messageScope(ctx, p), req.since, req.limit + 1), req);
}

export function listChannelMessages(
  ctx: AppContext,
  p: Principal,
  channelId: number,
  recursive: boolean,
  req: PageRequest,
) {
  const v = requireVisible(ctx, p, channelId);
  const scope: MessageScope = { ownerAll: null, channelIds: targetChannelIds(ctx, p, v, recursive) };
  return page(ctx, p, pageMessages(ctx.db, scope, req.since, req.limit + 1), req);
}

/**
 * `q` → FTS4 MATCH expressions, every word must occur: `exact` with the words as typed, `prefix` with
 * the last word also as a prefix, and `last` the last word alone. Words are quoted, so nothing the user
 * types is FTS syntax. No words at all: nothing matches.
 */
export function ftsQuery(q: string): { exact: string; prefix: string; last: string } | null {
  const words = q.match(/[\p{L}\p{N}_]+/gu);
  if (!words) return null;
  const head = words.slice(0, -1).map((w) => `"${w}" `);
  const last = words[words.length - 1]!;
  return { exact: `${head.join('')}"${last}"`, prefix: `${head.join('')}"${last}*"`, last: `"${last}"` };
}

/**
 * The last word is a whole word when some message in the scope contains it as one, and then it is
 * matched as typed; otherwise it is an unfinished word and matches as a prefix (`dis` finds `disk`).
 * FTS4 reads a prefix's doclists whole (every term under it: `host1*` merges 111 at 1M messages, 0.1–0.5 s),
 * while exact words are read incrementally, newest first, stopping at the LIMIT. The choice depends on
 * the scope only, never on `since`, so the pages of one search never mix the two.
 */
export function searchIndexed(
  db: Db,
  scope: MessageScope,
  q: string,
  since: number,
  take: number,
): MessageRow[] {
  const match = ftsQuery(q);
  if (match === null) return [];
  // Asked first and alone: it stops at the newest message in the scope with the word. (Searching the
  // exact words first and asking only when they find nothing did the work twice when the word is
  // missing from the scope: 127 against 66 ms p50 for `job items host137` in one channel at 1M.)
  const whole = searchMatchesAny(db, scope, match.last);
  return searchMessages(db, scope, whole ? match.exact : match.prefix, since, take);
}

export function searchVisible(
  ctx: AppContext,
  p: Principal,
  q: string,
  appId: number | undefined,
  recursive: boolean,
  req: PageRequest,
) {
  let scope = messageScope(ctx, p);
  if (appId !== undefined) {
    const v = requireVisible(ctx, p, appId);
    scope = { ownerAll: null, channelIds: targetChannelIds(ctx, p, v, recursive) };
  }
  // Messages are indexed in batches off the request path (search-index.ts): the ones still waiting
  // (at most SEARCH_INDEX_LAG_MS of traffic) go in first, so a search is never behind GET /message.
  if (ftsQuery(q) !== null) flushSearchIndex(ctx);
  return page(ctx, p, searchIndexed(ctx.db, scope, q, req.since, req.limit + 1), req);
}

function inScope(scope: MessageScope, row: MessageRow): boolean {
  return (
    (scope.ownerAll !== null && row.user_id === scope.ownerAll) || scope.channelIds.includes(row.channel_id)
  );
}

/** Marks what the caller can see; other ids are skipped. */
export function markMessagesRead(ctx: AppContext, p: Principal, ids: readonly number[]): { marked: number } {
  const scope = messageScope(ctx, p);
  const visible = [...new Set(ids)].filter((id) => {
    const row = findMessage(ctx.db, id);
    return row !== undefined && inScope(scope, row);
  });
  const marked = ctx.db.transaction(() => markRead(ctx.db, p.userId, visible));
  return { marked };
}

export function markChannelsRead(ctx: AppContext, p: Principal, channelId: number, recursive: boolean) {
  if (isRestricted(p)) throw errors.restrictedScope('mark a whole channel read');
  const v = requireVisible(ctx, p, channelId);
  const ids = targetChannelIds(ctx, p, v, recursive);
  ctx.db.transaction(() => {
    for (const id of ids) markChannelRead(ctx.db, p.userId, id);
  });
  return { appids: ids };
}

export function deleteAllMessages(ctx: AppContext, p: Principal): { deleted: number } {
  const scope = ownedScope(ctx, p);
  const deleted = ctx.db.transaction(() => {
    let n = scope.ownerAll !== null ? deleteMessagesOfUser(ctx.db, scope.ownerAll) : 0;
    for (const id of scope.channelIds) n += deleteMessagesOfChannel(ctx.db, id);
    return n;
  });
  ctx.bus.emit(
    'messages:deleted',
    scope.ownerAll !== null ? { userId: p.userId } : { userId: p.userId, channelIds: scope.channelIds },
  );
  return { deleted };
}

export function deleteOneMessage(ctx: AppContext, p: Principal, id: number): { deleted: number } {
  const row = findMessage(ctx.db, id);
  if (!row || !inScope(messageScope(ctx, p), row)) throw errors.notFound('message');
  if (row.user_id !== p.userId) throw errors.ownerOnly('delete messages');
  const deleted = ctx.db.transaction(() => deleteMessageById(ctx.db, id));
  ctx.bus.emit('messages:deleted', { userId: row.user_id, ids: [id] });
  return { deleted };
}

export function deleteChannelMessages(ctx: AppContext, p: Principal, channelId: number, recursive: boolean) {
  const v = requireVisible(ctx, p, channelId);
  if (!v.owned) throw errors.ownerOnly('delete messages');
  const ids = targetChannelIds(ctx, p, v, recursive, true);
  const deleted = ctx.db.transaction(() => ids.reduce((n, id) => n + deleteMessagesOfChannel(ctx.db, id), 0));
  ctx.bus.emit('messages:deleted', { userId: v.row.user_id, channelIds: ids });
  return { deleted };
}
