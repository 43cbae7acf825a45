/**
 * Status pages (issue 14): a page with 50 services (heartbeats) and 90 days of history each (daily
 * aggregates, and three down incidents per service among its intervals). `GET /status/{slug}/summary`
 * (target p99 ≤ 10 ms) and the HTML page `GET /status/{slug}` (target p99 ≤ 20 ms), each measured request
 * by request interleaved with a raw node:http server sending the same bytes (servers/static.ts), so the
 * machine's floor is measured in the same moments, not guessed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../../server/db/database';
import { issueToken } from '../../server/lib/tokens';
import {
  BENCH_DIR,
  type BytesResult,
  formatRounds,
  httpGetBytes,
  interleavedLatency,
  openBenchStore,
  pairedDifference,
  type Result,
  round,
  seedFixture,
  spawnServer,
} from './lib';

const SERVICES = 50;
const DAYS = 90;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const WARMUP = 50;
const DAY_MS = 86_400_000;
const SLUG = 'bench-status';

/** 50 heartbeats `up` on the page's channel, each with 90 daily rows and intervals with three incidents. */
export function seedPage(db: Db, userId: number, channelId: number): void {
  const now = Date.now();
  const today = Math.floor(now / DAY_MS);
  db.transaction(() => {
    db.run(
      `INSERT INTO status_pages (user_id, channel_id, slug, title, description, enabled, lang, branding_hidden, created_at)
       VALUES (?, ?, ?, 'Bench status', 'Fifty services', 1, 'en', 0, ?)`,
      [userId, channelId, SLUG, now],
    );
    for (let i = 0; i < SERVICES; i++) {
      const { digest, hint } = issueToken('H');
      const id = db.run(
        `INSERT INTO heartbeats (user_id, channel_id, name, interval_sec, grace_sec, status, status_since,
           token_digest, token_hint, last_ping_at, last_success_at, expected_at, deadline_at, due_at, created_at)
         VALUES (?, ?, ?, 86400, 0, 'up', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          userId,
          channelId,
          `service ${String(i).padStart(2, '0')}`,
          now,
          digest,
          hint,
          now,
          now,
          now + DAY_MS,
          now + DAY_MS,
          now + DAY_MS,
          now - DAYS * DAY_MS,
        ],
      ).lastInsertRowid;
      for (let d = today - DAYS; d < today; d++) {
        const down = (d + i) % 30 === 0 ? 600_000 : 0;
        db.run(
          `INSERT INTO history_days (kind, source_id, day, up_ms, down_ms, rt_sum, rt_count)
           VALUES ('heartbeat', ?, ?, ?, ?, 0, 0)`,
          [id, d, DAY_MS - down, down],
        );
      }
      let at = (today - DAYS) * DAY_MS;
      for (let d = today - DAYS; d < today; d++) {
        if ((d + i) % 30 !== 0) continue;
        const downAt = d * DAY_MS + 3_600_000;
        db.run(
          `INSERT INTO history_intervals (kind, source_id, status, class, start_at, end_at) VALUES
             ('heartbeat', ?, 'up', 'up', ?, ?), ('heartbeat', ?, 'down', 'down', ?, ?)`,
          [id, at, downAt, id, downAt, downAt + 600_000],
        );
        at = downAt + 600_000;
      }
      db.run(
        `INSERT INTO history_intervals (kind, source_id, status, class, start_at, end_at) VALUES ('heartbeat', ?, 'up', 'up', ?, NULL)`,
        [id, at],
      );
    }
  });
}

async function measure(
  work: string,
  port: number,
  path: string,
  check: (r: BytesResult) => void,
): Promise<{ p99: string; pooled: string; floor: string; minus: number }> {
  const sample = await httpGetBytes(new Agent(), port, path);
  check(sample);
  const bodyFile = join(work, `${path.replace(/\W+/g, '-')}.body`);
  await writeFile(bodyFile, sample.body);
  const floorServer = await spawnServer(join(BENCH_DIR, 'servers', 'static.ts'), {
    BENCH_BODY_FILE: bodyFile,
  });
  try {
    const [page, same] = await interleavedLatency(
      [
        { port, make: () => ({ path }), check },
        { port: floorServer.port, make: () => ({ path }) },
      ],
      { rounds: ROUNDS, count: QUERIES, warmup: WARMUP },
    );
    return {
      p99: formatRounds(page!, 2),
      pooled: `${round(page!.p50, 2)} / ${round(page!.p99, 2)} (${sample.body.length} bytes)`,
      floor: formatRounds(same!, 2),
      minus: pairedDifference(page!.roundP99, same!.roundP99),
    };
  } finally {
    await floorServer.kill();
  }
}

export async function run(): Promise<Result> {
  const work = await mkdtemp(join(tmpdir(), 'belfry-bench-status-'));
  try {
    const dir = join(work, 'data');
    const store = await openBenchStore(dir);
    const fx = seedFixture(store);
    seedPage(store.db, fx.userId, fx.channelIds[0]!);
    await store.close();
    const server = await spawnServer(join(BENCH_DIR, 'servers', 'belfry.ts'), { BENCH_DATA_DIR: dir });
    try {
      const result: Result = {};
      const summary = await measure(work, server.port, `/status/${SLUG}/summary`, (r) => {
        const body = JSON.parse(r.body.toString()) as {
          services: { days: unknown[] }[];
          incidents: unknown[];
        };
        if (body.services.length !== SERVICES || body.services.some((s) => s.days.length !== DAYS))
          throw new Error('summary: expected 50 services × 90 days');
        if (body.incidents.length !== 50) throw new Error(`summary: ${body.incidents.length} incidents`);
      });
      result[`GET /status/{slug}/summary (50 × 90 d): p99 per round of ${QUERIES}, median (target ≤ 10)`] =
        summary.p99;
      result['summary pooled p50 / p99 ms'] = summary.pooled;
      result['summary bytes from raw node:http (the floor): p99 per round, median'] = summary.floor;
      result['summary p99 minus the floor’s, per round, median ms'] = summary.minus;
      const marker = Buffer.from('<section data-status=');
      const html = await measure(work, server.port, `/status/${SLUG}`, (r) => {
        let n = 0;
        for (let at = r.body.indexOf(marker); at >= 0; at = r.body.indexOf(marker, at + 1)) n++;
        if (n !== SERVICES) throw new Error(`page: ${n} sections`);
      });
      result[`GET /status/{slug} HTML (50 × 90 d): p99 per round of ${QUERIES}, median (target ≤ 20)`] =
        html.p99;
      result['HTML pooled p50 / p99 ms'] = html.pooled;
      result['HTML bytes from raw node:http (the floor): p99 per round, median'] = html.floor;
      result['HTML p99 minus the floor’s, per round, median ms'] = html.minus;
      return result;
    } finally {
      await server.stop();
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
