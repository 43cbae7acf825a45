import type { SqlJsDb } from './database';

/**
 * A full-text index that triggers keep in step with its content table: `insertTrigger` adds each new
 * row's `columns` to `fts` under docid = rowid, `deleteTrigger` (BEFORE DELETE) takes the row out.
 */
export interface TriggerKeptIndex {
  fts: string;
  content: string;
  columns: readonly string[];
  insertTrigger: string;
  deleteTrigger: string;
}

const NAME_RE = /^[a-z_][a-z0-9_]*$/;
const DDL_RE = /^\s*(create|drop|alter)\b/i;

/**
 * Fills trigger-kept full-text indexes once at the end of a journal replay instead of statement by
 * statement.
 *
 * Since migration 0008 the messages index is not trigger-kept any more: new messages are indexed in
 * batches (server/features/messages/search-index.ts), each batch one INSERT … SELECT that a replay
 * repeats as such, so `begin` finds no insert trigger and defers nothing. This stays for a journal
 * written before 0008 (an upgrade after a crash replays it under the old triggers; the migration then
 * runs) and for any index still kept by triggers.
 *
 * FTS4 flushes its pending terms into a new index segment at every statement savepoint, so each
 * replayed INSERT writes a segment of its own, and FTS4 then spends the commit merging thousands of
 * tiny segments: next to a 1M-message index that is ~0.4 ms a message, nearly all of a replay. Deferred,
 * the replayed rows are only noted (a TEMP table, outside the database file) and indexed by one
 * INSERT … SELECT at the end: one segment. Measured on the 1M bench data set with the longest tail a
 * crash leaves (4,536 messages): 2.1 s of replay became 0.3 s.
 *
 * While deferred, the index's own triggers are dropped and TEMP triggers stand in: an insert is noted;
 * a delete takes the row out of the index only when it was indexed before (a noted row is just
 * forgotten). `finish()` indexes what is noted and recreates the triggers from their saved SQL, so the
 * schema ends as it began. Anything the stand-ins do not cover ends the deferral before it runs: DDL
 * (a migration in the journal may rework these very triggers) and any statement naming the FTS table
 * other than FTS4's merge commands. Nothing here is journaled: it runs through `db.replay`.
 */
export class ReplayIndexing {
  private active: { index: TriggerKeptIndex; triggers: string[]; backlog: string }[] = [];
  private mentions: RegExp | null = null;
  /** Per deferred FTS table (lower case): FTS4's merge commands on it, the one use of it allowed. */
  private readonly maintenance = new Map<string, RegExp>();

  private constructor(private readonly db: SqlJsDb) {}

  /** Defers the indexes whose triggers exist (with those names, on that table); null if none does. */
  static begin(db: SqlJsDb, indexes: readonly TriggerKeptIndex[]): ReplayIndexing | null {
    const r = new ReplayIndexing(db);
    for (const index of indexes) {
      for (const name of [
        index.fts,
        index.content,
        index.insertTrigger,
        index.deleteTrigger,
        ...index.columns,
      ])
        if (!NAME_RE.test(name)) throw new Error(`not a plain SQL name: ${name}`);
      const triggers = db
        .all<{ name: string; sql: string }>(
          "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND name IN (?, ?)",
          [index.content, index.insertTrigger, index.deleteTrigger],
        )
        .map((t) => t.sql);
      if (triggers.length !== 2) continue;
      const backlog = `belfry_replay_${index.fts}`;
      const { fts, content } = index;
      db.replay(
        [
          `DROP TRIGGER main.${index.insertTrigger}`,
          `DROP TRIGGER main.${index.deleteTrigger}`,
          `CREATE TEMP TABLE ${backlog} (id INTEGER PRIMARY KEY)`,
          `CREATE TEMP TRIGGER ${backlog}_insert AFTER INSERT ON main.${content} BEGIN
             INSERT INTO temp.${backlog} (id) VALUES (new.rowid);
           END`,
          `CREATE TEMP TRIGGER ${backlog}_delete BEFORE DELETE ON main.${content} BEGIN
             DELETE FROM main.${fts} WHERE docid = old.rowid
               AND NOT EXISTS (SELECT 1 FROM temp.${backlog} WHERE id = old.rowid);
             DELETE FROM temp.${backlog} WHERE id = old.rowid;
           END`,
        ].map((sql) => [sql, null] as const),
      );
      r.active.push({ index, triggers, backlog });
      // FTS4's own maintenance commands only rearrange what is already indexed.
      r.maintenance.set(
        fts,
        new RegExp(
          `^\\s*insert\\s+into\\s+${fts}\\s*\\(\\s*${fts}\\s*\\)\\s*values\\s*\\(\\s*'(auto)?merge=[0-9,]+'\\s*\\)\\s*;?\\s*$`,
          'i',
        ),
      );
    }
    if (r.active.length === 0) return null;
    r.mentions = new RegExp(`\\b(${r.active.map((a) => a.index.fts).join('|')})\\b`, 'i');
    return r;
  }

  /** Whether `sql` may run while indexing is deferred; when not, call finish() first. */
  allows(sql: string): boolean {
    if (DDL_RE.test(sql)) return false;
    const m = this.mentions?.exec(sql);
    if (!m) return true;
    return this.maintenance.get(m[1]!.toLowerCase())?.test(sql) ?? false;
  }

  /** Whether indexing is still deferred. */
  get deferred(): boolean {
    return this.active.length > 0;
  }

  /** Indexes the noted rows in one statement per index and puts the original triggers back. */
  finish(): void {
    const entries: string[] = [];
    for (const { index, triggers, backlog } of this.active.splice(0)) {
      const cols = index.columns.join(', ');
      entries.push(
        `DROP TRIGGER temp.${backlog}_insert`,
        `DROP TRIGGER temp.${backlog}_delete`,
        `INSERT INTO main.${index.fts} (docid, ${cols})
           SELECT c.rowid, ${index.columns.map((c) => `c.${c}`).join(', ')}
           FROM temp.${backlog} b JOIN main.${index.content} c ON c.rowid = b.id ORDER BY b.id`,
        `DROP TABLE temp.${backlog}`,
        ...triggers,
      );
    }
    this.mentions = null;
    this.maintenance.clear();
    if (entries.length > 0) this.db.replay(entries.map((sql) => [sql, null] as const));
  }
}
