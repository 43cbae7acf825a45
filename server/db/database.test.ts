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
