import type { AppContext, RequestMeta, TokenResolver } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { LAST_USED_RESOLUTION_MS } from '../../lib/limits';
import { issueToken } from '../../lib/tokens';
import { findUserById, type UserRow } from '../users/store';
import {
  countActiveDevices,
  type DeviceRow,
  findDevice,
  findDeviceByDigest,
  insertDevice,
  touchDevice,
} from './store';

export interface NewDevice {
  row: DeviceRow;
  token: string;
  suspendedDeviceId?: number;
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
): NewDevice {
  const limit = ctx.config.plans[user.plan].devices;
  const { token, digest, hint } = issueToken('C');
  const now = ctx.clock.now();
  let suspendedDeviceId: number | undefined;
  const id = ctx.db.transaction(() => {
    if (countActiveDevices(ctx.db, user.id) >= limit) {
      if (onLimit === 'reject') throw errors.deviceLimitExceeded();
      const oldest = ctx.db.first<{ id: number }>(
        "SELECT id FROM devices WHERE user_id = ? AND status = 'active' ORDER BY COALESCE(last_used, created_at), id LIMIT 1",
        [user.id],
      );
      if (oldest) {
        ctx.db.run("UPDATE devices SET status = 'suspended' WHERE id = ?", [oldest.id]);
        suspendedDeviceId = oldest.id;
      }
    }
    return insertDevice(ctx.db, {
      userId: user.id,
      name: input.name,
      digest,
      hint,
      platform: input.platform ?? '',
      ip: meta.ip,
      userAgent: meta.userAgent,
      now,
    });
  });
  if (suspendedDeviceId !== undefined)
    ctx.bus.emit('device:invalidated', { userId: user.id, deviceId: suspendedDeviceId, reason: 'suspended' });
  const row = findDevice(ctx.db, user.id, id)!;
  return { row, token, suspendedDeviceId };
}

/** C tokens: an active device of a verified user. Suspended, revoked or unknown: not valid (401). */
export function deviceTokenResolver(ctx: AppContext): TokenResolver {
  return (_token, digest, meta): Principal | null => {
    const device = findDeviceByDigest(ctx.db, digest);
    if (!device || device.status !== 'active') return null;
    const user = findUserById(ctx.db, device.user_id);
    if (!user) return null;
    if (user.verified !== 1) throw errors.notVerified();
    const now = ctx.clock.now();
    if (device.last_used === null || now - device.last_used >= LAST_USED_RESOLUTION_MS)
      touchDevice(ctx.db, device.id, now, meta.ip, meta.userAgent);
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
