import type { Db } from '../../db/database';

export interface DeviceRow {
  id: number;
  user_id: number;
  name: string;
  token_digest: string;
  token_hint: string;
  status: 'active' | 'suspended' | 'revoked';
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

export function touchDevice(db: Db, id: number, now: number, ip: string, userAgent: string): void {
  db.run('UPDATE devices SET last_used = ?, last_ip = ?, last_user_agent = ? WHERE id = ?', [
    now,
    ip,
    userAgent,
    id,
  ]);
}
