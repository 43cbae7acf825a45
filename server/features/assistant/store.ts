import type { Db } from '../../db/database';

/** Threads kept per user: creating the next one drops the least recently updated (docs/assistant.md). */
export const THREADS_PER_USER = 100;
/** Messages kept per thread: the oldest go first. */
export const MESSAGES_PER_THREAD = 200;

export interface ThreadRow {
  id: number;
  user_id: number;
  title: string;
  created_at: number;
  updated_at: number;
}

export interface AssistantMessageRow {
  id: number;
  thread_id: number;
  role: 'user' | 'assistant';
  content: string;
  created_at: number;
}

export function findThread(db: Db, id: number): ThreadRow | undefined {
  return db.first<ThreadRow>('SELECT * FROM assistant_threads WHERE id = ?', [id]);
}

export function listThreads(db: Db, userId: number): ThreadRow[] {
  return db.all<ThreadRow>(
    'SELECT * FROM assistant_threads WHERE user_id = ? ORDER BY updated_at DESC, id DESC',
    [userId],
  );
}

/** A new thread; the user's oldest ones beyond the cap are deleted (their messages by cascade). */
export function insertThread(db: Db, userId: number, title: string, now: number): number {
  const id = db.run(
    'INSERT INTO assistant_threads (user_id, title, created_at, updated_at) VALUES (?, ?, ?, ?)',
    [userId, title, now, now],
  ).lastInsertRowid;
  db.run(
    `DELETE FROM assistant_threads WHERE user_id = ? AND id NOT IN
       (SELECT id FROM assistant_threads WHERE user_id = ? ORDER BY updated_at DESC, id DESC LIMIT ?)`,
    [userId, userId, THREADS_PER_USER],
  );
  return id;
}

export function deleteThread(db: Db, id: number): void {
  db.run('DELETE FROM assistant_threads WHERE id = ?', [id]);
}

/** Appends a message, touches the thread and trims it to the newest MESSAGES_PER_THREAD. */
export function appendMessage(
  db: Db,
  threadId: number,
  role: AssistantMessageRow['role'],
  content: string,
  now: number,
): number {
  const id = db.run(
    'INSERT INTO assistant_messages (thread_id, role, content, created_at) VALUES (?, ?, ?, ?)',
    [threadId, role, content, now],
  ).lastInsertRowid;
  db.run('UPDATE assistant_threads SET updated_at = max(updated_at, ?) WHERE id = ?', [now, threadId]);
  db.run(
    `DELETE FROM assistant_messages WHERE thread_id = ? AND id NOT IN
       (SELECT id FROM assistant_messages WHERE thread_id = ? ORDER BY id DESC LIMIT ?)`,
    [threadId, threadId, MESSAGES_PER_THREAD],
  );
  return id;
}

export function listMessages(db: Db, threadId: number): AssistantMessageRow[] {
  return db.all<AssistantMessageRow>('SELECT * FROM assistant_messages WHERE thread_id = ? ORDER BY id', [
    threadId,
  ]);
}

/** The newest `n` messages of a thread, oldest first (what the provider is sent). */
export function lastMessages(db: Db, threadId: number, n: number): AssistantMessageRow[] {
  return db
    .all<AssistantMessageRow>(
      'SELECT * FROM assistant_messages WHERE thread_id = ? ORDER BY id DESC LIMIT ?',
      [threadId, n],
    )
    .reverse();
}
