import { readFileSync } from 'node:fs';
import initSqlJs from 'sql.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { generatedPath, renderMigrations } from '../../scripts/gen-migrations';
import { type JournalEntry, SqlJsDb, STATEMENT_CACHE_MAX } from './database';
import { type Migration, migrate, NewerDatabaseError } from './migrate';
import { migrations } from './migrations.generated';

let SQL: Awaited<ReturnType<typeof initSqlJs>>;
beforeAll(async () => {
  SQL = await initSqlJs();
});

const m1: Migration = { version: 1, name: 'one', sql: 'CREATE TABLE a (id INTEGER PRIMARY KEY);' };
const m2: Migration = { version: 2, name: 'two', sql: 'CREATE TABLE b (id INTEGER PRIMARY KEY);' };

function tables(db: SqlJsDb): string[] {
  return db
    .all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .map((r) => r.name);
}

describe('migrate', () => {
  it('applies pending migrations in order and records them', () => {
    const db = new SqlJsDb(new SQL.Database());
    expect(migrate(db, [m2, m1], 1000)).toEqual([1, 2]);
    expect(tables(db)).toEqual(['a', 'b', 'schema_migrations']);
    expect(db.all('SELECT version, name, applied_at FROM schema_migrations')).toEqual([
      { version: 1, name: 'one', applied_at: 1000 },
      { version: 2, name: 'two', applied_at: 1000 },
    ]);
  });

  it('applies only what is missing on a later start', () => {
    const db = new SqlJsDb(new SQL.Database());
    migrate(db, [m1], 1);
    expect(migrate(db, [m1, m2], 2)).toEqual([2]);
    expect(migrate(db, [m1, m2], 3)).toEqual([]);
  });

  it('refuses a database written by a newer version', () => {
    const db = new SqlJsDb(new SQL.Database());
    migrate(db, [m1, m2], 1);
    expect(() => migrate(db, [m1], 2)).toThrow(NewerDatabaseError);
    expect(() => migrate(db, [m1], 2)).toThrow(/newer version of Belfry \(unknown migrations: 0002_two\)/);
  });

  it('rolls a failing migration back whole and journals nothing of it', () => {
    const db = new SqlJsDb(new SQL.Database());
    const journaled: (readonly JournalEntry[])[] = [];
    db.setCommitSink((e) => journaled.push(e));
    const bad: Migration = {
      version: 3,
      name: 'bad',
      sql: 'CREATE TABLE c (id INTEGER); CREATE TABLE c (x);',
    };
    expect(() => migrate(db, [m1, bad], 1)).toThrow();
    expect(tables(db)).toEqual(['a', 'schema_migrations']);
    expect(journaled.flat().some(([sql]) => sql.includes('TABLE c'))).toBe(false);
  });

  it('the bundled migrations apply to an empty database and match the SQL files', () => {
    const db = new SqlJsDb(new SQL.Database());
    migrate(db, migrations, 1);
    expect(tables(db)).toContain('messages');
    expect(readFileSync(generatedPath, 'utf8')).toBe(renderMigrations());
  });
});

describe('SqlJsDb', () => {
  it('journals a top-level transaction as one record and nothing of a rolled-back savepoint', () => {
    const db = new SqlJsDb(new SQL.Database());
    db.exec('CREATE TABLE t (v INTEGER)');
    const records: (readonly JournalEntry[])[] = [];
    db.setCommitSink((e) => records.push(e));
    db.transaction(() => {
      db.run('INSERT INTO t (v) VALUES (?)', [1]);
      expect(() =>
        db.transaction(() => {
          db.run('INSERT INTO t (v) VALUES (?)', [2]);
          throw new Error('inner');
        }),
      ).toThrow('inner');
      db.run('INSERT INTO t (v) VALUES (?)', [3]);
    });
    expect(db.all('SELECT v FROM t ORDER BY v')).toEqual([{ v: 1 }, { v: 3 }]);
    expect(records).toEqual([
      [
        ['INSERT INTO t (v) VALUES (?)', [1]],
        ['INSERT INTO t (v) VALUES (?)', [3]],
      ],
    ]);
  });

  it('journals nothing of a failed top-level transaction', () => {
    const db = new SqlJsDb(new SQL.Database());
    db.exec('CREATE TABLE t (v INTEGER)');
    const records: unknown[] = [];
    db.setCommitSink((e) => records.push(e));
    expect(() =>
      db.transaction(() => {
        db.run('INSERT INTO t (v) VALUES (1)');
        throw new Error('x');
      }),
    ).toThrow('x');
    expect(records).toEqual([]);
    expect(db.all('SELECT v FROM t')).toEqual([]);
  });

  it('reports changes and the inserted rowid, and binds named parameters', () => {
    const db = new SqlJsDb(new SQL.Database());
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    expect(db.run('INSERT INTO t (v) VALUES (:v)', { v: 'a' })).toEqual({ changes: 1, lastInsertRowid: 1 });
    expect(db.run('INSERT INTO t (v) VALUES (?)', ['b']).lastInsertRowid).toBe(2);
    expect(db.run('UPDATE t SET v = ?', ['c']).changes).toBe(2);
    expect(db.first('SELECT count(*) AS n FROM t WHERE v = :v', { v: 'c' })).toEqual({ n: 2 });
  });

  it('keeps foreign keys on after an export (sql.js reopens the handle)', () => {
    const db = new SqlJsDb(new SQL.Database());
    expect(db.first('PRAGMA foreign_keys')).toEqual({ foreign_keys: 1 });
    db.exportBytes();
    expect(db.first('PRAGMA foreign_keys')).toEqual({ foreign_keys: 1 });
    // Cached statements were freed by export(); using the wrapper again must still work.
    db.exec('CREATE TABLE t (v INTEGER)');
    db.run('INSERT INTO t (v) VALUES (?)', [1]);
    db.exportBytes();
    db.run('INSERT INTO t (v) VALUES (?)', [2]);
    expect(db.all('SELECT v FROM t')).toEqual([{ v: 1 }, { v: 2 }]);
  });
});

describe('journaling of writes through all() and first()', () => {
  it('journals INSERT ... RETURNING and a WITH clause in front of a write, not a plain SELECT', () => {
    const db = new SqlJsDb(new SQL.Database());
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, updated_at INTEGER)');
    const records: (readonly JournalEntry[])[] = [];
    db.setCommitSink((e) => records.push(e));
    db.first('INSERT INTO t (updated_at) VALUES (?) RETURNING id', [1]);
    db.all('WITH x AS (SELECT 2 AS v) INSERT INTO t (updated_at) SELECT v FROM x');
    db.all('SELECT id, updated_at FROM t');
    expect(records.map((r) => r[0]![0])).toEqual([
      'INSERT INTO t (updated_at) VALUES (?) RETURNING id',
      'WITH x AS (SELECT 2 AS v) INSERT INTO t (updated_at) SELECT v FROM x',
    ]);
  });

  it('journals nothing when migrations are already applied', () => {
    const db = new SqlJsDb(new SQL.Database());
    migrate(db, [m1], 1);
    const records: unknown[] = [];
    db.setCommitSink((e) => records.push(e));
    migrate(db, [m1], 2);
    expect(records).toEqual([]);
  });
});

describe('statement cache', () => {
  it('stays bounded when statements vary, and evicted statements still work when used again', () => {
    const db = new SqlJsDb(new SQL.Database());
    db.exec('CREATE TABLE t (v INTEGER)');
    db.run('INSERT INTO t (v) VALUES (1)');
    for (let n = 1; n <= STATEMENT_CACHE_MAX + 50; n++) {
      const marks = Array.from({ length: n }, () => '?').join(',');
      expect(
        db.all(
          `SELECT v FROM t WHERE v IN (${marks})`,
          Array.from({ length: n }, () => 1),
        ),
      ).toEqual([{ v: 1 }]);
    }
    expect((db as unknown as { cache: Map<string, unknown> }).cache.size).toBe(STATEMENT_CACHE_MAX);
    expect(db.all('SELECT v FROM t WHERE v IN (?)', [1])).toEqual([{ v: 1 }]);
  });
});
