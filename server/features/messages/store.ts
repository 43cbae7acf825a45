import type { Db, Param } from '../../db/database';
import type { MessageScope } from '../channels/access';

export interface MessageRow {
  id: number;
  channel_id: number;
  user_id: number;
  message: string;
  title: string;
  priority: number;
  date: number;
  sender_name: string;
  extras: string | null;
}

export interface MessageInsert {
  channelId: number;
  userId: number;
  message: string;
  title: string;
  priority: number;
  date: number;
  senderName: string;
  extras: string | null;
}

export function insertMessage(db: Db, m: MessageInsert): number {
  return db.run(
    `INSERT INTO messages (channel_id, user_id, message, title, priority, date, sender_name, extras)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [m.channelId, m.userId, m.message, m.title, m.priority, m.date, m.senderName, m.extras],
  ).lastInsertRowid;
}

export function setMessageExtras(db: Db, id: number, extras: string | null): void {
  db.run('UPDATE messages SET extras = ? WHERE id = ?', [extras, id]);
}

const COLUMNS = 'id, channel_id, user_id, message, title, priority, date, sender_name, extras';
/** Above this many channels one IN query is cheaper than merging per-channel range scans. */
const MERGE_MAX_CHANNELS = 50;

/**
 * Newest first, ids below `before` (0 = no cursor), at most `take` rows. Each part is one range scan on
 * an index (messages_by_user or messages_by_channel), merged here, so a deep page costs the same as the
 * first one.
 */
export function pageMessages(db: Db, scope: MessageScope, before: number, take: number): MessageRow[] {
  const upper = before > 0 ? before : Number.MAX_SAFE_INTEGER;
  const parts: MessageRow[][] = [];
  if (scope.ownerAll !== null)
    parts.push(
      db.all<MessageRow>(
        `SELECT ${COLUMNS} FROM messages WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
        [scope.ownerAll, upper, take],
      ),
    );
  if (scope.channelIds.length > MERGE_MAX_CHANNELS) {
    const marks = scope.channelIds.map(() => '?').join(',');
    parts.push(
      db.all<MessageRow>(
        `SELECT ${COLUMNS} FROM messages WHERE channel_id IN (${marks}) AND id < ? ORDER BY id DESC LIMIT ?`,
        [...scope.channelIds, upper, take],
      ),
    );
  } else {
    for (const channelId of scope.channelIds)
      parts.push(
        db.all<MessageRow>(
          `SELECT ${COLUMNS} FROM messages WHERE channel_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
          [channelId, upper, take],
        ),
      );
  }
  if (parts.length === 1) return parts[0]!;
  const seen = new Set<number>();
  const merged: MessageRow[] = [];
  for (const m of parts.flat().sort((a, b) => b.id - a.id)) {
    if (seen.has(m.id)) continue;
    seen.add(m.id);
    merged.push(m);
    if (merged.length === take) break;
  }
  return merged;
}

/** The scope as an SQL condition on `m` (messages), or null when it admits nothing. */
function scopeCondition(scope: MessageScope): { sql: string; params: Param[] } | null {
  const where: string[] = [];
  const params: Param[] = [];
  if (scope.ownerAll !== null) {
    where.push('m.user_id = ?');
    params.push(scope.ownerAll);
  }
  if (scope.channelIds.length > 0) {
    where.push(`m.channel_id IN (${scope.channelIds.map(() => '?').join(',')})`);
    params.push(...scope.channelIds);
  }
  return where.length === 0 ? null : { sql: `(${where.join(' OR ')})`, params };
}

/** FTS4 search, driven by the index in descending docid order, filtered to the scope. */
export function searchMessages(
  db: Db,
  scope: MessageScope,
  match: string,
  before: number,
  take: number,
): MessageRow[] {
  const upper = before > 0 ? before : Number.MAX_SAFE_INTEGER;
  const cond = scopeCondition(scope);
  if (cond === null) return [];
  return db.all<MessageRow>(
    `SELECT ${COLUMNS.split(', ')
      .map((c) => `m.${c}`)
      .join(', ')} FROM messages_fts f JOIN messages m ON m.id = f.docid
      WHERE messages_fts MATCH ? AND f.docid < ? AND ${cond.sql}
      ORDER BY f.docid DESC LIMIT ?`,
    [match, upper, ...cond.params, take],
  );
}

/**
 * Whether some message in the scope matches `match` (whatever the page): newest first, so it stops at
 * the first hit, and a match of exact words is read incrementally (FTS4 loads only what it needs).
 */
export function searchMatchesAny(db: Db, scope: MessageScope, match: string): boolean {
  const cond = scopeCondition(scope);
  if (cond === null) return false;
  return (
    db.first(
      `SELECT 1 AS x FROM messages_fts f JOIN messages m ON m.id = f.docid
        WHERE messages_fts MATCH ? AND ${cond.sql} ORDER BY f.docid DESC LIMIT 1`,
      [match, ...cond.params],
    ) !== undefined
  );
}

export function findMessage(db: Db, id: number): MessageRow | undefined {
  return db.first<MessageRow>(`SELECT ${COLUMNS} FROM messages WHERE id = ?`, [id]);
}

/** Which of these messages the user has read: single marks plus per-channel watermarks. */
export function readIds(db: Db, userId: number, rows: readonly MessageRow[]): Set<number> {
  const read = new Set<number>();
  if (rows.length === 0) return read;
  const marks = db.all<{ channel_id: number; read_up_to: number }>(
    'SELECT channel_id, read_up_to FROM channel_reads WHERE user_id = ?',
    [userId],
  );
  const upTo = new Map(marks.map((m) => [m.channel_id, m.read_up_to]));
  const rest: number[] = [];
  for (const r of rows) {
    const w = upTo.get(r.channel_id);
    if (w !== undefined && r.id <= w) read.add(r.id);
    else rest.push(r.id);
  }
  if (rest.length > 0) {
    const found = db.all<{ message_id: number }>(
      `SELECT message_id FROM message_reads WHERE user_id = ? AND message_id IN (${rest.map(() => '?').join(',')})`,
      [userId, ...rest],
    );
    for (const f of found) read.add(f.message_id);
  }
  return read;
}

export function markRead(db: Db, userId: number, ids: readonly number[]): number {
  let n = 0;
  for (const id of ids)
    n += db.run('INSERT OR IGNORE INTO message_reads (message_id, user_id) VALUES (?, ?)', [
      id,
      userId,
    ]).changes;
  return n;
}

/** Everything currently in the channel becomes read for the user (one watermark row). */
export function markChannelRead(db: Db, userId: number, channelId: number): void {
  const top = db.first<{ id: number | null }>('SELECT max(id) AS id FROM messages WHERE channel_id = ?', [
    channelId,
  ])!.id;
  if (top === null) return;
  db.run(
    `INSERT INTO channel_reads (user_id, channel_id, read_up_to) VALUES (?, ?, ?)
       ON CONFLICT (user_id, channel_id) DO UPDATE SET read_up_to = max(read_up_to, excluded.read_up_to)`,
    [userId, channelId, top],
  );
  db.run(
    'DELETE FROM message_reads WHERE user_id = ? AND message_id IN (SELECT id FROM messages WHERE channel_id = ? AND id <= ?)',
    [userId, channelId, top],
  );
}

export function deleteMessageById(db: Db, id: number): number {
  return db.run('DELETE FROM messages WHERE id = ?', [id]).changes;
}

export function deleteMessagesOfUser(db: Db, userId: number): number {
  return db.run('DELETE FROM messages WHERE user_id = ?', [userId]).changes;
}

export function deleteMessagesOfChannel(db: Db, channelId: number): number {
  return db.run('DELETE FROM messages WHERE channel_id = ?', [channelId]).changes;
}
