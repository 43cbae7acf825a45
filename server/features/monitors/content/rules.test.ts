import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../http/errors';
import type { Extraction } from './extract';
import { changedEvent, compilePattern, evaluateRule, parseRuleValue } from './rules';

const ex = (text: string, number: number | null = null, matched = 1): Extraction => ({
  text,
  number,
  matched,
});

function badRequest(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
    return (e as ApiError).description;
  }
  throw new Error('expected a 400');
}

describe('content rules', () => {
  it('fails every rule with "selector matched nothing" when nothing matched', () => {
    for (const rule of [
      'changed',
      'contains',
      'notContains',
      'matches',
      'numberAbove',
      'numberBelow',
    ] as const)
      expect(evaluateRule(rule, rule.startsWith('number') ? 1 : 'x', ex('', null, 0), 'old')).toEqual({
        ok: false,
        error: 'selector matched nothing',
      });
  });

  it('contains and notContains compare the plain text, case-sensitively', () => {
    expect(evaluateRule('contains', 'In stock', ex('Status: In stock'))).toEqual({ ok: true });
    expect(evaluateRule('contains', 'in stock', ex('Status: In stock'))).toEqual({
      ok: false,
      error: 'text does not contain "in stock"',
    });
    expect(evaluateRule('notContains', 'Sold out', ex('In stock'))).toEqual({ ok: true });
    expect(evaluateRule('notContains', 'Sold out', ex('Sold out today'))).toEqual({
      ok: false,
      error: 'text contains "Sold out"',
    });
  });

  it('matches takes /source/flags or a bare regex source', () => {
    expect(evaluateRule('matches', '/^v\\d+\\.\\d+$/', ex('v1.24'))).toEqual({ ok: true });
    expect(evaluateRule('matches', '/ERROR/i', ex('an error occurred'))).toEqual({ ok: true });
    expect(evaluateRule('matches', 'a.c', ex('abc'))).toEqual({ ok: true }); // a regex, not a substring
    expect(evaluateRule('matches', 'a.c', ex('a-b'))).toEqual({
      ok: false,
      error: 'text does not match /a.c/',
    });
    expect(evaluateRule('matches', '/^ok$/m', ex('fine'))).toEqual({
      ok: false,
      error: 'text does not match /^ok$/m',
    });
    // g would make test() stateful across checks
    expect(compilePattern('/x/g').flags).toBe('');
  });

  it('number rules compare the first number and name it in the error', () => {
    expect(evaluateRule('numberAbove', 10, ex('12 left', 12))).toEqual({ ok: true });
    expect(evaluateRule('numberAbove', 12, ex('12 left', 12))).toEqual({
      ok: false,
      error: '12 is not above 12',
    });
    expect(evaluateRule('numberBelow', 100, ex('€ 99.5', 99.5))).toEqual({ ok: true });
    expect(evaluateRule('numberBelow', 99.5, ex('€ 99.5', 99.5))).toEqual({
      ok: false,
      error: '99.5 is not below 99.5',
    });
    expect(evaluateRule('numberAbove', 1, ex('sold out'))).toEqual({
      ok: false,
      error: 'no number in "sold out"',
    });
    const long = 'x'.repeat(500);
    expect(evaluateRule('numberBelow', 1, ex(long)).error).toBe(`no number in "${'x'.repeat(199)}…"`);
  });

  it('changed reports a difference from a stored baseline and never fails on it', () => {
    expect(evaluateRule('changed', null, ex('a'), null)).toEqual({ ok: true, changed: false });
    expect(evaluateRule('changed', null, ex('a'), undefined)).toEqual({ ok: true, changed: false });
    expect(evaluateRule('changed', null, ex('a'), 'a')).toEqual({ ok: true, changed: false });
    expect(evaluateRule('changed', null, ex('b'), 'a')).toEqual({ ok: true, changed: true });
  });

  it('builds the changed message with each side cut to 1,000 characters', () => {
    expect(changedEvent('Price', '€ 10', '€ 12')).toEqual({
      event: 'changed',
      title: 'Price changed',
      message: '€ 10\n→\n€ 12',
    });
    const m = changedEvent('P', 'a'.repeat(1_500), 'b').message;
    expect(m).toBe(`${'a'.repeat(999)}…\n→\nb`);
  });

  it('validates value per rule with 400 value: texts', () => {
    expect(parseRuleValue('changed', undefined)).toBeNull();
    expect(badRequest(() => parseRuleValue('contains', undefined))).toBe('value: required for rule contains');
    expect(badRequest(() => parseRuleValue('matches', null))).toBe('value: required for rule matches');
    expect(badRequest(() => parseRuleValue('numberAbove', ''))).toBe('value: required for rule numberAbove');
    expect(badRequest(() => parseRuleValue('numberAbove', 'ten'))).toBe('value: must be a number');
    expect(badRequest(() => parseRuleValue('numberBelow', true))).toBe('value: must be a number');
    expect(badRequest(() => parseRuleValue('contains', { a: 1 }))).toBe(
      'value: must be a string or a number',
    );
    expect(badRequest(() => parseRuleValue('contains', 'x'.repeat(1_001)))).toBe(
      'value: at most 1000 characters',
    );
    expect(badRequest(() => parseRuleValue('matches', '/(unclosed/'))).toMatch(
      /^value: invalid regular expression \(/,
    );
    expect(badRequest(() => parseRuleValue('matches', '/a/zz'))).toMatch(
      /^value: invalid regular expression \(/,
    );
    expect(badRequest(() => parseRuleValue('matches', '[a-'))).toMatch(
      /^value: invalid regular expression \(/,
    );
    expect(parseRuleValue('numberAbove', '42.5')).toBe(42.5);
    expect(parseRuleValue('numberBelow', -3)).toBe(-3);
    expect(parseRuleValue('contains', 42)).toBe('42');
    expect(parseRuleValue('matches', '/ok/i')).toBe('/ok/i');
  });
});
