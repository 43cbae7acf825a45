import { describe, expect, it } from 'vitest';
import { SqlJsDb } from './database';
import { loadSqlJs } from './snapshot';
import { inWriteBatch, WRITE_BATCH_MAX } from './write-batch';

async function open() {
  const SQL = await loadSqlJs();
  const db = new SqlJsDb(new SQL.Database());
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)');
  const records: number[] = [];
  db.setCommitSink((entries) => records.push(entries.length));
  const names = () => db.all<{ name: string }>('SELECT name FROM t ORDER BY id').map((r) => r.name);
  const insert = (name: string) => () =>
    db.transaction(() => db.run('INSERT INTO t (name) VALUES (?)', [name]).lastInsertRowid);
  return { db, records, names, insert };
}

describe('inWriteBatch', () => {
  it('commits the writes of one turn of the loop as one transaction, each answered with its own value', async () => {
    const { db, records, names, insert } = await open();
    const ids = await Promise.all(['a', 'b', 'c'].map((n) => inWriteBatch(db, insert(n))));
    expect(ids).toEqual([1, 2, 3]);
    expect(names()).toEqual(['a', 'b', 'c']);
    expect(records).toEqual([3]); // one journal record holding the three inserts
    db.close();
  });

  it('a failing write rolls back alone and gets its own error', async () => {
    const { db, names, insert } = await open();
    const failing = () =>
      db.transaction(() => {
        db.run("INSERT INTO t (name) VALUES ('half')");
        throw new Error('refused');
      });
    const out = await Promise.allSettled([
      inWriteBatch(db, insert('a')),
      inWriteBatch(db, failing),
      inWriteBatch(db, insert('b')),
    ]);
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((out[1] as PromiseRejectedResult).reason).toEqual(new Error('refused'));
    expect(names()).toEqual(['a', 'b']);
    db.close();
  });

  it('what a write throws after its own transaction keeps that transaction, as it would alone', async () => {
    const { db, names, insert } = await open();
    const keptThenRefused = () => {
      insert('kept')();
      throw new Error('429');
    };
    const out = await Promise.allSettled([inWriteBatch(db, insert('a')), inWriteBatch(db, keptThenRefused)]);
    expect(out[1]!.status).toBe('rejected');
    expect(names()).toEqual(['a', 'kept']);
    // Alone (a batch of one) the same.
    await expect(inWriteBatch(db, keptThenRefused)).rejects.toThrow('429');
    expect(names()).toEqual(['a', 'kept', 'kept']);
    db.close();
  });

  it('announces after the batch commits, never a rolled-back write', async () => {
    const { db, insert } = await open();
    const seen: string[] = [];
    const announced =
      (name: string, fail = false) =>
      () =>
        db.transaction(() => {
          insert(name)();
          db.afterCommit(() => seen.push(`${name} after ${db.inTransaction ? 'nothing' : 'commit'}`));
          if (fail) throw new Error('no');
        });
    await Promise.allSettled([
      inWriteBatch(db, announced('a')),
      inWriteBatch(db, announced('x', true)),
      inWriteBatch(db, announced('b')),
    ]);
    expect(seen).toEqual(['a after commit', 'b after commit']);
    db.close();
  });

  it(`takes at most ${WRITE_BATCH_MAX} writes a turn; the rest follow in the next`, async () => {
    const { db, records, names, insert } = await open();
    const n = WRITE_BATCH_MAX + 3;
    await Promise.all(Array.from({ length: n }, (_, i) => inWriteBatch(db, insert(`m${i}`))));
    expect(names()).toHaveLength(n);
    expect(records).toEqual([WRITE_BATCH_MAX, 3]);
    db.close();
  });
});
