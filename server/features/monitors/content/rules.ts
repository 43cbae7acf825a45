import { errors } from '../../../http/errors';
import { compileUserRegex, safeTest } from '../../../lib/safe-regex';
import type { Extraction } from './extract';

/** The six rules of a content monitor (§2.3). */
export const CONTENT_RULES = [
  'changed',
  'contains',
  'notContains',
  'matches',
  'numberAbove',
  'numberBelow',
] as const;
export type ContentRule = (typeof CONTENT_RULES)[number];

/** Longest `value` (text or regex source). */
export const RULE_VALUE_MAX_CHARS = 1_000;
/** How much of the page text a `no number in "…"` error quotes. */
const QUOTED_TEXT_MAX_CHARS = 200;

export function isContentRule(v: unknown): v is ContentRule {
  return typeof v === 'string' && (CONTENT_RULES as readonly string[]).includes(v);
}

/**
 * `matches`: `/source/flags` is a JS RegExp; any other string is taken whole as a regex source (unlike
 * the pattern fields of §0.1, not a substring). `g` and `y` are dropped: they would make `test` stateful.
 * Throws a 400 `value: …` naming the problem.
 */
export function compilePattern(value: string, field = 'value'): RegExp {
  try {
    return compileUserRegex(value);
  } catch (e) {
    throw errors.badRequest(`${field}: invalid regular expression (${(e as Error).message})`);
  }
}

/** Validates `value` for `rule`: a number for the number rules, else text; `changed` takes none (null). */
export function parseRuleValue(rule: ContentRule, value: unknown, field = 'value'): string | number | null {
  if (rule === 'changed') return null;
  if (value === undefined || value === null || value === '')
    throw errors.badRequest(`${field}: required for rule ${rule}`);
  if (rule === 'numberAbove' || rule === 'numberBelow') {
    const n = typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isFinite(n)) throw errors.badRequest(`${field}: must be a number`);
    return n;
  }
  const text = ruleText(value, field);
  if (rule === 'matches') compilePattern(text, field);
  return text;
}

function ruleText(value: unknown, field: string): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') throw errors.badRequest(`${field}: must be a string or a number`);
  if (value.length > RULE_VALUE_MAX_CHARS)
    throw errors.badRequest(`${field}: at most ${RULE_VALUE_MAX_CHARS} characters`);
  return value;
}

export interface RuleResult {
  ok: boolean;
  /** The §2.3 text of the failure. */
  error?: string;
  /** `changed` only: a previous text exists and differs from this one. */
  changed?: boolean;
}

/**
 * Judges one extraction. `previous` is the stored text (`changed` only; null or undefined = no baseline
 * yet). A selector that matched nothing fails every rule, `changed` included.
 */
export function evaluateRule(
  rule: ContentRule,
  value: string | number | null,
  ex: Extraction,
  previous?: string | null,
): RuleResult {
  if (ex.matched === 0) return { ok: false, error: 'selector matched nothing' };
  const { text } = ex;
  switch (rule) {
    case 'changed':
      return { ok: true, changed: previous !== undefined && previous !== null && previous !== text };
    case 'contains':
      return text.includes(String(value))
        ? { ok: true }
        : { ok: false, error: `text does not contain "${value}"` };
    case 'notContains':
      return text.includes(String(value)) ? { ok: false, error: `text contains "${value}"` } : { ok: true };
    case 'matches': {
      const re = compilePattern(String(value));
      const r = safeTest(re, text);
      if (!r.ok) return { ok: false, error: r.error };
      return r.match ? { ok: true } : { ok: false, error: `text does not match ${re}` };
    }
    case 'numberAbove':
    case 'numberBelow': {
      if (ex.number === null) return { ok: false, error: `no number in "${quote(text)}"` };
      const limit = Number(value);
      if (rule === 'numberAbove')
        return ex.number > limit ? { ok: true } : { ok: false, error: `${ex.number} is not above ${limit}` };
      return ex.number < limit ? { ok: true } : { ok: false, error: `${ex.number} is not below ${limit}` };
    }
  }
}

function quote(text: string): string {
  return text.length > QUOTED_TEXT_MAX_CHARS ? `${text.slice(0, QUOTED_TEXT_MAX_CHARS - 1)}…` : text;
}

/** Title and message of the §2.5 `changed` event; each text is cut to 1,000 characters. */
export function changedEvent(
  name: string,
  old: string,
  now: string,
): { event: 'changed'; title: string; message: string } {
  const cut = (s: string) => (s.length > 1_000 ? `${s.slice(0, 999)}…` : s);
  return { event: 'changed', title: `${name} changed`, message: `${cut(old)}\n→\n${cut(now)}` };
}
