import type { Db } from '../../db/database';

export interface ShareRow {
  id: number;
  channel_id: number;
  granted_by: number;
  email: string;
  recipient_id: number | null;
  permission: 'view' | 'send';
  can_share: number;
  status: 'pending' | 'accepted' | 'declined';
  invite_digest: string | null;
  token_digest: string | null;
  token_hint: string;
  last_used: number | null;
  created_at: number;
  /** Joined: the channel's owner and name, the owner's email. */
  owner_id: number;
  channel_name: string;
  owner_email: string;
}

const SELECT = `SELECT s.*, c.user_id AS owner_id, c.name AS channel_name, u.email AS owner_email
  FROM shares s JOIN channels c ON c.id = s.channel_id JOIN users u ON u.id = c.user_id`;

export function findShare(db: Db, id: number): ShareRow | undefined {
  return db.first<ShareRow>(`${SELECT} WHERE s.id = ?`, [id]);
}

export function findShareByInvite(db: Db, digest: string): ShareRow | undefined {
  return db.first<ShareRow>(`${SELECT} WHERE s.invite_digest = ?`, [digest]);
}

export function sharesOfChannel(db: Db, channelId: number, grantedBy?: number): ShareRow[] {
  return grantedBy === undefined
    ? db.all<ShareRow>(`${SELECT} WHERE s.channel_id = ? ORDER BY s.id`, [channelId])
    : db.all<ShareRow>(`${SELECT} WHERE s.channel_id = ? AND s.granted_by = ? ORDER BY s.id`, [
        channelId,
        grantedBy,
      ]);
}

/** Shares addressed to the user: bound to them, or still unbound and sent to their address. */
export function incomingShares(db: Db, userId: number, email: string): ShareRow[] {
  return db.all<ShareRow>(
    `${SELECT} WHERE s.recipient_id = ? OR (s.recipient_id IS NULL AND s.email = ?) ORDER BY s.id`,
    [userId, email],
  );
}

export function activeShareFor(db: Db, channelId: number, email: string): ShareRow | undefined {
  return db.first<ShareRow>(
    `${SELECT} WHERE s.channel_id = ? AND s.email = ? AND s.status IN ('pending', 'accepted')`,
    [channelId, email],
  );
}

export function acceptedShareOf(db: Db, recipientId: number, channelId: number): ShareRow | undefined {
  return db.first<ShareRow>(
    `${SELECT} WHERE s.recipient_id = ? AND s.channel_id = ? AND s.status = 'accepted'`,
    [recipientId, channelId],
  );
}

/** Addresses the user shared with; with `channelIds`, only through shares of those channels. */
export function recipientsOf(db: Db, grantedBy: number, channelIds?: readonly number[]): string[] {
  if (channelIds?.length === 0) return [];
  const only = channelIds ? ` AND channel_id IN (${channelIds.map(() => '?').join(', ')})` : '';
  return db
    .all<{ email: string }>(
      `SELECT DISTINCT lower(email) AS email FROM shares WHERE granted_by = ?${only} ORDER BY 1`,
      [grantedBy, ...(channelIds ?? [])],
    )
    .map((r) => r.email);
}

export function insertShare(
  db: Db,
  s: {
    channelId: number;
    grantedBy: number;
    email: string;
    permission: string;
    canShare: boolean;
    inviteDigest: string;
    now: number;
  },
): number {
  db.run("DELETE FROM shares WHERE channel_id = ? AND email = ? AND status = 'declined'", [
    s.channelId,
    s.email,
  ]);
  return db.run(
    `INSERT INTO shares (channel_id, granted_by, email, permission, can_share, status, invite_digest, created_at)
       VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
    [s.channelId, s.grantedBy, s.email, s.permission, s.canShare ? 1 : 0, s.inviteDigest, s.now],
  ).lastInsertRowid;
}

export function updateShare(db: Db, id: number, patch: { permission?: string; canShare?: boolean }): void {
  if (patch.permission !== undefined)
    db.run('UPDATE shares SET permission = ? WHERE id = ?', [patch.permission, id]);
  if (patch.canShare !== undefined)
    db.run('UPDATE shares SET can_share = ? WHERE id = ?', [patch.canShare ? 1 : 0, id]);
}

export function acceptShare(db: Db, id: number, recipientId: number, digest: string, hint: string): void {
  db.run(
    `UPDATE shares SET status = 'accepted', recipient_id = ?, token_digest = ?, token_hint = ?, invite_digest = NULL,
       last_used = NULL WHERE id = ?`,
    [recipientId, digest, hint, id],
  );
}

export function declineShare(db: Db, id: number, recipientId: number): void {
  db.run(
    `UPDATE shares SET status = 'declined', recipient_id = ?, token_digest = NULL, token_hint = '', invite_digest = NULL
       WHERE id = ?`,
    [recipientId, id],
  );
}

export function rotateShareToken(db: Db, id: number, digest: string, hint: string): void {
  db.run('UPDATE shares SET token_digest = ?, token_hint = ?, last_used = NULL WHERE id = ?', [
    digest,
    hint,
    id,
  ]);
}

export function deleteShare(db: Db, id: number): void {
  db.run('DELETE FROM shares WHERE id = ?', [id]);
}
