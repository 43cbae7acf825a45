import type { AppContext, RequestMeta, TokenResolver } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { LAST_USED_RESOLUTION_MS } from '../../lib/limits';
import { issueToken } from '../../lib/tokens';
import { closeDeviceSudo } from '../auth/store';
import { receivedChannel } from '../channels/access';
import { findUserById, type UserRow } from '../users/store';
import {
  addMute,
  clearMutes,
  countActiveDevices,
  type DeviceRow,
  type DeviceStatus,
  deleteActivityBefore,
  deleteDevice as deleteDeviceRow,
  findDevice,
  findDeviceByDigest,
  insertActivity,
  insertDevice,
  listDevices,
  mutedChannels,
  oldestActiveDevice,
  removeMute,
  renameDevice as renameDeviceRow,
  setDeviceStatus as setDeviceStatusRow,
  setDeviceToken,
  touchDevice,
} from './store';

/** Kinds of entries in `GET /client/{id}/activity` (docs/api.md, "Devices"). */
export const ACTIVITY_TYPES = [
  'sign_in',
  'token_used',
  'token_rotated',
  'status_changed',
  'renamed',
  'sudo',
] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];
/** A `token_used` entry is written when the address or user agent changes, else at most this often. */
export const TOKEN_USED_LOG_INTERVAL_MS = 3_600_000;
export const ACTIVITY_RETENTION_MS = 90 * 86_400_000;

export interface NewDevice {
  row: DeviceRow;
  token: string;
  suspendedDeviceId?: number;
}

export function recordActivity(
  ctx: AppContext,
  a: {
    deviceId: number;
    userId: number;
    type: ActivityType;
    meta?: RequestMeta;
    detail?: Record<string, unknown>;
  },
): void {
  insertActivity(ctx.db, {
    deviceId: a.deviceId,
    userId: a.userId,
    type: a.type,
    at: ctx.clock.now(),
    ip: a.meta?.ip ?? '',
    userAgent: a.meta?.userAgent ?? '',
    detail: JSON.stringify(a.detail ?? {}),
  });
}

/**
 * Creates a device with a fresh C token. At the plan's device limit `POST /client` is refused with
 * 402 (onLimit 'reject'); login suspends the oldest active device instead (onLimit 'suspend-oldest').
 */
export function createDevice(
  ctx: AppContext,
  user: UserRow,
  input: { name: string; platform?: string },
  meta: RequestMeta,
  onLimit: 'reject' | 'suspend-oldest',
  via: 'client' | 'login' | 'mfa' = 'client',
): NewDevice {
  const limit = ctx.config.plans[user.plan].devices;
  const { token, digest, hint } = issueToken('C');
  const now = ctx.clock.now();
  let suspendedDeviceId: number | undefined;
  const id = ctx.db.transaction(() => {
    if (countActiveDevices(ctx.db, user.id) >= limit) {
      if (onLimit === 'reject') throw errors.deviceLimitExceeded();
      const oldest = oldestActiveDevice(ctx.db, user.id);
      if (oldest) {
        setDeviceStatusRow(ctx.db, oldest.id, 'suspended');
        closeDeviceSudo(ctx.db, oldest.id);
        recordActivity(ctx, {
          deviceId: oldest.id,
          userId: user.id,
          type: 'status_changed',
          meta,
          detail: { from: 'active', to: 'suspended', reason: 'device_limit' },
        });
        suspendedDeviceId = oldest.id;
      }
    }
    const newId = insertDevice(ctx.db, {
      userId: user.id,
      name: input.name,
      digest,
      hint,
      platform: input.platform ?? '',
      ip: meta.ip,
      userAgent: meta.userAgent,
      now,
    });
    recordActivity(ctx, { deviceId: newId, userId: user.id, type: 'sign_in', meta, detail: { via } });
    return newId;
  });
  if (suspendedDeviceId !== undefined)
    ctx.bus.emit('device:invalidated', { userId: user.id, deviceId: suspendedDeviceId, reason: 'suspended' });
  const row = findDevice(ctx.db, user.id, id)!;
  return suspendedDeviceId === undefined ? { row, token } : { row, token, suspendedDeviceId };
}

const lastLogged = new WeakMap<AppContext, Map<number, number>>();

/** C tokens: an active device of a verified user. Suspended, revoked or unknown: not valid (401). */
export function deviceTokenResolver(ctx: AppContext): TokenResolver {
  return (_token, digest, meta): Principal | null => {
    const device = findDeviceByDigest(ctx.db, digest);
    if (device?.status !== 'active') return null;
    const user = findUserById(ctx.db, device.user_id);
    if (!user) return null;
    if (user.verified !== 1) throw errors.notVerified();
    const now = ctx.clock.now();
    if (device.last_used === null || now - device.last_used >= LAST_USED_RESOLUTION_MS) {
      let logged = lastLogged.get(ctx);
      if (!logged) {
        logged = new Map();
        lastLogged.set(ctx, logged);
      }
      const changed = device.last_ip !== meta.ip || device.last_user_agent !== meta.userAgent;
      const due = now - (logged.get(device.id) ?? 0) >= TOKEN_USED_LOG_INTERVAL_MS;
      // Bookkeeping: a crash may lose it, so no response waits for its fsync.
      ctx.db.relaxed(() => {
        touchDevice(ctx.db, device.id, now, meta.ip, meta.userAgent);
        if (changed || due)
          recordActivity(ctx, { deviceId: device.id, userId: user.id, type: 'token_used', meta });
      });
      if (changed || due) logged.set(device.id, now);
    }
    return {
      kind: 'device',
      userId: user.id,
      admin: user.admin === 1,
      deviceId: device.id,
      access: 'write',
      canRead: true,
      canWrite: true,
    };
  };
}

export function getDevice(ctx: AppContext, userId: number, id: number): DeviceRow {
  const row = findDevice(ctx.db, userId, id);
  if (!row) throw errors.notFound('client');
  return row;
}

export function renameDevice(
  ctx: AppContext,
  userId: number,
  id: number,
  name: string,
  meta: RequestMeta,
): DeviceRow {
  const row = getDevice(ctx, userId, id);
  ctx.db.transaction(() => {
    renameDeviceRow(ctx.db, id, name);
    recordActivity(ctx, {
      deviceId: id,
      userId,
      type: 'renamed',
      meta,
      detail: { from: row.name, to: name },
    });
  });
  return getDevice(ctx, userId, id);
}

export function deleteDevice(ctx: AppContext, userId: number, id: number): void {
  getDevice(ctx, userId, id);
  ctx.db.transaction(() => deleteDeviceRow(ctx.db, id));
  ctx.bus.emit('device:invalidated', { userId, deviceId: id, reason: 'deleted' });
}

/** `DELETE /client` (device token only): every device but the calling one. */
export function deleteOtherDevices(
  ctx: AppContext,
  userId: number,
  keepDeviceId: number | undefined,
): number {
  const gone = listDevices(ctx.db, userId).filter((d) => d.id !== keepDeviceId);
  ctx.db.transaction(() => {
    for (const d of gone) deleteDeviceRow(ctx.db, d.id);
  });
  for (const d of gone) ctx.bus.emit('device:invalidated', { userId, deviceId: d.id, reason: 'deleted' });
  return gone.length;
}

/**
 * A new token for a device (reconnect, logout); the old one is dead at once, and so is the device's
 * sudo window: a fresh token never inherits a confirmation made with the old one. Status unchanged.
 */
export function rotateDevice(
  ctx: AppContext,
  userId: number,
  id: number,
  meta: RequestMeta,
  reason: 'reconnect' | 'logout',
): { row: DeviceRow; token: string } {
  getDevice(ctx, userId, id);
  const { token, digest, hint } = issueToken('C');
  ctx.db.transaction(() => {
    setDeviceToken(ctx.db, id, digest, hint);
    closeDeviceSudo(ctx.db, id);
    recordActivity(ctx, { deviceId: id, userId, type: 'token_rotated', meta, detail: { reason } });
  });
  ctx.bus.emit('device:invalidated', { userId, deviceId: id, reason: 'rotated' });
  return { row: getDevice(ctx, userId, id), token };
}

/**
 * Signs devices out by rotating their tokens (password change: all but the current one; password
 * reset and admin password change: all). Runs inside the caller's transaction; emits after commit via
 * the returned function.
 */
export function rotateAllDeviceTokens(
  ctx: AppContext,
  userId: number,
  reason: 'password_change' | 'password_reset' | 'admin_password_change',
  keepDeviceId?: number,
): () => void {
  for (const d of listDevices(ctx.db, userId)) {
    if (d.id === keepDeviceId) continue;
    const { digest, hint } = issueToken('C');
    setDeviceToken(ctx.db, d.id, digest, hint);
    closeDeviceSudo(ctx.db, d.id);
    recordActivity(ctx, { deviceId: d.id, userId, type: 'token_rotated', detail: { reason } });
  }
  return () =>
    ctx.bus.emit(
      'user:devices_invalidated',
      keepDeviceId === undefined ? { userId } : { userId, keepDeviceId },
    );
}

/**
 * `PUT /client/{id}/status`. Revocation is final (409 afterwards for any other status); reactivating
 * beyond the plan's device limit is 402 `device_limit_exceeded`.
 */
export function changeDeviceStatus(
  ctx: AppContext,
  user: UserRow,
  id: number,
  status: DeviceStatus,
  meta: RequestMeta,
): DeviceRow {
  const row = getDevice(ctx, user.id, id);
  if (row.status === status) return row;
  if (row.status === 'revoked') throw errors.conflict('a revoked device cannot be reactivated or suspended');
  ctx.db.transaction(() => {
    if (status === 'active' && countActiveDevices(ctx.db, user.id) >= ctx.config.plans[user.plan].devices)
      throw errors.deviceLimitExceeded();
    setDeviceStatusRow(ctx.db, id, status);
    if (status !== 'active') closeDeviceSudo(ctx.db, id);
    if (status === 'revoked') clearMutes(ctx.db, id);
    recordActivity(ctx, {
      deviceId: id,
      userId: user.id,
      type: 'status_changed',
      meta,
      detail: { from: row.status, to: status },
    });
  });
  if (status !== 'active')
    ctx.bus.emit('device:invalidated', { userId: user.id, deviceId: id, reason: status });
  return getDevice(ctx, user.id, id);
}

// --- mutes ---------------------------------------------------------------------------------------

/** Channel ids muted on a device; the live hub skips these channels for that device. */
export function mutedChannelIds(ctx: AppContext, deviceId: number): number[] {
  return mutedChannels(ctx.db, deviceId);
}

function checkChannels(ctx: AppContext, userId: number, ids: readonly number[]): void {
  for (const id of ids)
    if (!receivedChannel(ctx, userId, id)) throw errors.badRequest(`channel ${id} not found`);
}

export function replaceMutes(
  ctx: AppContext,
  userId: number,
  deviceId: number,
  channelIds: readonly number[],
): number[] {
  getDevice(ctx, userId, deviceId);
  const unique = [...new Set(channelIds)];
  // A mute kept from a share that has since ended may be sent back as it is; new ones must be received.
  const current = new Set(mutedChannels(ctx.db, deviceId));
  checkChannels(
    ctx,
    userId,
    unique.filter((id) => !current.has(id)),
  );
  ctx.db.transaction(() => {
    clearMutes(ctx.db, deviceId);
    for (const c of unique) addMute(ctx.db, deviceId, c, ctx.clock.now());
  });
  return mutedChannels(ctx.db, deviceId);
}

export function muteChannel(ctx: AppContext, userId: number, deviceId: number, channelId: number): number[] {
  checkChannels(ctx, userId, [channelId]);
  ctx.db.transaction(() => addMute(ctx.db, deviceId, channelId, ctx.clock.now()));
  return mutedChannels(ctx.db, deviceId);
}

/** Unmutes; a channel that is neither muted here nor one the caller receives is 400, as for muting. */
export function unmuteChannel(
  ctx: AppContext,
  userId: number,
  deviceId: number,
  channelId: number,
): number[] {
  if (!mutedChannels(ctx.db, deviceId).includes(channelId)) checkChannels(ctx, userId, [channelId]);
  ctx.db.transaction(() => removeMute(ctx.db, deviceId, channelId));
  return mutedChannels(ctx.db, deviceId);
}

export function pruneActivity(ctx: AppContext): number {
  return deleteActivityBefore(ctx.db, ctx.clock.now() - ACTIVITY_RETENTION_MS);
}
