import { afterEach, describe, expect, it } from 'vitest';
import { makeChannel, makeUser } from '../../../test/helpers/factories';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server';
import { QUIET_AFTER_MS } from '../../http/activity';
import { mergeSearchIndex } from './search-index';

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
    for (let i = 0; i < 10; i++)
      await s.request('POST', '/message', { token: channel.token, json: { message: `m ${i}` } });
    const before = segments(s);
    await s.server.scheduler.runNow('search-index-merge');
    expect(segments(s)).toBe(before);
    s.clock.advance(QUIET_AFTER_MS);
    await s.server.scheduler.runNow('search-index-merge');
    expect(segments(s)).toBeLessThan(before);
  });
});
