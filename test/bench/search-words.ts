/**
 * Measurement aid (not part of `npm run bench`): the search query in process on a data set written by
 * servers/seed-large.ts, before (every last word a prefix, as until issue 22's follow-up) and after
 * (searchIndexed: the last word a prefix only when it is not a whole word in the scope), alternating
 * per query in one run (BENCH_CHANNEL=<id>: within one channel). `BENCH_DATA_DIR=<seeded copy> node --import tsx test/bench/search-words.ts`
 * (the data dir is opened as a store: use a copy). Prints p50 / p99 / max ms and the rows found.
 */
import { ftsQuery, searchIndexed } from '../../server/features/messages/service';
import { searchMessages } from '../../server/features/messages/store';
import { openBenchStore, percentile, round } from './lib';

const dataDir = process.env.BENCH_DATA_DIR;
if (!dataDir) throw new Error('BENCH_DATA_DIR is required');
const RUNS = Number(process.env.BENCH_RUNS ?? 21);
const QUERIES = [
  'database',
  'host137',
  'kafka timeout',
  'backup network',
  'job items host137',
  'items processed code',
  'job items',
  'database host1',
  'backup netw',
  'database hos',
  'database ho',
];
const store = await openBenchStore(dataDir);
// BENCH_CHANNEL=<id>: the scope of a search with appId (one channel) instead of the owner's all.
const channel = Number(process.env.BENCH_CHANNEL ?? 0);
const scope = channel > 0 ? { ownerAll: null, channelIds: [channel] } : { ownerAll: 1, channelIds: [] };
const take = 101;
const before = (q: string) => searchMessages(store.db, scope, ftsQuery(q)!.prefix, 0, take).length;
const after = (q: string) => searchIndexed(store.db, scope, q, 0, take).length;
console.log('| query | before p50 / p99 / max ms (rows) | after p50 / p99 / max ms (rows) |\n|---|---|---|');
for (const q of QUERIES) {
  const ms: [number[], number[]] = [[], []];
  const rows = [0, 0];
  for (let i = 0; i < RUNS; i++)
    for (const [k, f] of (i % 2 === 0 ? [0, 1] : [1, 0]).map((k) => [k, k === 0 ? before : after] as const)) {
      const t0 = performance.now();
      rows[k] = f(q);
      ms[k].push(performance.now() - t0);
    }
  const fmt = (k: number) =>
    `${round(percentile(ms[k]!, 50), 1)} / ${round(percentile(ms[k]!, 99), 1)} / ${round(Math.max(...ms[k]!), 1)} (${rows[k]})`;
  console.log(`| \`${q}\` | ${fmt(0)} | ${fmt(1)} |`);
}
process.exit(0);
