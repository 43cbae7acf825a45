import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { indexAllPending, indexSearchBatch, MESSAGE_SEARCH_INDEX } from '../features/messages/search-index';
import { ManualClock } from '../lib/clock';
import { memoryLogger } from '../lib/log';
import type { Migration } from './migrate';
import { migrations as all } from './migrations.generated';
import { ReplayIndexing, type TriggerKeptIndex } from './replay-index';
import { openStore, type Store } from './store';

// The shape of migration 0003's search index, on a table of its own.
const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'docs',
    sql: `CREATE TABLE docs (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL);
          CREATE VIRTUAL TABLE docs_fts USING fts4(content="docs", title, body);
          CREATE TRIGGER docs_fts_insert AFTER INSERT ON docs BEGIN
            INSERT INTO docs_fts(docid, title, body) VALUES (new.id, new.title, new.body);
          END;
          CREATE TRIGGER docs_fts_delete BEFORE DELETE ON docs BEGIN
            DELETE FROM docs_fts WHERE docid = old.id;
          END;
          INSERT INTO docs_fts(docs_fts) VALUES ('automerge=8');`,
  },
];

const INDEX: TriggerKeptIndex = {
  fts: 'docs_fts',
  content: 'docs',
  columns: ['title', 'body'],
  insertTrigger: 'docs_fts_insert',
  deleteTrigger: 'docs_fts_delete',
};

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'late', 'reused'];
const dirs: string[] = [];
const open: Store[] = [];

afterEach(async () => {
  for (const s of open.splice(0)) await s.close().catch(() => {});
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'belfry-replay-index-'));
  dirs.push(d);
  return d;
}

async function openAt(dir: string, indexes?: readonly TriggerKeptIndex[], extra: readonly Migration[] = []) {
  const store = await openStore({
    dataDir: dir,
    log: memoryLogger(),
    clock: new ManualClock(),
    migrations: [...migrations, ...extra],
    ...(indexes ? { triggerKeptIndexes: indexes } : {}),
  });
  open.push(store);
  return store;
}

function add(store: Store, title: string, body: string): number {
  return store.db.run('INSERT INTO docs (title, body) VALUES (?, ?)', [title, body]).lastInsertRowid;
}

/** What a search sees: the matching docids of every word, and FTS4's own consistency check. */
function searchState(store: Store): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const w of WORDS)
    out[w] = store.db
      .all<{ docid: number }>('SELECT docid FROM docs_fts WHERE docs_fts MATCH ? ORDER BY docid', [w])
      .map((r) => r.docid);
  return out;
}

function integrityOk(store: Store): void {
  // Throws "database disk image is malformed" when the index and the content table disagree.
  store.db.run("INSERT INTO docs_fts(docs_fts) VALUES ('integrity-check')");
}

function schemaOf(store: Store) {
  return {
    main: store.db.all("SELECT type, name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name"),
    temp: store.db.all('SELECT name FROM sqlite_temp_master'),
  };
}

/**
 * Writes `before` (then a snapshot) and `after` (left in the journal), copies the data dir as a crash
 * would leave it, and opens one copy with deferred indexing and one without.
 */
async function replayBothWays(
  before: (s: Store) => void,
  after: (s: Store) => void,
  extra: readonly Migration[] = [],
) {
  const origin = await tempDir();
  const a = await openAt(origin, [INDEX]);
  before(a);
  await a.snapshot();
  after(a);
  await a.sync();
  const deferredDir = await tempDir();
  const plainDir = await tempDir();
  await cp(origin, deferredDir, { recursive: true });
  await cp(origin, plainDir, { recursive: true });
  const expected = searchState(a);
  const deferred = await openAt(deferredDir, [INDEX], extra);
  const plain = await openAt(plainDir, undefined, extra);
  return { expected, deferred, plain };
}

describe('deferred search indexing during replay', () => {
  it('indexes replayed rows once at the end: same search results, a consistent index, the same schema', async () => {
    const { expected, deferred, plain } = await replayBothWays(
      (s) => {
        for (let i = 0; i < 30; i++) add(s, `old ${i}`, i % 2 ? 'alpha beta' : 'gamma');
      },
      (s) => {
        for (let i = 0; i < 40; i++) add(s, `new ${i}`, i % 3 ? 'alpha delta' : 'omega');
        s.db.run('DELETE FROM docs WHERE id IN (2, 3)'); // indexed before the snapshot
        s.db.run('DELETE FROM docs WHERE id = 35'); // inserted in the journal
        s.db.transaction(() => {
          add(s, 'late', 'late alpha');
          s.db.run('DELETE FROM docs WHERE title = ?', ['old 4']);
        });
        // The newest row deleted, then its id taken again by the next insert.
        const top = s.db.first<{ id: number }>('SELECT max(id) AS id FROM docs')!.id;
        s.db.run('DELETE FROM docs WHERE id = ?', [top]);
        expect(add(s, 'again', 'reused')).toBe(top);
        s.db.relaxed(() => s.db.run("INSERT INTO docs_fts(docs_fts) VALUES ('merge=2,2')"));
      },
    );
    expect(searchState(deferred)).toEqual(expected);
    expect(searchState(plain)).toEqual(expected);
    expect(expected.reused).toHaveLength(1);
    expect(expected.gamma).not.toContain(3);
    integrityOk(deferred);
    expect(schemaOf(deferred)).toEqual(schemaOf(plain));
    expect(schemaOf(deferred).temp).toEqual([]);
    // The triggers are back: a write after start-up is searchable at once, a delete leaves the index.
    const id = add(deferred, 'fresh', 'omega');
    deferred.db.run('DELETE FROM docs WHERE id = 1');
    expect(searchState(deferred).omega).toContain(id);
    expect(searchState(deferred).gamma).not.toContain(1);
    integrityOk(deferred);
  });

  it('journals nothing of its own: a second crash replays to the same state', async () => {
    const { expected, deferred } = await replayBothWays(
      (s) => add(s, 'a', 'alpha'),
      (s) => {
        for (let i = 0; i < 10; i++) add(s, `b${i}`, 'beta');
      },
    );
    const records = deferred.stats().journalRecords;
    await deferred.sync();
    expect(deferred.stats().journalRecords).toBe(records);
    expect(searchState(deferred)).toEqual(expected);
  });

  it('stops deferring before DDL in the journal (a later migration that reworks the triggers)', async () => {
    // Migration 2 ran after the snapshot, so its DDL is in the journal: it replaces the insert trigger
    // (same effect, columns in another order). Still deferring there would replay a DROP TRIGGER of a
    // trigger already dropped, and finish() would put the old one back.
    const rework: Migration = {
      version: 2,
      name: 'rework',
      sql: `DROP TRIGGER docs_fts_insert;
            CREATE TRIGGER docs_fts_insert AFTER INSERT ON docs BEGIN
              INSERT INTO docs_fts(docid, body, title) VALUES (new.id, new.body, new.title);
            END;`,
    };
    const origin = await tempDir();
    const a = await openAt(origin, [INDEX]);
    add(a, 'first', 'alpha');
    await a.snapshot();
    add(a, 'second', 'beta');
    await a.close();
    const b = await openAt(origin, [INDEX], [rework]); // replays "second", then runs migration 2
    add(b, 'third', 'gamma');
    add(b, 'fourth', 'reused');
    await b.sync();
    const copy = await tempDir();
    await cp(origin, copy, { recursive: true });
    const expected = searchState(b);
    expect(expected.reused).toEqual([4]);
    const c = await openAt(copy, [INDEX], [rework]);
    expect(searchState(c)).toEqual(expected);
    expect(schemaOf(c)).toEqual(schemaOf(b));
    expect(JSON.stringify(schemaOf(c).main)).toContain('new.body, new.title');
    integrityOk(c);
  });

  it('stops deferring before any other statement that names the index', async () => {
    const { expected, deferred } = await replayBothWays(
      (s) => add(s, 'a', 'alpha'),
      (s) => {
        add(s, 'b', 'beta');
        s.db.run("INSERT INTO docs_fts(docs_fts) VALUES ('rebuild')");
        add(s, 'c', 'gamma');
      },
    );
    expect(searchState(deferred)).toEqual(expected);
    integrityOk(deferred);
  });

  it('leaves a database without those triggers alone', async () => {
    const dir = await tempDir();
    const s = await openAt(dir);
    s.db.exec('DROP TRIGGER docs_fts_insert');
    expect(ReplayIndexing.begin(s.db, [INDEX])).toBeNull();
    expect(ReplayIndexing.begin(s.db, [])).toBeNull();
  });

  it('refuses names that are not plain SQL names', async () => {
    const s = await openAt(await tempDir());
    expect(() => ReplayIndexing.begin(s.db, [{ ...INDEX, columns: ['title; DROP TABLE docs'] }])).toThrow(
      /not a plain SQL name/,
    );
  });

  it('allows plain writes and FTS4 merge commands, not DDL or other uses of the index', async () => {
    const s = await openAt(await tempDir());
    const r = ReplayIndexing.begin(s.db, [INDEX])!;
    expect(r.deferred).toBe(true);
    expect(r.allows('INSERT INTO docs (title, body) VALUES (?, ?)')).toBe(true);
    expect(r.allows('DELETE FROM docs WHERE id = ?')).toBe(true);
    expect(r.allows("INSERT INTO docs_fts(docs_fts) VALUES ('merge=2,2')")).toBe(true);
    expect(r.allows("insert into DOCS_FTS (docs_fts) values ('automerge=8')")).toBe(true);
    expect(r.allows("INSERT INTO docs_fts(docs_fts) VALUES ('rebuild')")).toBe(false);
    expect(r.allows('DELETE FROM docs_fts WHERE docid = 1')).toBe(false);
    expect(r.allows('  create index x on docs(title)')).toBe(false);
    expect(r.allows('DROP TRIGGER docs_fts_delete')).toBe(false);
    expect(r.allows('ALTER TABLE docs ADD COLUMN x')).toBe(false);
    r.finish();
    expect(r.deferred).toBe(false);
    expect(s.db.all('SELECT name FROM sqlite_temp_master')).toEqual([]);
  });
});

describe('the messages search index across migration 0008', () => {
  it('replays a journal written before 0008 under its triggers, then 0008 rebuilds the index in batches from watermark 0: it matches exactly', async () => {
    const before0008 = all.filter((m) => m.version < 8);
    const dir = await tempDir();
    const old = await openStore({
      dataDir: dir,
      log: memoryLogger(),
      clock: new ManualClock(),
      migrations: before0008,
    });
    old.db.run("INSERT INTO users (email, password_hash, created_at) VALUES ('a@example.com', 'x', 0)");
    old.db.run("INSERT INTO channels (user_id, name, created_at) VALUES (1, 'c', 0)");
    const add = (text: string) =>
      old.db.run(
        "INSERT INTO messages (channel_id, user_id, message, title, priority, date) VALUES (1, 1, ?, 't', 0, 0)",
        [text],
      ).lastInsertRowid;
    add('alpha snapshotted');
    await old.snapshot();
    for (let i = 0; i < 20; i++) add(`beta ${i}`);
    old.db.run('DELETE FROM messages WHERE id = 3');
    const last = add('gamma last');
    await old.sync();
    // A crash: copy the directory as the old version left it (journal tail not snapshotted).
    const crashed = await tempDir();
    await cp(dir, crashed, { recursive: true });
    await old.close();

    const log = memoryLogger();
    const s = await openStore({
      dataDir: crashed,
      log,
      clock: new ManualClock(),
      migrations: all,
      triggerKeptIndexes: [MESSAGE_SEARCH_INDEX],
    });
    open.push(s);
    const ids = (sql: string) => s.db.all<{ id: number }>(sql).map((r) => r.id);
    const indexed = () => ids('SELECT docid AS id FROM messages_fts_docsize ORDER BY docid');
    // The replay ran under the old triggers; 0008 then rebuilt the index empty, in descending order.
    expect(s.db.first('SELECT indexed_up_to AS w FROM search_index_state')).toEqual({ w: 0 });
    expect(indexed()).toEqual([]);
    expect(indexSearchBatch(s.db, 10)).toEqual({ indexed: 10, more: true });
    expect(indexed()).toEqual(ids('SELECT id FROM messages ORDER BY id LIMIT 10'));
    indexAllPending(s.db);
    expect(indexed()).toEqual(ids('SELECT id FROM messages ORDER BY id'));
    expect(ids('SELECT id FROM messages ORDER BY id').at(-1)).toBe(last);
    s.db.run("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')");
    // From now on there is no insert trigger: nothing for a replay to defer, and new rows wait for a batch.
    expect(ReplayIndexing.begin(s.db, [MESSAGE_SEARCH_INDEX])).toBeNull();
    const next = s.db.run(
      "INSERT INTO messages (channel_id, user_id, message, title, priority, date) VALUES (1, 1, 'delta', 't', 0, 0)",
    ).lastInsertRowid;
    expect(s.db.first('SELECT 1 AS x FROM messages_fts_docsize WHERE docid = ?', [next])).toBeUndefined();
    expect(indexAllPending(s.db)).toBe(1);
    expect(
      s.db.all('SELECT docid FROM messages_fts WHERE messages_fts MATCH ?', ['delta']).map((r) => r.docid),
    ).toEqual([next]);
  });
});
