import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileTypeFromBuffer } from 'file-type';
import type { AppContext } from '../../context';
import { cancelForConfig } from '../../delivery/outbox/store';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { rfc3339OrNull } from '../../lib/clock';
import { createPrimaryKey } from '../channel-keys/service';
import { keyIdsOfChannels } from '../channel-keys/store';
import { writeWithinPlan } from '../plans/caps';
import { ALERTING_STATUSES, summedHealth, visibleSources } from '../sources/registry';
import {
  inScope,
  listVisible,
  requireOwned,
  requireVisible,
  targetChannelIds,
  type VisibleChannel,
  wouldBeInScope,
} from './access';
import {
  type DeliveryConfig,
  enabledAdapters,
  hasUnsealedSecrets,
  openDeliveryConfig,
  sealDeliveryConfig,
  validateDeliveryConfig,
} from './delivery-config';
import {
  type ChannelPatch,
  type ChannelRow,
  channelStats,
  deleteChannelRow,
  findChannel,
  findSystemChannel,
  insertChannel,
  parentOf,
  setChannelImage,
  updateChannel,
} from './store';

export const SYSTEM_CHANNEL_NAME = 'Belfry';
const IMAGE_TYPES: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

export interface ChannelInput {
  name?: string;
  description?: string;
  defaultPriority?: number;
  parentId?: number | null;
  sortKey?: string;
  tags?: string[];
  deliveryConfig?: unknown;
}

/** Users who should hear about a change of the channel: the owner and its accepted recipients. */
export function channelAudience(ctx: AppContext, channelId: number, ownerId: number): number[] {
  const rows = ctx.db.all<{ recipient_id: number }>(
    "SELECT recipient_id FROM shares WHERE channel_id = ? AND status = 'accepted' AND recipient_id IS NOT NULL",
    [channelId],
  );
  return [ownerId, ...rows.map((r) => r.recipient_id)];
}

/**
 * A parent must be another of the owner's own channels, inside the caller's scope (a restricted API
 * token), not internal, and not below the channel itself.
 */
function checkParent(
  ctx: AppContext,
  p: Principal,
  ownerId: number,
  channelId: number | null,
  parentId: number,
): void {
  const parent = findChannel(ctx.db, parentId);
  if (!parent || parent.user_id !== ownerId || !inScope(p, parent))
    throw errors.badRequest('parentId: no such channel');
  if (parent.internal === 1) throw errors.systemChannel();
  if (channelId === null) return;
  let cursor: number | null = parentId;
  for (let guard = 0; cursor !== null && guard < 10_000; guard++) {
    if (cursor === channelId) throw errors.badRequest('parentId: would create a cycle');
    cursor = parentOf(ctx.db, cursor);
  }
}

export function createChannel(ctx: AppContext, p: Principal, input: ChannelInput & { name: string }) {
  // A restricted API token creates only what it can then see: a channel carrying one of its tags (a new
  // id is in no appIds). Otherwise it would hold the primary key of a channel outside its scope.
  if (!wouldBeInScope(p, null, input.tags ?? []))
    throw errors.restrictedScope('create a channel without one of its tags');
  if (input.parentId !== undefined && input.parentId !== null)
    checkParent(ctx, p, p.userId, null, input.parentId);
  const deliveryConfig =
    input.deliveryConfig === undefined
      ? {}
      : sealDeliveryConfig(ctx.secret, validateDeliveryConfig(input.deliveryConfig));
  const { id, token } = writeWithinPlan(ctx, p.userId, 'channels', () => {
    const id = insertChannel(ctx.db, {
      userId: p.userId,
      name: input.name,
      description: input.description ?? '',
      internal: false,
      defaultPriority: input.defaultPriority ?? 0,
      sortKey: input.sortKey ?? '',
      parentId: input.parentId ?? null,
      tags: input.tags ?? [],
      deliveryConfig,
      now: ctx.clock.now(),
    });
    return { id, token: createPrimaryKey(ctx, id) };
  });
  return { channel: { row: findChannel(ctx.db, id)!, owned: true } as VisibleChannel, token };
}

export function updateChannelFor(
  ctx: AppContext,
  p: Principal,
  id: number,
  input: ChannelInput,
): VisibleChannel {
  const row = requireOwned(ctx, p, id, { write: true });
  if (input.tags !== undefined && !wouldBeInScope(p, id, input.tags))
    throw errors.restrictedScope('take a channel out of its scope');
  if (input.parentId !== undefined && input.parentId !== null)
    checkParent(ctx, p, row.user_id, id, input.parentId);
  const patch: ChannelPatch = {
    name: input.name,
    description: input.description,
    defaultPriority: input.defaultPriority,
    sortKey: input.sortKey,
    parentId: input.parentId,
    tags: input.tags,
  };
  if (input.deliveryConfig !== undefined)
    patch.deliveryConfig = sealDeliveryConfig(
      ctx.secret,
      validateDeliveryConfig(input.deliveryConfig, openDeliveryConfig(ctx.secret, row.delivery_config)),
    );
  writeWithinPlan(ctx, row.user_id, null, () => {
    updateChannel(ctx.db, id, patch);
    // Re-delivery (issue 15): queued entries of an adapter removed or disabled are cancelled (`config`).
    if (patch.deliveryConfig !== undefined)
      cancelForConfig(ctx.db, id, enabledAdapters(patch.deliveryConfig as DeliveryConfig));
  });
  ctx.bus.emit('channel:status_changed', { appid: id, userIds: channelAudience(ctx, id, row.user_id) });
  return { row: findChannel(ctx.db, id)!, owned: true };
}

/**
 * Deletes the channel with its messages, keys, shares, webhooks and logo. Children stay, as roots
 * (parent_id ON DELETE SET NULL; docs/api.md "Channels").
 */
export function deleteChannelFor(ctx: AppContext, p: Principal, id: number): void {
  const row = requireOwned(ctx, p, id, { write: true });
  const keyIds = keyIdsOfChannels(ctx.db, [id]);
  const shares = ctx.db.all<{ id: number; recipient_id: number | null }>(
    'SELECT id, recipient_id FROM shares WHERE channel_id = ?',
    [id],
  );
  const audience = channelAudience(ctx, id, row.user_id);
  ctx.db.transaction(() => deleteChannelRow(ctx.db, id));
  removeImageFile(ctx, row.image);
  for (const tokenId of keyIds) ctx.bus.emit('token:invalidated', { kind: 'app', tokenId });
  for (const s of shares) ctx.bus.emit('token:invalidated', { kind: 'share', tokenId: s.id });
  ctx.bus.emit('messages:deleted', { userId: row.user_id, channelIds: [id] });
  const recipients = shares.map((s) => s.recipient_id).filter((r): r is number => r !== null);
  if (recipients.length > 0)
    ctx.bus.emit('share:changed', { appid: id, userIds: [row.user_id, ...recipients] });
  ctx.bus.emit('channel:status_changed', { appid: id, userIds: audience });
}

/**
 * At start: seals the delivery secrets of rows written before they were sealed at rest (issue 21), so
 * the database keeps no secret in clear from the next snapshot on. Returns how many channels changed.
 */
export function sealStoredDeliverySecrets(ctx: AppContext): number {
  const legacy = ctx.db
    .all<{ id: number; delivery_config: string }>(
      "SELECT id, delivery_config FROM channels WHERE delivery_config <> '{}'",
    )
    .filter((r) => hasUnsealedSecrets(JSON.parse(r.delivery_config) as DeliveryConfig));
  if (legacy.length === 0) return 0;
  ctx.db.transaction(() => {
    for (const r of legacy)
      updateChannel(ctx.db, r.id, {
        deliveryConfig: sealDeliveryConfig(ctx.secret, openDeliveryConfig(ctx.secret, r.delivery_config)),
      });
  });
  ctx.log.info('sealed the delivery secrets of older channels', { channels: legacy.length });
  return legacy.length;
}

/** The user's internal channel, created on first need (docs/api.md "Internal (system) channel"). */
export function ensureSystemChannel(ctx: AppContext, userId: number): ChannelRow {
  const found = findSystemChannel(ctx.db, userId);
  if (found) return found;
  const id = ctx.db.transaction(() =>
    insertChannel(ctx.db, {
      userId,
      name: SYSTEM_CHANNEL_NAME,
      description: 'Notices from Belfry itself',
      internal: true,
      defaultPriority: 4,
      sortKey: '',
      parentId: null,
      tags: [],
      deliveryConfig: {},
      now: ctx.clock.now(),
    }),
  );
  return findChannel(ctx.db, id)!;
}

function imagesDir(ctx: AppContext): string {
  return join(ctx.config.dataDir, 'images');
}

export function imagePath(ctx: AppContext, file: string): string {
  return join(imagesDir(ctx), file);
}

function removeImageFile(ctx: AppContext, file: string | null): void {
  if (!file) return;
  try {
    rmSync(imagePath(ctx, file), { force: true });
  } catch (err) {
    ctx.log.warn('could not remove a channel logo', { file, err });
  }
}

/** Logo upload: the content decides (magic bytes), never the name or the declared type. */
export async function setImage(
  ctx: AppContext,
  p: Principal,
  id: number,
  data: Buffer | undefined,
): Promise<VisibleChannel> {
  requireOwned(ctx, p, id, { write: true });
  if (!data) throw errors.badRequest('file is required');
  const type = await fileTypeFromBuffer(data);
  const ext = type ? IMAGE_TYPES[type.mime] : undefined;
  if (!ext) throw errors.badRequest('file is not a supported image (png, jpeg, gif, webp)');
  const file = `${randomBytes(16).toString('hex')}.${ext}`;
  mkdirSync(imagesDir(ctx), { recursive: true, mode: 0o700 });
  const fd = openSync(imagePath(ctx, file), 'w', 0o600); // the data dir is its owner's only
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  // Re-read after the await: the channel may have changed or gone meanwhile.
  const row = findChannel(ctx.db, id);
  if (!row) {
    removeImageFile(ctx, file);
    throw errors.notFound('channel');
  }
  ctx.db.transaction(() => setChannelImage(ctx.db, id, file));
  removeImageFile(ctx, row.image);
  ctx.bus.emit('channel:status_changed', { appid: id, userIds: channelAudience(ctx, id, row.user_id) });
  return { row: findChannel(ctx.db, id)!, owned: true };
}

export function deleteImage(ctx: AppContext, p: Principal, id: number): VisibleChannel {
  const row = requireOwned(ctx, p, id, { write: true });
  if (!row.image) throw errors.badRequest('channel has no image');
  ctx.db.transaction(() => setChannelImage(ctx.db, id, null));
  removeImageFile(ctx, row.image);
  ctx.bus.emit('channel:status_changed', { appid: id, userIds: channelAudience(ctx, id, row.user_id) });
  return { row: findChannel(ctx.db, id)!, owned: true };
}

/** The channels' owners, for the "owner sees all, a recipient their own" rule of the source lists. */
function ownerLookup(ctx: AppContext, ids: number[]): (channelId: number) => number | undefined {
  const owners = new Map<number, number>();
  for (const id of ids) {
    const row = findChannel(ctx.db, id);
    if (row) owners.set(id, row.user_id);
  }
  return (channelId) => owners.get(channelId);
}

/**
 * `GET /application/{id}/status` (docs/api.md, "Channels"): the health fields summed over `channelIds`
 * (from the families registered in the event-sources registry), the message counts, and `alerting`:
 * every source the caller sees that is now down, late, firing or has issues, oldest `since` first.
 */
export function channelStatus(ctx: AppContext, p: Principal, id: number, recursive: boolean) {
  const v = requireVisible(ctx, p, id);
  const ids = targetChannelIds(ctx, p, v, recursive);
  const stats = channelStats(ctx.db, ids);
  const alerting = visibleSources(ctx, ids, p.userId, ownerLookup(ctx, ids))
    .filter((s) => ALERTING_STATUSES.has(s.status))
    .sort(
      (a, b) =>
        (a.statusSince ?? Number.MAX_SAFE_INTEGER) - (b.statusSince ?? Number.MAX_SAFE_INTEGER) ||
        a.kind.localeCompare(b.kind, 'en') ||
        a.id - b.id,
    )
    .map((s) => ({
      kind: s.kind,
      id: s.id,
      name: s.name,
      appid: s.appid,
      status: s.status,
      since: rfc3339OrNull(s.statusSince),
    }));
  return {
    appid: id,
    ...summedHealth(ctx, id, ids),
    lastActivity: rfc3339OrNull(stats.last),
    messageCount: stats.count,
    channelIds: ids,
    alerting,
  };
}

/**
 * `GET /application/{id}/event-sources` (§1.6): the sources writing to the channel (or its subtree),
 * by kind then name; the owner sees every one, a share recipient their own. No tokens, URLs or settings.
 */
export function eventSources(ctx: AppContext, p: Principal, id: number, recursive: boolean) {
  const v = requireVisible(ctx, p, id);
  const ids = targetChannelIds(ctx, p, v, recursive);
  const sources = visibleSources(ctx, ids, p.userId, ownerLookup(ctx, ids))
    .sort((a, b) => a.kind.localeCompare(b.kind, 'en') || a.name.localeCompare(b.name, 'en') || a.id - b.id)
    .map((s) => ({
      kind: s.kind,
      id: s.id,
      name: s.name,
      appid: s.appid,
      status: s.status,
      paused: s.paused,
      lastCheckAt: rfc3339OrNull(s.lastCheckAt),
    }));
  return { appid: id, sources };
}

export { listVisible };
