import { describe, expect, it } from 'vitest';
import {
  type Assertions,
  checkResponse,
  compilePattern,
  type JsonAssertion,
  statusMatches,
} from './assertions';

const none: Assertions = { maxResponseMs: null, bodyContains: null, bodyNotContains: null, json: [] };
const body = JSON.stringify({
  n: 5,
  s: 'Hello World',
  list: [1, 'two', { k: 3 }],
  obj: { a: [1] },
  nil: null,
});

function holds(a: JsonAssertion): boolean | string {
  const [, r] = checkResponse({ statusCode: 200, body, responseTimeMs: 1 }, ['200'], { ...none, json: [a] });
  return r!.ok || r!.detail;
}

describe('json assertions', () => {
  it('eq/ne use JSON equality', () => {
    expect(holds({ path: '$.obj', op: 'eq', value: { a: [1] } })).toBe(true);
    expect(holds({ path: '$.nil', op: 'eq', value: null })).toBe(true);
    expect(holds({ path: '$.n', op: 'eq', value: '5' })).toBe('json $.n: expected eq "5", got 5');
    expect(holds({ path: '$.n', op: 'ne', value: 6 })).toBe(true);
    expect(holds({ path: '$.x', op: 'ne', value: 6 })).toBe('json $.x: expected ne 6, got missing');
  });
  it('gt..lte compare numbers only', () => {
    expect(holds({ path: '$.n', op: 'gt', value: 4 })).toBe(true);
    expect(holds({ path: '$.n', op: 'gte', value: 5 })).toBe(true);
    expect(holds({ path: '$.n', op: 'lt', value: 5 })).toBe('json $.n: expected lt 5, got 5');
    expect(holds({ path: '$.n', op: 'lte', value: 5 })).toBe(true);
    expect(holds({ path: '$.s', op: 'gt', value: 1 })).toBe('json $.s: expected gt 1, got "Hello World"');
  });
  it('contains is a substring of a string or a member of an array', () => {
    expect(holds({ path: '$.s', op: 'contains', value: 'World' })).toBe(true);
    expect(holds({ path: '$.s', op: 'contains', value: 'world' })).toBe(
      'json $.s: expected contains "world", got "Hello World"',
    );
    expect(holds({ path: '$.list', op: 'contains', value: { k: 3 } })).toBe(true);
    expect(holds({ path: '$.list', op: 'contains', value: 'tw' })).toBe(
      'json $.list: expected contains "tw", got [1,"two",{"k":3}]',
    );
  });
  it('exists/notExists and matches (a §0.1 pattern on a string)', () => {
    expect(holds({ path: '$.nil', op: 'exists' })).toBe(true);
    expect(holds({ path: '$.list[3]', op: 'exists' })).toBe('json $.list[3]: expected exists, got missing');
    expect(holds({ path: '$.n', op: 'notExists' })).toBe('json $.n: expected notExists, got 5');
    expect(holds({ path: '$.s', op: 'matches', value: 'hello' })).toBe(true);
    expect(holds({ path: '$.s', op: 'matches', value: '/^World/' })).toBe(
      'json $.s: expected matches "/^World/", got "Hello World"',
    );
    expect(holds({ path: '$.n', op: 'matches', value: '5' })).toBe('json $.n: expected matches "5", got 5');
  });
  it('matches gives up on a catastrophic pattern after the time limit instead of stalling the server', () => {
    const evil = JSON.stringify({ s: `${'a'.repeat(28)}b` });
    const started = performance.now();
    const [, r] = checkResponse({ statusCode: 200, body: evil, responseTimeMs: 1 }, ['200'], {
      ...none,
      json: [{ path: '$.s', op: 'matches', value: '/(a+)+$/' }],
    });
    expect(r).toEqual({
      name: 'json $.s',
      ok: false,
      detail: 'json $.s: pattern /(a+)+$/ took longer than 50 ms',
    });
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('status and patterns', () => {
  it('matches single statuses and ranges', () => {
    expect(statusMatches(204, ['200-299'])).toBe(true);
    expect(statusMatches(304, ['200-299', '304'])).toBe(true);
    expect(statusMatches(300, ['200-299'])).toBe(false);
  });
  it('compiles a plain string as a case-insensitive substring and /…/flags as a RegExp', () => {
    expect(compilePattern('ERROR')?.('an error here')).toEqual({ ok: true, match: true });
    expect(compilePattern('a.c')?.('abc')).toEqual({ ok: true, match: false });
    expect(compilePattern('/a.c/')?.('abc')).toEqual({ ok: true, match: true });
    expect(compilePattern('/ABC/i')?.('abc')).toEqual({ ok: true, match: true });
    expect(compilePattern('/(/')).toBeNull();
  });
});
