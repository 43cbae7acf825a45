/**
 * Profiling aid (not a benchmark): opens a copy of a data set (BENCH_DATASET, as scale.bench.ts leaves
 * it) with the store alone and prints how long openStore takes (snapshot load + journal replay).
 *   BENCH_DATASET=/tmp/belfry-ds npx tsx test/bench/startup-phases.ts
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBenchStore } from './lib';

const source = process.env.BENCH_DATASET;
if (!source) throw new Error('BENCH_DATASET is required');
const dir = mkdtempSync(join(tmpdir(), 'belfry-phases-'));
try {
  cpSync(source, dir, { recursive: true });
  const t0 = performance.now();
  const store = await openBenchStore(dir);
  const opened = performance.now() - t0;
  console.log(`openStore ${opened.toFixed(0)} ms`);
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
