/**
 * Web scripts (issue 18): script ingest (`POST /script/{token}`, batches of 20 events as the snippet sends
 * them, `text/plain`) in events per second, with durable `POST /message` running at the same time in the
 * same child server; its p99 then against its p99 alone. Target: ≥ 2,000 events/s.
 * Batches mix realistic Chrome and Firefox stacks over 40 fingerprints, so most events join an existing
 * issue (the steady state) and each issue's event list is trimmed to 100.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueToken } from '../../server/lib/tokens';
import {
  BENCH_DIR,
  closedLoopLoad,
  openBenchStore,
  type Result,
  round,
  seedFixture,
  spawnServer,
} from './lib';

const SCRIPTS = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SENDERS = 8;
const MESSAGE_SENDERS = 4;
const BATCH = 20;

function event(i: number, n: number) {
  const k = i % 40;
  const firefox = k % 2 === 1;
  const file = `https://shop.example/static/js/main.${(n % 3).toString(16).padStart(8, 'a')}.js`;
  const stack = firefox
    ? `handler${k}@${file}:1:${1000 + k}\nrender@${file}:1:500\n`
    : `TypeError: Cannot read properties of undefined (reading 'p${k}')\n    at Component${k} (${file}:2:${10_000 + k})\n    at renderWithHooks (https://shop.example/static/js/vendor.8d7e6f5a.js:1:83421)\n    at Ki (https://shop.example/static/js/vendor.8d7e6f5a.js:2:64231)`;
  return {
    type: k % 5 === 0 ? 'rejection' : 'error',
    message: firefox
      ? `TypeError: handler${k} is not a function`
      : `Uncaught TypeError: Cannot read properties of undefined (reading 'p${k}')`,
    stack,
    url: `https://shop.example/products/${n}?ref=bench`,
    userAgent:
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    at: new Date().toISOString(),
    breadcrumbs: [
      { at: new Date().toISOString(), type: 'click', message: 'button#buy "Add to cart"' },
      { at: new Date().toISOString(), type: 'fetch', message: 'POST /api/cart 500' },
      { at: new Date().toISOString(), type: 'navigation', message: '/products -> /cart' },
    ],
  };
}

export async function run(): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'belfry-bench-ws-'));
  try {
    const store = await openBenchStore(dir);
    const fx = seedFixture(store);
    const tokens: string[] = [];
    const now = Date.now();
    store.db.transaction(() => {
      for (let i = 0; i < SCRIPTS; i++) {
        const { token, digest, hint } = issueToken('T');
        tokens.push(token);
        store.db.run(
          `INSERT INTO web_scripts (user_id, channel_id, name, status, status_since, token_digest, token_hint, created_at)
           VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)`,
          [fx.userId, fx.channelIds[0]!, `site ${i}`, now, digest, hint, now],
        );
      }
    });
    await store.close();
    const server = await spawnServer(join(BENCH_DIR, 'servers', 'belfry.ts'), { BENCH_DATA_DIR: dir });
    try {
      let next = 0;
      const message = () =>
        closedLoopLoad({
          port: server.port,
          concurrency: MESSAGE_SENDERS,
          seconds: SECONDS,
          warmupSeconds: 1,
          make: (w, n) => ({
            method: 'POST',
            path: `/message?token=${fx.appToken}`,
            body: JSON.stringify({ title: `sender ${w}`, message: `Backup run ${n} finished.`, priority: 5 }),
          }),
        });
      const ingest = () =>
        closedLoopLoad({
          port: server.port,
          concurrency: SENDERS,
          seconds: SECONDS,
          warmupSeconds: 1,
          make: (w, n) => {
            const b = next++;
            return {
              method: 'POST',
              path: `/script/${tokens[b % tokens.length]}`,
              headers: { 'Content-Type': 'text/plain;charset=UTF-8' },
              body: JSON.stringify({
                flushReason: 'interval',
                events: Array.from({ length: BATCH }, (_, i) => event(w * 7 + n + i, b)),
              }),
            };
          },
        });
      const alone = await message();
      const [script, alongside] = await Promise.all([ingest(), message()]);
      const events = script.rps * BATCH;
      return {
        'script ingest (events/s, batches of 20, 8 connections)': round(events, 0),
        'script ingest batch p99 (ms)': round(script.p99, 1),
        'script ingest errors': script.errors,
        'POST /message p99 alone (ms)': round(alone.p99, 1),
        'POST /message p99 during ingest (ms)': round(alongside.p99, 1),
        'POST /message req/s during ingest': round(alongside.rps, 0),
      };
    } finally {
      await server.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
