import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import type { ActivityRow, DeviceRow } from './store';

/** Client (device) of the spec; `token` is the masked hint unless the full value is being issued. */
export function presentDevice(row: DeviceRow, currentDeviceId: number | undefined, fullToken?: string) {
  return {
    id: row.id,
    name: row.name,
    token: fullToken ?? row.token_hint,
    lastUsed: rfc3339OrNull(row.last_used),
    createdAt: rfc3339(row.created_at),
    status: row.status,
    platform: row.platform,
    lastIp: row.last_ip,
    lastUserAgent: row.last_user_agent,
    current: row.id === currentDeviceId,
  };
}

export function presentActivity(row: ActivityRow) {
  return {
    id: row.id,
    type: row.type,
    at: rfc3339(row.at),
    ip: row.ip,
    userAgent: row.user_agent,
    detail: JSON.parse(row.detail) as Record<string, unknown>,
  };
}

/** The answer of a sign-in (spec: `{id, name, token, user_id, platform}`, plus `suspended_device_id`). */
export function presentSignIn(
  created: { row: DeviceRow; token: string; suspendedDeviceId?: number },
  userId: number,
) {
  return {
    id: created.row.id,
    name: created.row.name,
    token: created.token,
    user_id: userId,
    platform: created.row.platform,
    ...(created.suspendedDeviceId === undefined ? {} : { suspended_device_id: created.suspendedDeviceId }),
  };
}
