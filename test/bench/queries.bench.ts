/**
 * Per-query costs of the hot lookups in this sql.js build, in µs per execution (prepared once, as the
 * store's statement cache does). It keeps the finding that shaped the auth resolvers measurable: a JOIN
 * costs ~15 µs per joined table per execution here, while the same lookup as scalar subqueries by
 * primary key costs ~1 µs each. Run alone: `npm run bench -- queries`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tokenDigest } from '../../server/lib/tokens';
import { openBenchStore, type Result, round, seedFixture } from './lib';

const QUERIES: Record<string, string> = {
  key_by_digest: 'SELECT id, channel_id, can_read, can_write FROM channel_keys WHERE token_digest = ?',
  key_channel_user_join: `SELECT k.id, k.channel_id, c.user_id, u.verified, COALESCE(NULLIF(k.name, ''), c.name) AS label
       FROM channel_keys k JOIN channels c ON c.id = k.channel_id JOIN users u ON u.id = c.user_id
      WHERE k.token_digest = ?`,
  key_channel_user_subqueries: `SELECT k.id, k.channel_id,
       (SELECT user_id FROM channels WHERE id = k.channel_id) AS user_id,
       (SELECT verified FROM users WHERE id = (SELECT user_id FROM channels WHERE id = k.channel_id)) AS verified,
       COALESCE(NULLIF(k.name, ''), (SELECT name FROM channels WHERE id = k.channel_id)) AS label
      FROM channel_keys k WHERE k.token_digest = ?`,
};

export async function run(): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'belfry-bench-q-'));
  const store = await openBenchStore(dir);
  try {
    const fx = seedFixture(store);
    const digest = tokenDigest(fx.appToken);
    const out: Result = {};
    for (const [name, sql] of Object.entries(QUERIES)) {
      const expected = store.db.first(sql, [digest]);
      if (!expected) throw new Error(`${name}: no row`);
      for (let i = 0; i < 2_000; i++) store.db.first(sql, [digest]);
      const n = 20_000;
      const t0 = performance.now();
      for (let i = 0; i < n; i++) store.db.first(sql, [digest]);
      out[`${name}_us`] = round(((performance.now() - t0) * 1000) / n, 2);
    }
    return out;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
