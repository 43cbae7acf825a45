import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alternate,
  interleavedLatency,
  median,
  pairedDifference,
  pairedRatio,
  percentile,
  summariseRounds,
} from './lib';

describe('bench statistics', () => {
  it('median of odd and even lists, without reordering the input', () => {
    const input = [5, 1, 3];
    expect(median(input)).toBe(3);
    expect(input).toEqual([5, 1, 3]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('percentile is the nearest-rank value', () => {
    const values = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(500);
    expect(percentile(values, 99)).toBe(990);
    expect(percentile([7], 99)).toBe(7);
  });

  it('rounds: one noisy round moves the pooled p99 but not the median of the rounds', () => {
    const calm = Array.from({ length: 100 }, (_, i) => 1 + i / 100); // p99 1.98
    const noisy = [...calm.slice(0, 90), ...Array.from({ length: 10 }, () => 50)];
    const s = summariseRounds([calm, calm, noisy, calm, calm]);
    expect(s.roundP99).toEqual([1.98, 1.98, 50, 1.98, 1.98]);
    expect(s.medianRoundP99).toBe(1.98);
    expect(s.p99).toBe(50);
    expect(s.p50).toBeCloseTo(1.5, 1);
  });

  it('paired ratio: the median of the per-round ratios, not the ratio of the medians', () => {
    // Round 2 is slow for both (a neighbour's burst): paired, it does not count against either side.
    expect(pairedRatio([900, 300, 1000], [1000, 400, 1250])).toBe(0.8);
    // Ratio of the medians would be 900 / 1000 = 0.9.
    expect(pairedRatio([900, 100, 1000], [1000, 400, 1250], 3)).toBe(0.8);
    expect(pairedRatio([1, 2, 3], [2, 0])).toBe(0.5);
    expect(pairedRatio([1], [0])).toBeNaN();
    expect(pairedRatio([], [])).toBeNaN();
  });

  it('paired difference: the median of the per-round differences', () => {
    // The floor's noisy round 1 lifts Belfry's too: paired, it cancels out.
    expect(pairedDifference([7.3, 3.56, 1.57, 4.34, 3.97], [4.11, 2.22, 0.75, 3.54, 1.88])).toBe(1.34);
    // The difference of the medians would be 3.97 − 2.22 = 1.75.
    expect(pairedDifference([1, 2], [2])).toBe(-1);
    expect(pairedDifference([], [1])).toBeNaN();
  });

  it('alternate: forward on even rounds, backward on odd ones, without touching the input', () => {
    const names = ['belfry', 'reference', 'bare'];
    expect(alternate(names, 0)).toEqual(['belfry', 'reference', 'bare']);
    expect(alternate(names, 1)).toEqual(['bare', 'reference', 'belfry']);
    expect(names).toEqual(['belfry', 'reference', 'bare']);
  });
});

describe('interleavedLatency', () => {
  const seen: string[] = [];
  const servers: Server[] = [];
  const ports: number[] = [];
  beforeAll(async () => {
    for (const name of ['a', 'b']) {
      const s = createServer((req, res) => {
        seen.push(`${name}${req.url}`);
        res.statusCode = req.url === '/missing' ? 404 : 200;
        res.end('ok');
      });
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      servers.push(s);
      ports.push((s.address() as { port: number }).port);
    }
  });
  afterAll(() => {
    for (const s of servers) s.close();
  });

  it('alternates request by request, counts rounds apart from the warm-up, checks each answer', async () => {
    seen.length = 0;
    let checked = 0;
    const [a, b] = await interleavedLatency(
      [
        { port: ports[0]!, make: (n) => ({ path: `/${n}` }), check: () => void checked++ },
        { port: ports[1]!, make: (n) => ({ path: `/${n}` }) },
      ],
      { rounds: 3, count: 4, warmup: 2 },
    );
    expect(seen.slice(0, 6)).toEqual(['a/0', 'b/0', 'a/1', 'b/1', 'a/2', 'b/2']);
    expect(seen).toHaveLength(2 * (2 + 3 * 4));
    expect(checked).toBe(2 + 3 * 4);
    expect(a!.roundP99).toHaveLength(3);
    expect(b!.roundP99).toHaveLength(3);
    for (const v of [...a!.roundP99, ...b!.roundP99]) expect(v).toBeGreaterThan(0);
    // The warm-up is timed apart: its p99 is reported, never pooled into the rounds.
    expect(a!.warmupP99).toBeGreaterThan(0);
    const [none] = await interleavedLatency([{ port: ports[0]!, make: () => ({ path: '/' }) }], {
      rounds: 1,
      count: 1,
      warmup: 0,
    });
    expect(none!.warmupP99).toBeNaN();
  });

  it('fails on a page its check refuses, and on an answer that is not 200', async () => {
    await expect(
      interleavedLatency(
        [
          {
            port: ports[0]!,
            make: () => ({ path: '/x' }),
            check: () => {
              throw new Error('bad page');
            },
          },
        ],
        { rounds: 1, count: 1, warmup: 0 },
      ),
    ).rejects.toThrow('bad page');
    await expect(
      interleavedLatency([{ port: ports[1]!, make: () => ({ path: '/missing' }) }], {
        rounds: 1,
        count: 1,
        warmup: 0,
      }),
    ).rejects.toThrow('answered 404');
  });
});
