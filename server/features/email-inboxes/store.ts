import type { Db } from '../../db/database';

/** The email inboxes' tables (migration 0021): inboxes, their ordered rules and the mails they received. */

export type InboxStatus = 'pending' | 'ok' | 'paused';

export interface InboxRow {
  id: number;
  user_id: number;
  channel_id: number;
  name: string;
  local_part: string;
  priority: number | null;
  status: InboxStatus;
  status_since: number;
  last_check_at: number | null;
  created_at: number;
}

export interface RuleRow {
  id: number;
  inbox_id: number;
  name: string;
  match: string;
  action: 'message' | 'drop';
  title: string | null;
  priority: number | null;
  position: number;
  created_at: number;
}

export interface EventRow {
  id: number;
  inbox_id: number;
  user_id: number;
  channel_id: number;
  mail_from: string;
  mail_to: string;
  subject: string;
  text: string;
  attachments: string;
  size: number;
  received_at: number;
  rule_id: number | null;
  action: 'message' | 'drop' | 'paused';
  message_id: number | null;
}

// ---- inboxes

export function findInbox(db: Db, id: number): InboxRow | undefined {
  return db.first<InboxRow>('SELECT * FROM email_inboxes WHERE id = ?', [id]);
}

export function findInboxByLocalPart(db: Db, localPart: string): InboxRow | undefined {
  return db.first<InboxRow>('SELECT * FROM email_inboxes WHERE local_part = ?', [localPart]);
}

export function inboxesOfUser(db: Db, userId: number): InboxRow[] {
  return db.all<InboxRow>('SELECT * FROM email_inboxes WHERE user_id = ? ORDER BY id', [userId]);
}

export function inboxesOfChannels(db: Db, channelIds: readonly number[]): InboxRow[] {
  if (channelIds.length === 0) return [];
  return db.all<InboxRow>(
    `SELECT * FROM email_inboxes WHERE channel_id IN (${channelIds.map(() => '?').join(',')}) ORDER BY id`,
    [...channelIds],
  );
}

export function countInboxesOfUser(db: Db, userId: number): number {
  return db.first<{ n: number }>('SELECT COUNT(*) AS n FROM email_inboxes WHERE user_id = ?', [userId])!.n;
}

export interface InboxFields {
  channelId: number;
  name: string;
  localPart: string;
  priority: number | null;
}

export function insertInbox(
  db: Db,
  userId: number,
  f: InboxFields,
  status: InboxStatus,
  now: number,
): number {
  return db.run(
    `INSERT INTO email_inboxes (user_id, channel_id, name, local_part, priority, status, status_since, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [userId, f.channelId, f.name, f.localPart, f.priority, status, now, now],
  ).lastInsertRowid;
}

export function updateInbox(db: Db, id: number, f: InboxFields): void {
  db.run('UPDATE email_inboxes SET channel_id = ?, name = ?, local_part = ?, priority = ? WHERE id = ?', [
    f.channelId,
    f.name,
    f.localPart,
    f.priority,
    id,
  ]);
}

export function writeInboxStatus(db: Db, id: number, status: InboxStatus, now: number): void {
  db.run(
    'UPDATE email_inboxes SET status = ?, status_since = CASE WHEN status = ? THEN status_since ELSE ? END WHERE id = ?',
    [status, status, now, id],
  );
}

/** A mail arrived: `lastCheckAt`, and `pending` becomes `ok` (paused stays paused). */
export function markReceived(db: Db, id: number, now: number): void {
  db.run(
    "UPDATE email_inboxes SET last_check_at = ?, status = CASE WHEN status = 'pending' THEN 'ok' ELSE status END, status_since = CASE WHEN status = 'pending' THEN ? ELSE status_since END WHERE id = ?",
    [now, now, id],
  );
}

export function deleteInbox(db: Db, id: number): void {
  db.run('DELETE FROM email_inboxes WHERE id = ?', [id]);
}

/** Inboxes of other users than the owner on a channel (share recipients: paused when they lose `send`). */
export function recipientInboxes(db: Db, channelId: number, ownerId: number): InboxRow[] {
  return db.all<InboxRow>('SELECT * FROM email_inboxes WHERE channel_id = ? AND user_id <> ?', [
    channelId,
    ownerId,
  ]);
}

// ---- rules

export function findRule(db: Db, id: number): RuleRow | undefined {
  return db.first<RuleRow>('SELECT * FROM email_inbox_rules WHERE id = ?', [id]);
}

export function rulesOfInbox(db: Db, inboxId: number): RuleRow[] {
  return db.all<RuleRow>('SELECT * FROM email_inbox_rules WHERE inbox_id = ? ORDER BY position, id', [
    inboxId,
  ]);
}

export function countRulesOfInbox(db: Db, inboxId: number): number {
  return db.first<{ n: number }>('SELECT COUNT(*) AS n FROM email_inbox_rules WHERE inbox_id = ?', [inboxId])!
    .n;
}

export interface RuleFields {
  name: string;
  match: string;
  action: 'message' | 'drop';
  title: string | null;
  priority: number | null;
}

export function insertRule(db: Db, inboxId: number, f: RuleFields, position: number, now: number): number {
  return db.run(
    `INSERT INTO email_inbox_rules (inbox_id, name, match, action, title, priority, position, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [inboxId, f.name, f.match, f.action, f.title, f.priority, position, now],
  ).lastInsertRowid;
}

export function updateRule(db: Db, id: number, f: RuleFields): void {
  db.run(
    'UPDATE email_inbox_rules SET name = ?, match = ?, action = ?, title = ?, priority = ? WHERE id = ?',
    [f.name, f.match, f.action, f.title, f.priority, id],
  );
}

export function setRulePosition(db: Db, id: number, position: number): void {
  db.run('UPDATE email_inbox_rules SET position = ? WHERE id = ? AND position <> ?', [
    position,
    id,
    position,
  ]);
}

export function deleteRule(db: Db, id: number): void {
  db.run('DELETE FROM email_inbox_rules WHERE id = ?', [id]);
}

// ---- events

export interface EventFields {
  inboxId: number;
  userId: number;
  channelId: number;
  from: string;
  to: string;
  subject: string;
  text: string;
  attachments: string;
  size: number;
  receivedAt: number;
  ruleId: number | null;
  action: EventRow['action'];
  messageId: number | null;
}

export function insertEvent(db: Db, e: EventFields): number {
  return db.run(
    `INSERT INTO email_inbox_events (inbox_id, user_id, channel_id, mail_from, mail_to, subject, text, attachments,
       size, received_at, rule_id, action, message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      e.inboxId,
      e.userId,
      e.channelId,
      e.from,
      e.to,
      e.subject,
      e.text,
      e.attachments,
      e.size,
      e.receivedAt,
      e.ruleId,
      e.action,
      e.messageId,
    ],
  ).lastInsertRowid;
}

export function findEvent(db: Db, id: number): EventRow | undefined {
  return db.first<EventRow>('SELECT * FROM email_inbox_events WHERE id = ?', [id]);
}

/** Newest first, ids below `before` (0: from the newest); one inbox, or every inbox of the user. */
export function pageEvents(
  db: Db,
  userId: number,
  inboxId: number | undefined,
  before: number,
  take: number,
): EventRow[] {
  const where = ['user_id = ?'];
  const args: number[] = [userId];
  if (inboxId !== undefined) {
    where.push('inbox_id = ?');
    args.push(inboxId);
  }
  if (before > 0) {
    where.push('id < ?');
    args.push(before);
  }
  const by = inboxId === undefined ? 'email_inbox_events_by_user' : 'email_inbox_events_by_inbox';
  return db.all<EventRow>(
    `SELECT * FROM email_inbox_events INDEXED BY ${by} WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`,
    [...args, take],
  );
}

export function deleteEvent(db: Db, id: number): void {
  db.run('DELETE FROM email_inbox_events WHERE id = ?', [id]);
}

export function allInboxIds(db: Db): number[] {
  return db.all<{ id: number }>('SELECT id FROM email_inboxes ORDER BY id').map((r) => r.id);
}

/** Events older than `olderThan` and all but the newest `keep` of one inbox, at most `limit` rows. */
export function pruneEventsOfInbox(
  db: Db,
  inboxId: number,
  olderThan: number,
  keep: number,
  limit: number,
): number {
  const cut = db.first<{ id: number }>(
    'SELECT id FROM email_inbox_events WHERE inbox_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?',
    [inboxId, keep - 1],
  );
  return db.run(
    `DELETE FROM email_inbox_events WHERE id IN (
       SELECT id FROM email_inbox_events WHERE inbox_id = ? AND (id < ? OR received_at < ?) ORDER BY id LIMIT ?)`,
    [inboxId, cut?.id ?? 0, olderThan, limit],
  ).changes;
}
