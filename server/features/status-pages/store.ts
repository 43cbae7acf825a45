import type { Db } from '../../db/database';

export interface PageRow {
  id: number;
  user_id: number;
  channel_id: number;
  slug: string;
  title: string;
  description: string;
  enabled: number;
  lang: 'en' | 'ru';
  branding_hidden: number;
  created_at: number;
}

export interface PageSettings {
  channelId: number;
  slug: string;
  title: string;
  description: string;
  enabled: boolean;
  lang: 'en' | 'ru';
  brandingHidden: boolean;
}

export interface SubscriberRow {
  id: number;
  page_id: number;
  email: string;
  confirmed: number;
  created_at: number;
}

export function findPage(db: Db, id: number): PageRow | undefined {
  return db.first<PageRow>('SELECT * FROM status_pages WHERE id = ?', [id]);
}

export function findPageBySlug(db: Db, slug: string): PageRow | undefined {
  return db.first<PageRow>('SELECT * FROM status_pages WHERE slug = ?', [slug]);
}

export function listPagesOfUser(db: Db, userId: number): PageRow[] {
  return db.all<PageRow>('SELECT * FROM status_pages WHERE user_id = ? ORDER BY id', [userId]);
}

export function countPagesOfUser(db: Db, userId: number): number {
  return db.first<{ n: number }>('SELECT count(*) AS n FROM status_pages WHERE user_id = ?', [userId])!.n;
}

export function insertPage(db: Db, userId: number, s: PageSettings, now: number): number {
  return db.run(
    `INSERT INTO status_pages (user_id, channel_id, slug, title, description, enabled, lang, branding_hidden, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      userId,
      s.channelId,
      s.slug,
      s.title,
      s.description,
      s.enabled ? 1 : 0,
      s.lang,
      s.brandingHidden ? 1 : 0,
      now,
    ],
  ).lastInsertRowid;
}

export function updatePage(db: Db, id: number, s: PageSettings): void {
  db.run(
    `UPDATE status_pages SET channel_id = ?, slug = ?, title = ?, description = ?, enabled = ?, lang = ?,
       branding_hidden = ? WHERE id = ?`,
    [s.channelId, s.slug, s.title, s.description, s.enabled ? 1 : 0, s.lang, s.brandingHidden ? 1 : 0, id],
  );
}

export function deletePage(db: Db, id: number): void {
  db.run('DELETE FROM status_pages WHERE id = ?', [id]);
}

/** The channel and all its descendants, in one recursive query. */
export function subtreeOf(db: Db, channelId: number): number[] {
  return db
    .all<{ id: number }>(
      `WITH RECURSIVE t(id) AS (SELECT ? UNION SELECT c.id FROM channels c JOIN t ON c.parent_id = t.id)
       SELECT id FROM t`,
      [channelId],
    )
    .map((r) => r.id);
}

/** Enabled pages on the channel or one of its ancestors (the pages a source of the channel appears on). */
export function pagesAbove(db: Db, channelId: number): PageRow[] {
  return db.all<PageRow>(
    `WITH RECURSIVE a(id) AS (SELECT ? UNION SELECT c.parent_id FROM channels c JOIN a ON c.id = a.id
       WHERE c.parent_id IS NOT NULL)
     SELECT * FROM status_pages WHERE enabled = 1 AND channel_id IN (SELECT id FROM a) ORDER BY id`,
    [channelId],
  );
}

export function listSubscribers(db: Db, pageId: number): SubscriberRow[] {
  return db.all<SubscriberRow>('SELECT * FROM status_subscribers WHERE page_id = ? ORDER BY id', [pageId]);
}

export function confirmedSubscribers(db: Db, pageId: number): SubscriberRow[] {
  return db.all<SubscriberRow>(
    'SELECT * FROM status_subscribers WHERE page_id = ? AND confirmed = 1 ORDER BY id',
    [pageId],
  );
}

export function findSubscriber(db: Db, id: number): SubscriberRow | undefined {
  return db.first<SubscriberRow>('SELECT * FROM status_subscribers WHERE id = ?', [id]);
}

export function findSubscriberByEmail(db: Db, pageId: number, email: string): SubscriberRow | undefined {
  return db.first<SubscriberRow>('SELECT * FROM status_subscribers WHERE page_id = ? AND email = ?', [
    pageId,
    email,
  ]);
}

export function insertSubscriber(db: Db, pageId: number, email: string, now: number): number {
  return db.run(
    'INSERT INTO status_subscribers (page_id, email, confirmed, created_at) VALUES (?, ?, 0, ?)',
    [pageId, email, now],
  ).lastInsertRowid;
}

export function confirmSubscriber(db: Db, id: number): void {
  db.run('UPDATE status_subscribers SET confirmed = 1 WHERE id = ?', [id]);
}

export function deleteSubscriber(db: Db, id: number): number {
  return db.run('DELETE FROM status_subscribers WHERE id = ?', [id]).changes;
}

/** Subscribers who never confirmed, created before `before` (their link has expired): gone. */
export function deleteUnconfirmedBefore(db: Db, before: number): number {
  return db.run('DELETE FROM status_subscribers WHERE confirmed = 0 AND created_at < ?', [before]).changes;
}
