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

export function listUsers(db: Db, since: number, limit: number): UserRow[] {
  return db.all<UserRow>('SELECT * FROM users WHERE id > ? ORDER BY id LIMIT ?', [since, limit]);
}

export function countAdmins(db: Db): number {
  return db.first<{ n: number }>('SELECT count(*) AS n FROM users WHERE admin = 1')!.n;
}

export function setPasswordHash(db: Db, id: number, hash: string): void {
  db.run('UPDATE users SET password_hash = ? WHERE id = ?', [hash, id]);
}

export function setAdmin(db: Db, id: number, admin: boolean): void {
  db.run('UPDATE users SET admin = ? WHERE id = ?', [admin ? 1 : 0, id]);
}

export function setVerified(db: Db, id: number): void {
  db.run('UPDATE users SET verified = 1 WHERE id = ?', [id]);
}

export function setPlan(db: Db, id: number, plan: PlanName): void {
  db.run('UPDATE users SET plan = ? WHERE id = ?', [plan, id]);
}

export function setImage(db: Db, id: number, image: string | null): void {
  db.run('UPDATE users SET image = ? WHERE id = ?', [image, id]);
}

export function addBalance(db: Db, id: number, kopecks: number): void {
  db.run('UPDATE users SET balance_kopecks = balance_kopecks + ? WHERE id = ?', [kopecks, id]);
}

export function getQuietHoursJson(db: Db, id: number): string | null {
  return db.first<{ q: string | null }>('SELECT quiet_hours AS q FROM users WHERE id = ?', [id])?.q ?? null;
}

export function setQuietHoursJson(db: Db, id: number, json: string): void {
  db.run('UPDATE users SET quiet_hours = ? WHERE id = ?', [json, id]);
}

export function deleteUserRow(db: Db, id: number): void {
  db.run('DELETE FROM users WHERE id = ?', [id]);
}
