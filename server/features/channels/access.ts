import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { type ChannelRow, childIds, findChannel, listOwnChannels } from './store';

/**
 * Who sees which channel (spec "Authentication" points 2 and 7, "Channels"): the owner; accepted share
 * recipients; an API token only inside its scope; a channel key (A or S) only its own channel. Everything
 * else is someone else's resource: 404.
 */
export interface ShareView {
  id: number;
  permission: 'view' | 'send';
  canShare: boolean;
  tokenHint: string;
}

export interface VisibleChannel {
  row: ChannelRow;
  owned: boolean;
  share?: ShareView;
}

interface SharedRow extends ChannelRow {
  share_id: number;
  share_permission: 'view' | 'send';
  share_can_share: number;
  share_token_hint: string;
}

const SHARED_SELECT = `SELECT c.*, NULL AS key_hint, s.id AS share_id, s.permission AS share_permission,
    s.can_share AS share_can_share, s.token_hint AS share_token_hint
  FROM shares s JOIN channels c ON c.id = s.channel_id`;

function shared(r: SharedRow): VisibleChannel {
  return {
    row: r,
    owned: false,
    share: {
      id: r.share_id,
      permission: r.share_permission,
      canShare: r.share_can_share === 1,
      tokenHint: r.share_token_hint,
    },
  };
}

export function acceptedSharesOf(ctx: AppContext, userId: number): VisibleChannel[] {
  return ctx.db
    .all<SharedRow>(
      `${SHARED_SELECT} WHERE s.recipient_id = ? AND s.status = 'accepted' ORDER BY c.sort_key, c.id`,
      [userId],
    )
    .map(shared);
}

function acceptedShareOf(ctx: AppContext, userId: number, channelId: number): VisibleChannel | undefined {
  const r = ctx.db.first<SharedRow>(
    `${SHARED_SELECT} WHERE s.recipient_id = ? AND s.channel_id = ? AND s.status = 'accepted'`,
    [userId, channelId],
  );
  return r ? shared(r) : undefined;
}

function shareById(ctx: AppContext, shareId: number): VisibleChannel | undefined {
  const r = ctx.db.first<SharedRow>(`${SHARED_SELECT} WHERE s.id = ? AND s.status = 'accepted'`, [shareId]);
  return r ? shared(r) : undefined;
}

/** API tokens with a non-empty `appIds` or `appTags`. */
export function isRestricted(p: Principal): boolean {
  return p.kind === 'api' && !!p.scope && (p.scope.appIds.length > 0 || p.scope.appTags.length > 0);
}

/** Inside an API token's scope (always true for other principals and unrestricted tokens). */
export function inScope(p: Principal, row: ChannelRow): boolean {
  return wouldBeInScope(p, row.id, JSON.parse(row.tags) as string[]);
}

/**
 * Whether channel `id` is inside an API token's scope: true without a lookup for an unrestricted
 * principal, false for a restricted token when the channel does not exist.
 */
export function channelInScope(ctx: AppContext, p: Principal, id: number): boolean {
  if (!isRestricted(p)) return true;
  const row = findChannel(ctx.db, id);
  return row !== undefined && inScope(p, row);
}

/**
 * Whether a channel with this id (null: not created yet) and these tags is inside the token's scope:
 * its id is in `appIds` or it carries one of `appTags` (a child is not in scope by its parent).
 */
export function wouldBeInScope(p: Principal, id: number | null, tags: readonly string[]): boolean {
  if (!isRestricted(p) || !p.scope) return true;
  if (id !== null && p.scope.appIds.includes(id)) return true;
  return tags.some((t) => p.scope!.appTags.includes(t));
}

function isKey(p: Principal): boolean {
  return p.kind === 'app' || p.kind === 'share';
}

function keyChannel(ctx: AppContext, p: Principal): VisibleChannel | undefined {
  if (p.kind === 'share') return p.tokenId === undefined ? undefined : shareById(ctx, p.tokenId);
  const row = p.channelId === undefined ? undefined : findChannel(ctx.db, p.channelId);
  return row ? { row, owned: true } : undefined;
}

/** `GET /application`: own channels, then accepted shared ones, each by sortKey then id. */
export function listVisible(ctx: AppContext, p: Principal): VisibleChannel[] {
  if (isKey(p)) {
    const v = keyChannel(ctx, p);
    return v ? [v] : [];
  }
  const own = listOwnChannels(ctx.db, p.userId)
    .filter((r) => inScope(p, r))
    .map((row) => ({ row, owned: true }));
  const sharedWithMe = acceptedSharesOf(ctx, p.userId).filter((v) => inScope(p, v.row));
  return [...own, ...sharedWithMe];
}

/**
 * A channel a user receives, whatever token asks (no API-token scope): their own, or one shared with
 * them and accepted.
 */
export function receivedChannel(ctx: AppContext, userId: number, id: number): VisibleChannel | undefined {
  const row = findChannel(ctx.db, id);
  if (row && row.user_id === userId) return { row, owned: true };
  return acceptedShareOf(ctx, userId, id);
}

/** A channel the caller may read, or 404. */
export function requireVisible(ctx: AppContext, p: Principal, id: number): VisibleChannel {
  if (isKey(p)) {
    if (p.channelId !== id) throw errors.notFound('channel');
    const v = keyChannel(ctx, p);
    if (!v) throw errors.notFound('channel');
    return v;
  }
  const v = receivedChannel(ctx, p.userId, id);
  if (v && inScope(p, v.row)) return v;
  throw errors.notFound('channel');
}

/**
 * A channel the caller owns, or 404 (403 for a share recipient, who can see it). `write` refuses the
 * internal channel (spec: writing to the system channel is 403).
 */
export function requireOwned(
  ctx: AppContext,
  p: Principal,
  id: number,
  opts: { write?: boolean; what?: string } = {},
): ChannelRow {
  const v = requireVisible(ctx, p, id);
  if (!v.owned) throw errors.ownerOnly(opts.what ?? 'change it');
  if (opts.write && v.row.internal === 1) throw errors.systemChannel();
  return v.row;
}

/** Ids of the channel and its descendants that pass `keep` (the tree walk of `?recursive=1`). */
export function subtreeIds(ctx: AppContext, rootId: number, keep: (id: number) => boolean): number[] {
  const out = [rootId];
  const queue = [rootId];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const id = queue.shift()!;
    for (const child of childIds(ctx.db, id)) {
      if (seen.has(child)) continue;
      seen.add(child);
      queue.push(child);
      if (keep(child)) out.push(child);
    }
  }
  return out;
}

/**
 * The channel, plus with `recursive` every descendant the caller may see (for a share recipient only
 * those also shared with them; for a restricted API token only those in scope).
 */
export function targetChannelIds(
  ctx: AppContext,
  p: Principal,
  root: VisibleChannel,
  recursive: boolean,
  mustOwn = false,
): number[] {
  if (!recursive) return [root.row.id];
  const visible = new Set(
    listVisible(ctx, p)
      .filter((v) => !mustOwn || v.owned)
      .map((v) => v.row.id),
  );
  return subtreeIds(ctx, root.row.id, (id) => visible.has(id));
}

/**
 * Which messages a principal reads: every channel of `ownerAll` (the common case: one indexed range
 * scan on messages_by_user) plus `channelIds` (shared channels, a scope, a key's channel).
 */
export interface MessageScope {
  ownerAll: number | null;
  channelIds: number[];
}

export function messageScope(ctx: AppContext, p: Principal): MessageScope {
  if (isKey(p)) return { ownerAll: null, channelIds: p.channelId === undefined ? [] : [p.channelId] };
  if (isRestricted(p)) return { ownerAll: null, channelIds: listVisible(ctx, p).map((v) => v.row.id) };
  // Only the ids, on the index: this runs for every page of messages (a JOIN costs ~15 µs here).
  const shared = ctx.db.all<{ channel_id: number }>(
    "SELECT channel_id FROM shares WHERE recipient_id = ? AND status = 'accepted'",
    [p.userId],
  );
  return { ownerAll: p.userId, channelIds: shared.map((r) => r.channel_id) };
}

/** Channels whose messages the caller may delete: own channels (in scope). */
export function ownedScope(ctx: AppContext, p: Principal): MessageScope {
  if (isRestricted(p))
    return {
      ownerAll: null,
      channelIds: listVisible(ctx, p)
        .filter((v) => v.owned)
        .map((v) => v.row.id),
    };
  return { ownerAll: p.userId, channelIds: [] };
}
