import type { Db } from '../../db/database';

/** The webhook router's tables (migration 0019): the singleton, its rules and the events it received. */

export interface RouterRow {
  id: number;
  user_id: number;
  token_digest: string;
  token_hint: string;
  enabled: number;
  default_channel_id: number | null;
  rules_version: number;
  created_at: number;
}

export interface RuleRow {
  id: number;
  user_id: number;
  channel_id: number;
  name: string;
  path_pattern: string;
  method: string | null;
  match: string;
  title: string;
  message: string | null;
  priority: number | null;
  enabled: number;
  position: number;
  created_at: number;
}

export interface EventRow {
  id: number;
  user_id: number;
  path: string;
  method: string;
  query: string;
  headers: string;
  body_kind: 'json' | 'text' | 'none';
  body: string | null;
  size: number;
  received_at: number;
  rule_id: number | null;
  channel_id: number | null;
  message_id: number | null;
}

// ---- the singleton

export function findRouterOfUser(db: Db, userId: number): RouterRow | undefined {
  return db.first<RouterRow>('SELECT * FROM webhook_routers WHERE user_id = ?', [userId]);
}

export function findRouterByDigest(db: Db, digest: string): RouterRow | undefined {
  return db.first<RouterRow>('SELECT * FROM webhook_routers WHERE token_digest = ?', [digest]);
}

export function findRouter(db: Db, id: number): RouterRow | undefined {
  return db.first<RouterRow>('SELECT * FROM webhook_routers WHERE id = ?', [id]);
}

export function insertRouter(db: Db, userId: number, digest: string, hint: string, now: number): number {
  return db.run(
    'INSERT INTO webhook_routers (user_id, token_digest, token_hint, enabled, created_at) VALUES (?, ?, ?, 1, ?)',
    [userId, digest, hint, now],
  ).lastInsertRowid;
}

export function updateRouter(db: Db, id: number, enabled: boolean, defaultChannelId: number | null): void {
  db.run('UPDATE webhook_routers SET enabled = ?, default_channel_id = ? WHERE id = ?', [
    enabled ? 1 : 0,
    defaultChannelId,
    id,
  ]);
}

export function rotateRouterToken(db: Db, id: number, digest: string, hint: string): void {
  db.run('UPDATE webhook_routers SET token_digest = ?, token_hint = ? WHERE id = ?', [digest, hint, id]);
}

export function routersWithDefaultIn(db: Db, channelIds: readonly number[]): RouterRow[] {
  if (channelIds.length === 0) return [];
  return db.all<RouterRow>(
    `SELECT * FROM webhook_routers WHERE default_channel_id IN (${channelIds.map(() => '?').join(',')})`,
    [...channelIds],
  );
}

export function allRouterUsers(db: Db): number[] {
  return db
    .all<{ user_id: number }>('SELECT user_id FROM webhook_routers ORDER BY user_id')
    .map((r) => r.user_id);
}

// ---- rules

export interface RuleFields {
  channelId: number;
  name: string;
  pathPattern: string;
  method: string | null;
  match: string;
  title: string;
  message: string | null;
  priority: number | null;
  enabled: boolean;
}

export function listRules(db: Db, userId: number): RuleRow[] {
  return db.all<RuleRow>('SELECT * FROM router_rules WHERE user_id = ? ORDER BY position, id', [userId]);
}

export function findRule(db: Db, id: number): RuleRow | undefined {
  return db.first<RuleRow>('SELECT * FROM router_rules WHERE id = ?', [id]);
}

export function insertRule(db: Db, userId: number, f: RuleFields, position: number, now: number): number {
  return db.run(
    `INSERT INTO router_rules (user_id, channel_id, name, path_pattern, method, match, title, message, priority,
       enabled, position, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      userId,
      f.channelId,
      f.name,
      f.pathPattern,
      f.method,
      f.match,
      f.title,
      f.message,
      f.priority,
      f.enabled ? 1 : 0,
      position,
      now,
    ],
  ).lastInsertRowid;
}

export function updateRule(db: Db, id: number, f: RuleFields): void {
  db.run(
    `UPDATE router_rules SET channel_id = ?, name = ?, path_pattern = ?, method = ?, match = ?, title = ?,
       message = ?, priority = ?, enabled = ? WHERE id = ?`,
    [
      f.channelId,
      f.name,
      f.pathPattern,
      f.method,
      f.match,
      f.title,
      f.message,
      f.priority,
      f.enabled ? 1 : 0,
      id,
    ],
  );
}

export function setRulePosition(db: Db, id: number, position: number): void {
  db.run('UPDATE router_rules SET position = ? WHERE id = ? AND position <> ?', [position, id, position]);
}

export function deleteRule(db: Db, id: number): void {
  db.run('DELETE FROM router_rules WHERE id = ?', [id]);
}

export function rulesOfChannels(db: Db, channelIds: readonly number[]): RuleRow[] {
  if (channelIds.length === 0) return [];
  return db.all<RuleRow>(
    `SELECT * FROM router_rules WHERE channel_id IN (${channelIds.map(() => '?').join(',')}) ORDER BY id`,
    [...channelIds],
  );
}

export function disableRulesOf(db: Db, channelId: number, userId: number): number {
  return db.run('UPDATE router_rules SET enabled = 0 WHERE channel_id = ? AND user_id = ? AND enabled = 1', [
    channelId,
    userId,
  ]).changes;
}

export function usersWithRulesOn(db: Db, channelId: number): number[] {
  return db
    .all<{ user_id: number }>('SELECT DISTINCT user_id FROM router_rules WHERE channel_id = ?', [channelId])
    .map((r) => r.user_id);
}

// ---- events

export interface EventInsert {
  userId: number;
  path: string;
  method: string;
  query: string;
  headers: string;
  bodyKind: EventRow['body_kind'];
  /** Text, or its UTF-8 bytes (stored as they are). */
  body: string | Uint8Array | null;
  size: number;
  receivedAt: number;
  ruleId: number | null;
  channelId: number | null;
  messageId: number | null;
}

/**
 * The headers and body (up to 64 KiB) go in as UTF-8 bytes, cast to TEXT by SQLite (the body's are the
 * request's own bytes when they are well-formed UTF-8: no encoding at all on that path): sql.js would
 * otherwise encode each string to UTF-8 in a JavaScript loop (twice: to measure, then to copy), and the
 * journal copies bytes as they are. A string that is not well-formed UTF-16 (a lone surrogate) is
 * stored with U+FFFD in its place, as every other UTF-8 encoder in the server writes it.
 */
export function insertEvent(db: Db, e: EventInsert): number {
  return db.run(
    `INSERT INTO router_events (user_id, path, method, query, headers, body_kind, body, size, received_at, rule_id,
       channel_id, message_id) VALUES (?, ?, ?, ?, CAST(? AS TEXT), ?, CAST(? AS TEXT), ?, ?, ?, ?, ?)`,
    [
      e.userId,
      e.path,
      e.method,
      e.query,
      Buffer.from(e.headers, 'utf8'),
      e.bodyKind,
      typeof e.body === 'string' ? Buffer.from(e.body, 'utf8') : e.body,
      e.size,
      e.receivedAt,
      e.ruleId,
      e.channelId,
      e.messageId,
    ],
  ).lastInsertRowid;
}

export function findEvent(db: Db, id: number): EventRow | undefined {
  return db.first<EventRow>('SELECT * FROM router_events WHERE id = ?', [id]);
}

/** Newest first, ids below `before` (0: no cursor), `take` rows. */
export function pageEvents(db: Db, userId: number, before: number, take: number): EventRow[] {
  return before > 0
    ? db.all<EventRow>('SELECT * FROM router_events WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?', [
        userId,
        before,
        take,
      ])
    : db.all<EventRow>('SELECT * FROM router_events WHERE user_id = ? ORDER BY id DESC LIMIT ?', [
        userId,
        take,
      ]);
}

export function deleteEvent(db: Db, id: number): void {
  db.run('DELETE FROM router_events WHERE id = ?', [id]);
}

/** The last event time of a user, of one rule, or of the default channel's fallback (event sources). */
export function lastEventAt(
  db: Db,
  userId: number,
  ruleId: number | null,
  channelId?: number,
): number | null {
  const row =
    ruleId !== null
      ? db.first<{ at: number | null }>(
          'SELECT MAX(received_at) AS at FROM router_events WHERE user_id = ? AND rule_id = ?',
          [userId, ruleId],
        )
      : db.first<{ at: number | null }>(
          'SELECT MAX(received_at) AS at FROM router_events WHERE user_id = ? AND rule_id IS NULL AND channel_id = ?',
          [userId, channelId ?? 0],
        );
  return row?.at ?? null;
}

export interface RoutedMessageRow {
  id: number;
  channel_id: number;
  user_id: number;
  message: string;
  title: string;
  priority: number;
  date: number;
  sender_name: string;
  extras: string | null;
  router_event_id: number;
  rule_id: number | null;
}

/** A user's routed messages that still exist, newest first, message ids below `before` (0: no cursor). */
export function pageRoutedMessages(db: Db, userId: number, before: number, take: number): RoutedMessageRow[] {
  return db.all<RoutedMessageRow>(
    `SELECT m.id, m.channel_id, m.user_id, m.message, m.title, m.priority, m.date, m.sender_name, m.extras,
            e.id AS router_event_id, e.rule_id
       FROM router_events e JOIN messages m ON m.id = e.message_id
      WHERE e.user_id = ? AND e.message_id IS NOT NULL AND e.message_id < ?
      ORDER BY e.message_id DESC LIMIT ?`,
    [userId, before > 0 ? before : Number.MAX_SAFE_INTEGER, take],
  );
}

export function eventOfMessage(db: Db, userId: number, messageId: number): EventRow | undefined {
  return db.first<EventRow>('SELECT * FROM router_events WHERE user_id = ? AND message_id = ?', [
    userId,
    messageId,
  ]);
}

/**
 * Retention of one user's events: those received before `olderThan`, and all but the newest `keep`.
 * At most `limit` rows per call (bounded work); returns how many went.
 */
export function pruneEventsOfUser(
  db: Db,
  userId: number,
  olderThan: number,
  keep: number,
  limit: number,
): number {
  const cut = db.first<{ id: number }>(
    'SELECT id FROM router_events WHERE user_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?',
    [userId, keep - 1],
  );
  return db.run(
    `DELETE FROM router_events WHERE id IN (
       SELECT id FROM router_events WHERE user_id = ? AND (id < ? OR received_at < ?) ORDER BY id LIMIT ?)`,
    [userId, cut?.id ?? 0, olderThan, limit],
  ).changes;
}
