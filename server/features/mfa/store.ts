import type { Db } from '../../db/database';

export interface MfaRow {
  user_id: number;
  secret: string | null;
  pending_secret: string | null;
  enabled: number;
  last_step: number;
  mobile_enabled: number;
  updated_at: number;
}

export interface ChallengeRow {
  id: number;
  user_id: number;
  kind: 'login' | 'link';
  challenge_digest: string;
  mobile_code: string;
  status: 'pending' | 'approved' | 'consumed';
  approved_by: number | null;
  methods: string;
  device_name: string;
  device_platform: string;
  ip: string;
  user_agent: string;
  created_at: number;
  expires_at: number;
}

export function findMfa(db: Db, userId: number): MfaRow | undefined {
  return db.first<MfaRow>('SELECT * FROM user_mfa WHERE user_id = ?', [userId]);
}

export function isMfaEnabled(db: Db, userId: number): boolean {
  return db.first<{ e: number }>('SELECT enabled AS e FROM user_mfa WHERE user_id = ?', [userId])?.e === 1;
}

export function setPendingSecret(db: Db, userId: number, secret: string, now: number): void {
  db.run(
    `INSERT INTO user_mfa (user_id, pending_secret, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (user_id) DO UPDATE SET pending_secret = excluded.pending_secret, updated_at = excluded.updated_at`,
    [userId, secret, now],
  );
}

export function enableMfa(db: Db, userId: number, secret: string, step: number, now: number): void {
  db.run(
    'UPDATE user_mfa SET secret = ?, pending_secret = NULL, enabled = 1, last_step = ?, updated_at = ? WHERE user_id = ?',
    [secret, step, now, userId],
  );
}

export function setLastStep(db: Db, userId: number, step: number): void {
  db.run('UPDATE user_mfa SET last_step = ? WHERE user_id = ? AND last_step < ?', [step, userId, step]);
}

export function setMobileEnabled(db: Db, userId: number, on: boolean, now: number): void {
  db.run('UPDATE user_mfa SET mobile_enabled = ?, updated_at = ? WHERE user_id = ?', [
    on ? 1 : 0,
    now,
    userId,
  ]);
}

/** Turns everything off: secret, recovery codes, phone approval, open challenges. */
export function deleteMfa(db: Db, userId: number): void {
  db.run('DELETE FROM user_mfa WHERE user_id = ?', [userId]);
  db.run('DELETE FROM mfa_recovery_codes WHERE user_id = ?', [userId]);
  db.run('DELETE FROM mfa_approvers WHERE user_id = ?', [userId]);
  db.run('DELETE FROM mfa_challenges WHERE user_id = ?', [userId]);
}

export function replaceRecoveryCodes(db: Db, userId: number, digests: string[], now: number): void {
  db.run('DELETE FROM mfa_recovery_codes WHERE user_id = ?', [userId]);
  for (const d of digests)
    db.run('INSERT INTO mfa_recovery_codes (user_id, code_digest, created_at) VALUES (?, ?, ?)', [
      userId,
      d,
      now,
    ]);
}

export function useRecoveryCode(db: Db, userId: number, digest: string, now: number): boolean {
  return (
    db.run(
      'UPDATE mfa_recovery_codes SET used_at = ? WHERE user_id = ? AND code_digest = ? AND used_at IS NULL',
      [now, userId, digest],
    ).changes > 0
  );
}

export function countRecoveryCodes(db: Db, userId: number): number {
  return db.first<{ n: number }>(
    'SELECT count(*) AS n FROM mfa_recovery_codes WHERE user_id = ? AND used_at IS NULL',
    [userId],
  )!.n;
}

export interface ApproverRow {
  device_id: number;
  name: string;
  platform: string;
  status: string;
  last_used: number | null;
  created_at: number;
}

export function listApprovers(db: Db, userId: number): ApproverRow[] {
  return db.all<ApproverRow>(
    `SELECT a.device_id, d.name, d.platform, d.status, d.last_used, a.created_at
       FROM mfa_approvers a JOIN devices d ON d.id = a.device_id WHERE a.user_id = ? ORDER BY a.device_id`,
    [userId],
  );
}

export function isApprover(db: Db, deviceId: number): boolean {
  return db.first('SELECT 1 AS x FROM mfa_approvers WHERE device_id = ?', [deviceId]) !== undefined;
}

export function addApprover(db: Db, userId: number, deviceId: number, now: number): void {
  db.run('INSERT OR IGNORE INTO mfa_approvers (device_id, user_id, created_at) VALUES (?, ?, ?)', [
    deviceId,
    userId,
    now,
  ]);
}

export function removeApprover(db: Db, userId: number, deviceId: number): boolean {
  return (
    db.run('DELETE FROM mfa_approvers WHERE device_id = ? AND user_id = ?', [deviceId, userId]).changes > 0
  );
}

export function removeAllApprovers(db: Db, userId: number): void {
  db.run('DELETE FROM mfa_approvers WHERE user_id = ?', [userId]);
}

export function insertChallenge(db: Db, c: Omit<ChallengeRow, 'id' | 'status' | 'approved_by'>): number {
  return db.run(
    `INSERT INTO mfa_challenges (user_id, kind, challenge_digest, mobile_code, methods, device_name, device_platform, ip, user_agent, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      c.user_id,
      c.kind,
      c.challenge_digest,
      c.mobile_code,
      c.methods,
      c.device_name,
      c.device_platform,
      c.ip,
      c.user_agent,
      c.created_at,
      c.expires_at,
    ],
  ).lastInsertRowid;
}

export function findChallengeByDigest(db: Db, digest: string): ChallengeRow | undefined {
  return db.first<ChallengeRow>('SELECT * FROM mfa_challenges WHERE challenge_digest = ?', [digest]);
}

/** Pending, unexpired challenges of a user (approval list and code matching). */
export function pendingChallenges(db: Db, userId: number, now: number): ChallengeRow[] {
  return db.all<ChallengeRow>(
    "SELECT * FROM mfa_challenges WHERE user_id = ? AND status = 'pending' AND expires_at > ? ORDER BY id DESC",
    [userId, now],
  );
}

export function setChallengeStatus(
  db: Db,
  id: number,
  status: ChallengeRow['status'],
  approvedBy?: number,
): void {
  db.run('UPDATE mfa_challenges SET status = ?, approved_by = COALESCE(?, approved_by) WHERE id = ?', [
    status,
    approvedBy ?? null,
    id,
  ]);
}

export function deleteDeadChallenges(db: Db, before: number): number {
  return db.run('DELETE FROM mfa_challenges WHERE expires_at < ?', [before]).changes;
}
