import type { Db } from '../../db/database';

export function openSudo(
  db: Db,
  w: { deviceId: number; userId: number; method: string; expiresAt: number },
): void {
  db.run(
    `INSERT INTO sudo_windows (device_id, user_id, method, expires_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (device_id) DO UPDATE SET method = excluded.method, expires_at = excluded.expires_at`,
    [w.deviceId, w.userId, w.method, w.expiresAt],
  );
}

export function sudoUntil(db: Db, deviceId: number): number | undefined {
  return db.first<{ t: number }>('SELECT expires_at AS t FROM sudo_windows WHERE device_id = ?', [deviceId])
    ?.t;
}

export function closeSudoWindows(db: Db, userId: number): void {
  db.run('DELETE FROM sudo_windows WHERE user_id = ?', [userId]);
}

export function deleteExpiredSudo(db: Db, now: number): number {
  return db.run('DELETE FROM sudo_windows WHERE expires_at <= ?', [now]).changes;
}

/** A device's window dies with its token (rotation, reconnect, logout, suspension). */
export function closeDeviceSudo(db: Db, deviceId: number): void {
  db.run('DELETE FROM sudo_windows WHERE device_id = ?', [deviceId]);
}
