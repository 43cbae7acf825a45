import type { Db } from '../../db/database';

export type QuestionStatus = 'pending' | 'answered' | 'expired' | 'cancelled';
export type QuestionType = 'choice' | 'multi' | 'form' | 'text';
export type AnsweredBy = 'user' | 'link' | 'default';

export interface QuestionRow {
  id: number;
  user_id: number;
  channel_id: number;
  message_id: number | null;
  status: QuestionStatus;
  title: string;
  question: string;
  type: QuestionType;
  /** JSON string[]. */
  options: string;
  default_option: string | null;
  /** JSON field list. */
  fields: string;
  format: 'text' | 'json';
  /** JSON of the default answer, or null (none). */
  default_answer: string | null;
  /** JSON `{<option>: <ask body>}`. */
  next: string;
  priority: number;
  sender_name: string;
  /** JSON of the answer. */
  answer: string | null;
  answered_at: number | null;
  answered_by: AnsweredBy | null;
  expires_at: number;
  timeout_sec: number;
  client_message_id: string | null;
  callback_url: string | null;
  /** Sealed (seal(), CALLBACK_SEAL_PURPOSE is the outbox's; this one is QUESTION_SECRET_PURPOSE). */
  callback_secret: string | null;
  parent_id: number | null;
  next_question_id: number | null;
  settled_at: number | null;
  acked: number;
  created_at: number;
}

export interface QuestionInsert {
  userId: number;
  channelId: number;
  title: string;
  question: string;
  type: QuestionType;
  options: string;
  defaultOption: string | null;
  fields: string;
  format: 'text' | 'json';
  defaultAnswer: string | null;
  next: string;
  priority: number;
  senderName: string;
  expiresAt: number;
  timeoutSec: number;
  clientMessageId: string | null;
  callbackUrl: string | null;
  callbackSecret: string | null;
  parentId: number | null;
  createdAt: number;
}

export function insertQuestion(db: Db, q: QuestionInsert): number {
  return db.run(
    `INSERT INTO questions (user_id, channel_id, status, title, question, type, options, default_option, fields,
       format, default_answer, next, priority, sender_name, expires_at, timeout_sec, client_message_id,
       callback_url, callback_secret, parent_id, created_at)
     VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      q.userId,
      q.channelId,
      q.title,
      q.question,
      q.type,
      q.options,
      q.defaultOption,
      q.fields,
      q.format,
      q.defaultAnswer,
      q.next,
      q.priority,
      q.senderName,
      q.expiresAt,
      q.timeoutSec,
      q.clientMessageId,
      q.callbackUrl,
      q.callbackSecret,
      q.parentId,
      q.createdAt,
    ],
  ).lastInsertRowid;
}

export function setQuestionMessage(db: Db, id: number, messageId: number): void {
  db.run('UPDATE questions SET message_id = ? WHERE id = ?', [messageId, id]);
}

export function findQuestion(db: Db, id: number): QuestionRow | undefined {
  return db.first<QuestionRow>('SELECT * FROM questions WHERE id = ?', [id]);
}

export function findQuestionOfMessage(db: Db, messageId: number): QuestionRow | undefined {
  return db.first<QuestionRow>('SELECT * FROM questions WHERE message_id = ? ORDER BY id LIMIT 1', [
    messageId,
  ]);
}

/** The newest question of the channel with this clientMessageId created at or after `since`. */
export function findByClientId(
  db: Db,
  channelId: number,
  clientMessageId: string,
  since: number,
): QuestionRow | undefined {
  return db.first<QuestionRow>(
    `SELECT * FROM questions WHERE channel_id = ? AND client_message_id = ? AND created_at >= ?
      ORDER BY id DESC LIMIT 1`,
    [channelId, clientMessageId, since],
  );
}

/** Leaves pending (answered, expired, cancelled) when still pending; false when it was not. */
export function settleQuestion(
  db: Db,
  id: number,
  s: {
    status: Exclude<QuestionStatus, 'pending'>;
    answer: string | null;
    answeredAt: number | null;
    answeredBy: AnsweredBy | null;
    at: number;
  },
): boolean {
  return (
    db.run(
      `UPDATE questions SET status = ?, answer = ?, answered_at = ?, answered_by = ?, settled_at = ?
        WHERE id = ? AND status = 'pending'`,
      [s.status, s.answer, s.answeredAt, s.answeredBy, s.at, id],
    ).changes === 1
  );
}

export function setExpiry(db: Db, id: number, expiresAt: number, timeoutSec: number): void {
  db.run('UPDATE questions SET expires_at = ?, timeout_sec = ? WHERE id = ?', [expiresAt, timeoutSec, id]);
}

export function setNextQuestion(db: Db, id: number, nextId: number): void {
  db.run('UPDATE questions SET next_question_id = ? WHERE id = ?', [nextId, id]);
}

export function nextExpiry(db: Db): number | null {
  return (
    db.first<{ at: number | null }>("SELECT MIN(expires_at) AS at FROM questions WHERE status = 'pending'")
      ?.at ?? null
  );
}

export function duePending(db: Db, now: number, limit: number): QuestionRow[] {
  return db.all<QuestionRow>(
    `SELECT * FROM questions WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at, id LIMIT ?`,
    [now, limit],
  );
}

export function unackedOfChannel(db: Db, channelId: number, limit: number): QuestionRow[] {
  return db.all<QuestionRow>(
    `SELECT * FROM questions WHERE channel_id = ? AND acked = 0 AND status IN ('answered', 'expired')
      ORDER BY settled_at, id LIMIT ?`,
    [channelId, limit],
  );
}

/** Acknowledges the channel's settled questions among `ids`; returns how many changed. */
export function ackQuestions(db: Db, channelId: number, ids: readonly number[]): number {
  let n = 0;
  for (const id of ids)
    n += db.run(
      `UPDATE questions SET acked = 1
        WHERE id = ? AND channel_id = ? AND acked = 0 AND status IN ('answered', 'expired')`,
      [id, channelId],
    ).changes;
  return n;
}
