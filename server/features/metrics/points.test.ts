import { describe, expect, it } from 'vitest';
import { parseJsonBody, parseTime, tagsText } from './points';
import { chunks } from './store';

describe('metric points', () => {
  it('parseTime takes RFC 3339 with a zone or unix seconds', () => {
    expect(parseTime('2026-01-15T12:00:00Z')).toBe(Date.UTC(2026, 0, 15, 12));
    expect(parseTime('2026-01-15T13:00:00.250+01:00')).toBe(Date.UTC(2026, 0, 15, 12) + 250);
    expect(parseTime(1_768_478_400.5)).toBe(1_768_478_400_500);
    expect(parseTime('2026-01-15T12:00:00')).toBeUndefined();
    expect(parseTime('1768478400')).toBeUndefined();
  });

  it('tagsText is the same for any key order', () => {
    const a = parseJsonBody({ name: 'x', value: 1, tags: { b: '2', a: '1' } }, 0);
    const b = parseJsonBody({ name: 'x', value: 1, tags: { a: '1', b: '2' } }, 0);
    if (typeof a === 'string' || typeof b === 'string') throw new Error('parse failed');
    expect(tagsText(a.points[0]!.tags)).toBe('{"a":"1","b":"2"}');
    expect(tagsText(b.points[0]!.tags)).toBe('{"a":"1","b":"2"}');
  });

  it('chunks splits a batch into 256-row statements and powers of two', () => {
    expect(chunks(1000)).toEqual([256, 256, 256, 128, 64, 32, 8]);
    expect(chunks(1)).toEqual([1]);
    expect(chunks(0)).toEqual([]);
    for (const n of [3, 255, 257, 999]) expect(chunks(n).reduce((a, b) => a + b, 0)).toBe(n);
  });
});
