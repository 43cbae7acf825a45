import type { Db } from '../../db/database';

export type VerificationMethod = 'http' | 'dns';

export interface VerifiedHostRow {
  id: number;
  user_id: number;
  host: string;
  method: VerificationMethod;
  token: string;
  http_port: number | null;
  verified_at: number | null;
  checked_at: number | null;
  last_error: string | null;
  created_at: number;
}

export function findVerifiedHost(db: Db, id: number): VerifiedHostRow | undefined {
  return db.first<VerifiedHostRow>('SELECT * FROM verified_hosts WHERE id = ?', [id]);
}

export function findByHostAndMethod(
  db: Db,
  userId: number,
  host: string,
  method: VerificationMethod,
): VerifiedHostRow | undefined {
  return db.first<VerifiedHostRow>(
    'SELECT * FROM verified_hosts WHERE user_id = ? AND host = ? AND method = ?',
    [userId, host, method],
  );
}

export function listVerifiedHostsOfUser(db: Db, userId: number): VerifiedHostRow[] {
  return db.all<VerifiedHostRow>('SELECT * FROM verified_hosts WHERE user_id = ? ORDER BY id', [userId]);
}

export function countVerifiedHostsOfUser(db: Db, userId: number): number {
  return db.first<{ n: number }>('SELECT COUNT(*) AS n FROM verified_hosts WHERE user_id = ?', [userId])!.n;
}

/** True when the user holds a passed proof for exactly this host string (either method). */
export function hostVerifiedFor(db: Db, userId: number, host: string): boolean {
  return (
    db.first<{ id: number }>(
      'SELECT id FROM verified_hosts WHERE user_id = ? AND host = ? AND verified_at IS NOT NULL LIMIT 1',
      [userId, host],
    ) !== undefined
  );
}

export function insertVerifiedHost(
  db: Db,
  r: { userId: number; host: string; method: VerificationMethod; token: string; httpPort: number | null },
  now: number,
): number {
  return db.run(
    `INSERT INTO verified_hosts (user_id, host, method, token, http_port, created_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
    [r.userId, r.host, r.method, r.token, r.httpPort, now],
  ).lastInsertRowid;
}

export function setHttpPort(db: Db, id: number, port: number): void {
  db.run('UPDATE verified_hosts SET http_port = ? WHERE id = ?', [port, id]);
}

/** The outcome of a check: a pass sets verified_at once (it holds until deleted), a failure keeps it. */
export function writeCheck(db: Db, id: number, at: number, error: string | null): void {
  if (error === null)
    db.run(
      'UPDATE verified_hosts SET checked_at = ?, last_error = NULL, verified_at = COALESCE(verified_at, ?) WHERE id = ?',
      [at, at, id],
    );
  else db.run('UPDATE verified_hosts SET checked_at = ?, last_error = ? WHERE id = ?', [at, error, id]);
}

export function deleteVerifiedHost(db: Db, id: number): void {
  db.run('DELETE FROM verified_hosts WHERE id = ?', [id]);
}
