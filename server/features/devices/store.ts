import type { Db } from '../../db/database';

export type DeviceStatus = 'active' | 'suspended' | 'revoked';

export interface DeviceRow {
  id: number;
  user_id: number;
  name: string;
  token_digest: string;
  token_hint: string;
  status: DeviceStatus;
  platform: string;
  last_ip: string;
  last_user_agent: string;
  last_used: number | null;
  created_at: number;
}

export function insertDevice(
  db: Db,
  d: {
    userId: number;
    name: string;
    digest: string;
    hint: string;
    platform: string;
    ip: string;
    userAgent: string;
    now: number;
  },
): number {
  return db.run(
    `INSERT INTO devices (user_id, name, token_digest, token_hint, platform, last_ip, last_user_agent, last_used, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [d.userId, d.name, d.digest, d.hint, d.platform, d.ip, d.userAgent, d.now, d.now],
  ).lastInsertRowid;
}

export function findDeviceByDigest(db: Db, digest: string): DeviceRow | undefined {
  return db.first<DeviceRow>('SELECT * FROM devices WHERE token_digest = ?', [digest]);
}

export function findDevice(db: Db, userId: number, id: number): DeviceRow | undefined {
  return db.first<DeviceRow>('SELECT * FROM devices WHERE id = ? AND user_id = ?', [id, userId]);
}

export function listDevices(db: Db, userId: number): DeviceRow[] {
  return db.all<DeviceRow>('SELECT * FROM devices WHERE user_id = ? ORDER BY id', [userId]);
}

export function countActiveDevices(db: Db, userId: number): number {
  return db.first<{ n: number }>(
    "SELECT count(*) AS n FROM devices WHERE user_id = ? AND status = 'active'",
    [userId],
  )!.n;
}

/** The active device used least recently (never used counts by its creation), the one login suspends. */
export function oldestActiveDevice(db: Db, userId: number): { id: number } | undefined {
  return db.first<{ id: number }>(
    "SELECT id FROM devices WHERE user_id = ? AND status = 'active' ORDER BY COALESCE(last_used, created_at), id LIMIT 1",
    [userId],
  );
}

export function touchDevice(db: Db, id: number, now: number, ip: string, userAgent: string): void {
  db.run('UPDATE devices SET last_used = ?, last_ip = ?, last_user_agent = ? WHERE id = ?', [
    now,
    ip,
    userAgent,
    id,
  ]);
}

export function setDeviceStatus(db: Db, id: number, status: DeviceStatus): void {
  db.run('UPDATE devices SET status = ? WHERE id = ?', [status, id]);
}

export function renameDevice(db: Db, id: number, name: string): void {
  db.run('UPDATE devices SET name = ? WHERE id = ?', [name, id]);
}

export function setDeviceToken(db: Db, id: number, digest: string, hint: string): void {
  db.run('UPDATE devices SET token_digest = ?, token_hint = ? WHERE id = ?', [digest, hint, id]);
}

export function deleteDevice(db: Db, id: number): void {
  db.run('DELETE FROM devices WHERE id = ?', [id]);
}

// --- activity ------------------------------------------------------------------------------------

export interface ActivityRow {
  id: number;
  device_id: number;
  user_id: number;
  type: string;
  at: number;
  ip: string;
  user_agent: string;
  detail: string;
}

export function insertActivity(
  db: Db,
  a: {
    deviceId: number;
    userId: number;
    type: string;
    at: number;
    ip: string;
    userAgent: string;
    detail: string;
  },
): void {
  db.run(
    'INSERT INTO device_activity (device_id, user_id, type, at, ip, user_agent, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
    [a.deviceId, a.userId, a.type, a.at, a.ip, a.userAgent, a.detail],
  );
}

export function listActivity(
  db: Db,
  deviceId: number,
  q: { from: number; to: number; types: string[] | null; limit: number },
): ActivityRow[] {
  const typeFilter = q.types ? ` AND type IN (${q.types.map(() => '?').join(', ')})` : '';
  return db.all<ActivityRow>(
    `SELECT * FROM device_activity WHERE device_id = ? AND at >= ? AND at <= ?${typeFilter} ORDER BY at DESC, id DESC LIMIT ?`,
    [deviceId, q.from, q.to, ...(q.types ?? []), q.limit],
  );
}

export function deleteActivityBefore(db: Db, before: number): number {
  return db.run('DELETE FROM device_activity WHERE at < ?', [before]).changes;
}

// --- mutes (the spec's "subscriptions") ----------------------------------------------------------

export function mutedChannels(db: Db, deviceId: number): number[] {
  return db
    .all<{ c: number }>('SELECT channel_id AS c FROM device_mutes WHERE device_id = ? ORDER BY channel_id', [
      deviceId,
    ])
    .map((r) => r.c);
}

export function addMute(db: Db, deviceId: number, channelId: number, now: number): void {
  db.run('INSERT OR IGNORE INTO device_mutes (device_id, channel_id, created_at) VALUES (?, ?, ?)', [
    deviceId,
    channelId,
    now,
  ]);
}

export function removeMute(db: Db, deviceId: number, channelId: number): void {
  db.run('DELETE FROM device_mutes WHERE device_id = ? AND channel_id = ?', [deviceId, channelId]);
}

export function clearMutes(db: Db, deviceId: number): void {
  db.run('DELETE FROM device_mutes WHERE device_id = ?', [deviceId]);
}
