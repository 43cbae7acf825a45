import { describe, expect, it } from 'vitest';
import { rowMaker, SqlJsDb } from './database';
import { loadSqlJs } from './snapshot';

describe('rowMaker', () => {
  it('builds the same rows as filling an object column by column, one hidden class per statement', () => {
    const make = rowMaker(['id', 'title', 'sender name', 'quote"d', 'back\\slash', 'ünï', '0']);
    const row = make([1, 'hello', null, 'q', 'b', 'u', 7]);
    expect(row).toEqual({
      id: 1,
      title: 'hello',
      'sender name': null,
      'quote"d': 'q',
      'back\\slash': 'b',
      ünï: 'u',
      0: 7,
    });
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.keys(make([2, 'x', null, '', '', '', 0]))).toEqual(Object.keys(row));
  });

  it('keeps __proto__ an own column, not the prototype', () => {
    const row = rowMaker(['__proto__', 'a'])([{ polluted: true } as never, 1]);
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.hasOwn(row, '__proto__')).toBe(true);
    expect((row as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('lets the last of duplicate column names win, like the generic path', () => {
    expect(rowMaker(['a', 'a'])([1, 2])).toEqual({ a: 2 });
    expect(rowMaker([])([])).toEqual({});
  });

  it('is what all() and first() return', async () => {
    const SQL = await loadSqlJs();
    const db = new SqlJsDb(new SQL.Database());
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t (name) VALUES ('a'), ('b')");
    expect(db.all('SELECT id, name AS "the name", 1 AS one FROM t ORDER BY id')).toEqual([
      { id: 1, 'the name': 'a', one: 1 },
      { id: 2, 'the name': 'b', one: 1 },
    ]);
    expect(db.first('SELECT name, name FROM t WHERE id = ?', [2])).toEqual({ name: 'b' });
    db.close();
  });
});

describe('afterCommit', () => {
  async function open() {
    const SQL = await loadSqlJs();
    const db = new SqlJsDb(new SQL.Database());
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)');
    const journaled: string[][] = [];
    db.setCommitSink((entries) => journaled.push(entries.map(([sql]) => sql)));
    return { db, journaled };
  }

  it('runs at once outside a transaction', async () => {
    const { db } = await open();
    const seen: string[] = [];
    db.afterCommit(() => seen.push('now'));
    expect(seen).toEqual(['now']);
    db.close();
  });

  it('waits for the outermost COMMIT and its journal record, savepoints included', async () => {
    const { db, journaled } = await open();
    const seen: string[] = [];
    db.transaction(() => {
      db.run("INSERT INTO t (name) VALUES ('a')");
      db.transaction(() => {
        db.run("INSERT INTO t (name) VALUES ('b')");
        db.afterCommit(() => seen.push(`inner sees ${journaled.length} record(s)`));
      });
      db.afterCommit(() => seen.push('outer'));
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual(['inner sees 1 record(s)', 'outer']);
    db.close();
  });

  it('drops what a rolled-back savepoint or transaction registered', async () => {
    const { db } = await open();
    const seen: string[] = [];
    db.transaction(() => {
      db.afterCommit(() => seen.push('kept'));
      expect(() =>
        db.transaction(() => {
          db.afterCommit(() => seen.push('savepoint rolled back'));
          throw new Error('no');
        }),
      ).toThrow('no');
    });
    expect(() =>
      db.transaction(() => {
        db.afterCommit(() => seen.push('transaction rolled back'));
        throw new Error('no');
      }),
    ).toThrow('no');
    db.transaction(() => undefined);
    expect(seen).toEqual(['kept']);
    db.close();
  });

  it('runs every callback when one throws, then throws the first error', async () => {
    const { db } = await open();
    const seen: string[] = [];
    expect(() =>
      db.transaction(() => {
        db.run("INSERT INTO t (name) VALUES ('a')");
        db.afterCommit(() => {
          throw new Error('first');
        });
        db.afterCommit(() => seen.push('second ran'));
      }),
    ).toThrow('first');
    expect(seen).toEqual(['second ran']);
    expect(db.first('SELECT count(*) AS n FROM t')).toEqual({ n: 1 });
    db.close();
  });
});
