import type { Db } from '../../db/database';
import type { PlanName } from '../../lib/limits';

export interface UserRow {
  id: number;
  email: string;
  password_hash: string;
  admin: number;
  verified: number;
  plan: PlanName;
  balance_kopecks: number;
  image: string | null;
  created_at: number;
}

export function findUserById(db: Db, id: number): UserRow | undefined {
  return db.first<UserRow>('SELECT * FROM users WHERE id = ?', [id]);
}

export function findUserByEmail(db: Db, email: string): UserRow | undefined {
  return db.first<UserRow>('SELECT * FROM users WHERE email = ?', [email]);
}

export function countUsers(db: Db): number {
  return db.first<{ n: number }>('SELECT count(*) AS n FROM users')!.n;
}

export function insertUser(
  db: Db,
  u: { email: string; passwordHash: string; admin: boolean; verified: boolean; plan: PlanName; now: number },
): number {
  return db.run(
    'INSERT INTO users (email, password_hash, admin, verified, plan, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    [u.email, u.passwordHash, u.admin ? 1 : 0, u.verified ? 1 : 0, u.plan, u.now],
  ).lastInsertRowid;
}
