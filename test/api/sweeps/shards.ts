import { readdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { MountedRoute } from '../../helpers/routes';

/**
 * The sweeps (bad input, ownership) reach every mounted route; each is split into shards that run as test
 * files of their own (`test/api/<sweep>.shard-<n>.test.ts`), so vitest's workers run them side by side.
 * A route's shard is a hash of its name: computed, never listed, so a new route lands in a shard without
 * anyone being told, and adding one never moves the others.
 */
export const SWEEP_SHARDS = { 'bad-input': 4, ownership: 3 } as const;
export type Sweep = keyof typeof SWEEP_SHARDS;

const API_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

/** FNV-1a of the route's name: stable across runs, machines and Node versions. */
function hash(route: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < route.length; i++) {
    h ^= route.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The shard (1..n) a route belongs to in a sweep. */
export function shardOf(sweep: Sweep, route: string): number {
  return (hash(route) % SWEEP_SHARDS[sweep]) + 1;
}

/** The shard a shard file runs, read from its own name: `bad-input.shard-2.test.ts` → 2. */
export function shardFromFile(sweep: Sweep, fileUrl: string): number {
  const name = basename(fileURLToPath(fileUrl));
  const m = new RegExp(`^${sweep}\\.shard-(\\d+)\\.test\\.ts$`).exec(name);
  if (!m) throw new Error(`${name} is not a ${sweep} shard file (${sweep}.shard-<n>.test.ts)`);
  return Number(m[1]);
}

/** The shard numbers that have a file in test/api. */
function shardFiles(sweep: Sweep): number[] {
  return readdirSync(API_DIR)
    .map((f) => new RegExp(`^${sweep}\\.shard-(\\d+)\\.test\\.ts$`).exec(f)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * The one place that proves a sweep reaches every route: every mounted route is in exactly one shard,
 * every shard has its file (and no file runs a shard that does not exist), and no shard is empty.
 * Each shard file runs it, so a sweep whose files were renamed or miscounted fails wherever it runs.
 */
export function expectShardsCoverEveryRoute(sweep: Sweep, routes: MountedRoute[]): void {
  const n = SWEEP_SHARDS[sweep];
  const all = Array.from({ length: n }, (_, i) => i + 1);
  expect(shardFiles(sweep)).toEqual(all);
  const byShard = all.map((s) => routes.filter((r) => shardOf(sweep, r.route) === s).map((r) => r.route));
  // Exactly one shard each: the shards together are the route list, with no route twice.
  expect(byShard.flat().sort()).toEqual(routes.map((r) => r.route).sort());
  for (const [i, list] of byShard.entries())
    expect(list.length, `${sweep} shard ${i + 1}`).toBeGreaterThan(0);
}

/** The routes of one shard. */
export function shardRoutes(sweep: Sweep, shard: number, routes: MountedRoute[]): MountedRoute[] {
  return routes.filter((r) => shardOf(sweep, r.route) === shard);
}

/** Runs `fn` over `items` with at most `limit` at once; results in the order of `items`. */
export async function eachBounded<T, R>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
