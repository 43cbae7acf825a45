import { describe, expect, it } from 'vitest';
import { evalJsonPath, MISSING, parseJsonPath } from './json-path';

const doc = {
  status: 'ok',
  data: { items: [{ id: 7, 'odd.key': true }, { id: 8 }], 'with space': null },
  list: [[1, 2], [3]],
};

describe('parseJsonPath', () => {
  it('parses $, .key, ["key"] and [n]', () => {
    expect(parseJsonPath('$')).toEqual([]);
    expect(parseJsonPath('$.data.items[1].id')).toEqual(['data', 'items', 1, 'id']);
    expect(parseJsonPath('$["data"]["with space"]')).toEqual(['data', 'with space']);
    expect(parseJsonPath('$.a["q\\"uote"]')).toEqual(['a', 'q"uote']);
  });
  it('takes the template form without $', () => {
    expect(parseJsonPath('data.items[0].id')).toEqual(['data', 'items', 0, 'id']);
    expect(parseJsonPath('token')).toEqual(['token']);
  });
  it('rejects wildcards, filters, negative indexes and dangling dots', () => {
    for (const p of ['$.items[*]', '$..id', '$.items[-1]', '$.items[?(@.id)]', '$.', '$x', 'a..b', ''])
      expect(parseJsonPath(p), p).toHaveProperty('error');
    expect(parseJsonPath('a.b', { requireRoot: true })).toEqual({ error: 'must start with $' });
  });
});

describe('evalJsonPath', () => {
  it('finds values, including null and falsy ones', () => {
    expect(evalJsonPath(doc, '$')).toBe(doc);
    expect(evalJsonPath(doc, '$.status')).toBe('ok');
    expect(evalJsonPath(doc, '$.data.items[1].id')).toBe(8);
    expect(evalJsonPath(doc, '$.data.items[0]["odd.key"]')).toBe(true);
    expect(evalJsonPath(doc, '$.data["with space"]')).toBeNull();
    expect(evalJsonPath(doc, '$.list[1][0]')).toBe(3);
  });
  it('yields MISSING for a missing step', () => {
    for (const p of ['$.nope', '$.data.items[2]', '$.status.length', '$.list.0', '$.data.items.id', '$.x[0]'])
      expect(evalJsonPath(doc, p), p).toBe(MISSING);
    expect(evalJsonPath('text', '$.a')).toBe(MISSING);
    expect(evalJsonPath({ a: 1 }, '$.toString')).toBe(MISSING);
  });
});
