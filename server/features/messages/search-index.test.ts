import { afterEach, describe, expect, it } from 'vitest';
import { makeChannel, makeUser } from '../../../test/helpers/factories';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server';
import { QUIET_AFTER_MS } from '../../http/activity';
import {
  indexAllPending,
  indexSearchBatch,
  mergeSearchIndex,
  SEARCH_INDEX_BATCH_ROWS,
  SEARCH_INDEX_LAG_MS,
  SEARCH_INDEX_MIN_ROWS,
  SearchIndexer,
} from './search-index';

let t: TestServer | undefined;
afterEach(() => t?.close());

const segments = (s: TestServer) =>
  s.server.ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM messages_fts_segdir')!.n;

describe('search index merging', () => {
  it('merges the segments many small commits leave, keeps search right, and then does nothing', async () => {
    t = await startTestServer();
    const s = t;
    const u = makeUser(s);
    const dev = (await s.request('POST', '/client', { basic: u, json: { name: 'd' } })).body.token as string;
    const channel = await makeChannel(s, dev);
    for (let i = 0; i < 40; i++) {
      const res = await s.request('POST', '/message', {
        token: channel.token,
        json: { message: `disk ${i % 2 === 0 ? 'full' : 'fine'} on host${i}` },
      });
      expect(res.status).toBe(200);
      indexAllPending(s.server.ctx.db); // one small batch (one segment) per message
    }
    const before = segments(s);
    expect(before).toBeGreaterThan(2);
    expect(mergeSearchIndex(s.server.ctx, 10_000)).toBeGreaterThan(0);
    expect(segments(s)).toBeLessThan(before);
    const found = await s.request('GET', '/message/search?q=full', { token: dev });
    expect(found.body.messages).toHaveLength(20);
    // Merged as far as it goes: a further run does no work and journals nothing.
    await s.server.store.sync();
    const journaled = s.server.store.stats().journalRecords;
    expect(mergeSearchIndex(s.server.ctx, 10_000)).toBe(0);
    expect(s.server.store.stats().journalRecords).toBe(journaled);
  });

  it('runs as a scheduled job only once requests have been quiet for a moment', async () => {
    t = await startTestServer();
    const s = t;
    const u = makeUser(s);
    const dev = (await s.request('POST', '/client', { basic: u, json: { name: 'd' } })).body.token as string;
    const channel = await makeChannel(s, dev);
    for (let i = 0; i < 10; i++) {
      await s.request('POST', '/message', { token: channel.token, json: { message: `m ${i}` } });
      indexAllPending(s.server.ctx.db);
    }
    const before = segments(s);
    await s.server.scheduler.runNow('search-index-merge');
    expect(segments(s)).toBe(before);
    s.clock.advance(QUIET_AFTER_MS);
    await s.server.scheduler.runNow('search-index-merge');
    expect(segments(s)).toBeLessThan(before);
  });
});

const fts = (s: TestServer) =>
  s.server.ctx.db
    .all<{ docid: number }>('SELECT docid FROM messages_fts_docsize ORDER BY docid')
    .map((r) => r.docid);
const messageIds = (s: TestServer) =>
  s.server.ctx.db.all<{ id: number }>('SELECT id FROM messages ORDER BY id').map((r) => r.id);
const watermark = (s: TestServer) =>
  s.server.ctx.db.first<{ w: number }>('SELECT indexed_up_to AS w FROM search_index_state')!.w;

async function channelOf(s: TestServer) {
  const u = makeUser(s);
  const dev = (await s.request('POST', '/client', { basic: u, json: { name: 'd' } })).body.token as string;
  return { dev, channel: await makeChannel(s, dev) };
}

async function post(s: TestServer, token: string, message: string): Promise<number> {
  const res = await s.request('POST', '/message', { token, json: { message } });
  expect(res.status).toBe(200);
  return res.body.id as number;
}

describe('batched search indexing', () => {
  it('indexes nothing on the request path, then everything once SEARCH_INDEX_LAG_MS has passed', async () => {
    t = await startTestServer();
    const s = t;
    const { channel } = await channelOf(s);
    const ids = [await post(s, channel.token, 'alpha one'), await post(s, channel.token, 'alpha two')];
    expect(fts(s)).toEqual([]);
    s.clock.advance(SEARCH_INDEX_LAG_MS - 1);
    await s.server.scheduler.tick();
    expect(fts(s)).toEqual([]);
    s.clock.advance(1);
    await s.server.scheduler.tick();
    expect(fts(s)).toEqual(ids);
    expect(watermark(s)).toBe(ids[1]);
    // Caught up: the indexer is not due again until the next message.
    expect(s.server.ctx.due.earliest() === null || s.server.ctx.due.earliest()! > s.clock.now()).toBe(true);
  });

  it('indexes in bounded batches, one transaction (one journal record) each, and moves the watermark with them', async () => {
    t = await startTestServer();
    const s = t;
    const { channel } = await channelOf(s);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await post(s, channel.token, `beta ${i}`));
    await s.server.store.sync();
    const records = s.server.store.stats().journalRecords;
    expect(indexSearchBatch(s.server.ctx.db, 2)).toEqual({ indexed: 2, more: true });
    expect(fts(s)).toEqual(ids.slice(0, 2));
    expect(watermark(s)).toBe(ids[1]);
    await s.server.store.sync();
    expect(s.server.store.stats().journalRecords).toBe(records + 1);
    expect(indexSearchBatch(s.server.ctx.db, 2)).toEqual({ indexed: 2, more: true });
    expect(indexSearchBatch(s.server.ctx.db, 2)).toEqual({ indexed: 1, more: false });
    expect(fts(s)).toEqual(ids);
    expect(indexSearchBatch(s.server.ctx.db, 2)).toEqual({ indexed: 0, more: false });
    s.server.ctx.db.run("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')");
  });

  it('keeps the index exact when indexed and not yet indexed messages are deleted', async () => {
    t = await startTestServer();
    const s = t;
    const { dev, channel } = await channelOf(s);
    const a = await post(s, channel.token, 'gamma indexed');
    const b = await post(s, channel.token, 'gamma indexed too');
    indexAllPending(s.server.ctx.db);
    const c = await post(s, channel.token, 'gamma waiting');
    const d = await post(s, channel.token, 'gamma waiting too');
    expect((await s.request('DELETE', `/message/${a}`, { token: dev })).status).toBe(200);
    expect((await s.request('DELETE', `/message/${c}`, { token: dev })).status).toBe(200);
    expect(fts(s)).toEqual([b]);
    indexAllPending(s.server.ctx.db);
    expect(fts(s)).toEqual([b, d]);
    expect(messageIds(s)).toEqual([b, d]);
    // Deleting c, which the index never had, must not have counted it out of the index's statistics
    // (matchinfo 'n': the number of indexed rows) nor subtracted its terms (integrity-check throws).
    const indexedRows = s.server.ctx.db.first<{ n: Uint8Array }>(
      "SELECT matchinfo(messages_fts, 'n') AS n FROM messages_fts WHERE messages_fts MATCH 'gamma' LIMIT 1",
    )!.n;
    expect(new Uint32Array(indexedRows.buffer, indexedRows.byteOffset, 1)[0]).toBe(2);
    s.server.ctx.db.run("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')");
    // A channel delete takes indexed and waiting rows alike (FK cascade fires the delete trigger).
    await post(s, channel.token, 'gamma last');
    expect((await s.request('DELETE', `/application/${channel.id}`, { token: dev })).status).toBe(200);
    expect(fts(s)).toEqual([]);
    expect(indexAllPending(s.server.ctx.db)).toBe(0);
    s.server.ctx.db.run("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')");
  });

  it('counts the lag from now when the wall clock went back after a message was noted', async () => {
    t = await startTestServer();
    const s = t;
    const { channel } = await channelOf(s);
    const id = await post(s, channel.token, 'epsilon');
    s.clock.set(s.clock.now() - 3_600_000);
    s.clock.advance(SEARCH_INDEX_LAG_MS);
    await s.server.scheduler.tick(); // looks again: due SEARCH_INDEX_LAG_MS from the new now
    s.clock.advance(SEARCH_INDEX_LAG_MS);
    await s.server.scheduler.tick();
    expect(fts(s)).toEqual([id]);
  });

  it('catches up on messages nobody announced (a start-up after a crash) when the due timer looks', async () => {
    t = await startTestServer();
    const s = t;
    const { channel } = await channelOf(s);
    const id = await post(s, channel.token, 'delta');
    indexAllPending(s.server.ctx.db);
    // As a replayed journal leaves it: a message above the watermark, no message:created for it.
    s.server.ctx.db.run('UPDATE search_index_state SET indexed_up_to = ?', [id - 1]);
    s.server.ctx.db.run('DELETE FROM messages_fts WHERE docid = ?', [id]);
    expect(fts(s)).toEqual([]);
    s.server.ctx.due.poke();
    s.clock.advance(SEARCH_INDEX_LAG_MS);
    await s.server.scheduler.tick();
    expect(fts(s)).toEqual([id]);
  });
});

describe('background batch sizing', () => {
  it('sizes its batches to about SEARCH_INDEX_BATCH_MS of work, within its bounds, and indexes everything', async () => {
    t = await startTestServer();
    const s = t;
    const { channel } = await channelOf(s);
    const db = s.server.ctx.db;
    const userId = db.first<{ u: number }>('SELECT user_id AS u FROM channels WHERE id = ?', [channel.id])!.u;
    db.transaction(() => {
      for (let i = 0; i < 15_000; i++)
        db.run(
          'INSERT INTO messages (channel_id, user_id, message, title, priority, date) VALUES (?, ?, ?, ?, 5, ?)',
          [channel.id, userId, `gamma ${i}`, 't', s.clock.now()],
        );
    });
    // Each batch "takes" its rows × costMsPerRow: the indexer reads the time before and after a batch.
    let now = 0;
    let costMsPerRow = 0.1;
    let indexedBefore = 0;
    let reads = 0;
    const indexer = new SearchIndexer(SEARCH_INDEX_LAG_MS, () =>
      ++reads % 2 === 1 ? now : now + (fts(s).length - indexedBefore) * costMsPerRow,
    );
    const batch = () => {
      indexedBefore = fts(s).length;
      const size = indexer.batchRows();
      indexer.runDue(s.server.ctx);
      now += 100;
      return size;
    };
    expect(batch()).toBe(SEARCH_INDEX_MIN_ROWS * 4); // nothing known yet
    // 0.1 ms a row: 200 rows took 20 ms, so the next batch shrinks to the minimum.
    expect(batch()).toBe(SEARCH_INDEX_MIN_ROWS);
    // Cheap rows (1 µs): the estimate moves toward them and the batches grow, up to the cap.
    costMsPerRow = 0.001;
    const sizes: number[] = [];
    while (fts(s).length < messageIds(s).length) sizes.push(batch());
    expect(Math.max(...sizes)).toBe(SEARCH_INDEX_BATCH_ROWS);
    for (let i = 1; i < sizes.length; i++) expect(sizes[i]!).toBeGreaterThanOrEqual(sizes[i - 1]!);
    expect(fts(s)).toEqual(messageIds(s));
    db.run("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')");
  });
});
