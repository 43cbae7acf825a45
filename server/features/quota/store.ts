import type { Db } from '../../db/database';

/** Plan and today's usage of one user in one indexed read (the POST /message hot path). */
export function planAndUsage(
  db: Db,
  userId: number,
  day: number,
): { plan: string; used: number } | undefined {
  return db.first<{ plan: string; used: number }>(
    // A subquery rather than a JOIN: see channel-keys/auth.ts.
    `SELECT plan, COALESCE((SELECT count FROM quota_days WHERE user_id = ?1 AND day = ?2), 0) AS used
       FROM users WHERE id = ?1`,
    [userId, day],
  );
}

export function addUsage(db: Db, userId: number, day: number, minute: number, count: number): void {
  db.run(
    'INSERT INTO quota_days (user_id, day, count) VALUES (?, ?, ?) ON CONFLICT (user_id, day) DO UPDATE SET count = count + excluded.count',
    [userId, day, count],
  );
  db.run(
    'INSERT INTO quota_minutes (user_id, minute, count) VALUES (?, ?, ?) ON CONFLICT (user_id, minute) DO UPDATE SET count = count + excluded.count',
    [userId, minute, count],
  );
}

export function usageOfDay(db: Db, userId: number, day: number): number {
  return (
    db.first<{ n: number }>('SELECT count AS n FROM quota_days WHERE user_id = ? AND day = ?', [userId, day])
      ?.n ?? 0
  );
}

export function lifetimeUsage(db: Db, userId: number): number {
  return (
    db.first<{ n: number | null }>('SELECT sum(count) AS n FROM quota_days WHERE user_id = ?', [userId])?.n ??
    0
  );
}

export function minutesOfDay(
  db: Db,
  userId: number,
  firstMinute: number,
): { minute: number; count: number }[] {
  return db.all<{ minute: number; count: number }>(
    'SELECT minute, count FROM quota_minutes WHERE user_id = ? AND minute >= ? AND minute < ? ORDER BY minute',
    [userId, firstMinute, firstMinute + 1440],
  );
}

export function deleteMinutesBefore(db: Db, minute: number): number {
  return db.run('DELETE FROM quota_minutes WHERE minute < ?', [minute]).changes;
}

/** What the user's messages take in the database (text, title and extras), in bytes. */
export function messageStorage(db: Db, userId: number): { messages: number; bytes: number } {
  const row = db.first<{ n: number; bytes: number | null }>(
    `SELECT count(*) AS n, sum(length(CAST(message AS BLOB)) + length(CAST(title AS BLOB)) + COALESCE(length(CAST(extras AS BLOB)), 0)) AS bytes
       FROM messages WHERE user_id = ?`,
    [userId],
  );
  return { messages: row?.n ?? 0, bytes: row?.bytes ?? 0 };
}
