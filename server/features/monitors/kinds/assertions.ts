import { isDeepStrictEqual } from 'node:util';
import { followPath, MISSING, type PathStep, parseJsonPath } from '../../../lib/json-path';
import { compileUserRegex, RegexBudget, type SafeTest } from '../../../lib/safe-regex';
import { arr, bad, field, int, obj, oneOf, str } from './validate';

/**
 * The response checks shared by `http-monitor` and workflow steps (§2.3): expected status, response time,
 * body substrings and JSON assertions, evaluated in that order; the first failing one is the error.
 */
export const JSON_OPS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'contains',
  'exists',
  'notExists',
  'matches',
] as const;
export type JsonOp = (typeof JSON_OPS)[number];
export interface JsonAssertion {
  path: string;
  op: JsonOp;
  value?: unknown;
}

export interface Assertions {
  maxResponseMs: number | null;
  bodyContains: string | null;
  bodyNotContains: string | null;
  json: JsonAssertion[];
}

export interface AssertionResult {
  name: string;
  ok: boolean;
  /** What was found; for a failure, the check's error text (§2.3). */
  detail: string;
}

export const DEFAULT_EXPECTED_STATUS = ['200-299'];
const NUMBER_OPS: readonly JsonOp[] = ['gt', 'gte', 'lt', 'lte'];

/** `expectedStatus`: 1-20 items, `"NNN"` or `"NNN-NNN"` (100-599). */
export function readExpectedStatus(v: unknown, path: string): string[] {
  return arr(v, path, 20, 1).map((item, i) => {
    const p = `${path}[${i}]`;
    const m = typeof item === 'string' ? /^(\d{3})(?:-(\d{3}))?$/.exec(item.trim()) : null;
    if (!m) bad(p, 'must be "NNN" or "NNN-NNN"');
    const lo = Number(m[1]);
    const hi = Number(m[2] ?? m[1]);
    if (lo < 100 || hi > 599 || lo > hi) bad(p, 'must be a status or range within 100-599');
    return m[2] ? `${lo}-${hi}` : String(lo);
  });
}

export function statusMatches(code: number, expected: readonly string[]): boolean {
  return expected.some((e) => {
    const [lo, hi] = e.split('-').map(Number) as [number, number | undefined];
    return code >= lo && code <= (hi ?? lo);
  });
}

type PatternTest = (text: string, budget?: RegexBudget) => SafeTest;

/**
 * A §0.1 pattern: a plain string is a case-insensitive substring, `/source/flags` a JS RegExp, run within
 * the time limit of `budget` (safe-regex; a pattern cut off answers its error). Null when the RegExp form
 * does not compile.
 */
export function compilePattern(pattern: string): PatternTest | null {
  if (!/^\/.*\/[a-z]*$/s.test(pattern)) {
    const needle = pattern.toLowerCase();
    return (text) => ({ ok: true, match: text.toLowerCase().includes(needle) });
  }
  try {
    const re = compileUserRegex(pattern);
    return (text, budget = new RegexBudget()) => budget.test(re, text);
  } catch {
    return null;
  }
}

function readJsonAssertion(v: unknown, path: string): JsonAssertion {
  const o = obj(v, path);
  const p = field(o, 'path', `${path}.path`, str({ max: 500, min: 1, trim: true }), {
    prev: undefined,
    required: true,
  });
  const parsed = parseJsonPath(p);
  if (!Array.isArray(parsed)) bad(`${path}.path`, `not a JSON path (${parsed.error})`);
  const op = field(o, 'op', `${path}.op`, oneOf(JSON_OPS), { prev: undefined, required: true });
  if (op === 'exists' || op === 'notExists') return { path: p, op };
  const vp = `${path}.value`;
  if (!Object.hasOwn(o, 'value')) bad(vp, 'required');
  const value = o.value;
  if (NUMBER_OPS.includes(op) && (typeof value !== 'number' || !Number.isFinite(value)))
    bad(vp, 'must be a number');
  if (op === 'matches') {
    if (typeof value !== 'string' || value === '') bad(vp, 'must be a pattern string');
    if (!compilePattern(value)) bad(vp, 'not a valid regular expression');
  }
  if (JSON.stringify(value).length > 10_000) bad(vp, 'too large');
  return { path: p, op, value };
}

/** Reads `maxResponseMs`, `bodyContains`, `bodyNotContains` and `json` of `body` (paths under `prefix`). */
export function parseAssertions(
  body: Record<string, unknown>,
  prev: Assertions | undefined,
  prefix: string,
): Assertions {
  // An empty text asserts nothing: "" is taken as null (a form's empty input).
  const read = str({ max: 10_000 });
  const text = (v: unknown, p: string): string | null => (read(v, p) === '' ? null : read(v, p));
  return {
    maxResponseMs: field(body, 'maxResponseMs', `${prefix}maxResponseMs`, int(1, 120_000), {
      prev: prev?.maxResponseMs,
      def: null,
      nullable: true,
    }) as number | null,
    bodyContains: field(body, 'bodyContains', `${prefix}bodyContains`, text, {
      prev: prev?.bodyContains,
      def: null,
      nullable: true,
    }) as string | null,
    bodyNotContains: field(body, 'bodyNotContains', `${prefix}bodyNotContains`, text, {
      prev: prev?.bodyNotContains,
      def: null,
      nullable: true,
    }) as string | null,
    json: field(
      body,
      'json',
      `${prefix}json`,
      (v, p) => arr(v, p, 20).map((a, i) => readJsonAssertion(a, `${p}[${i}]`)),
      { prev: prev?.json, def: [] },
    ),
  };
}

export interface ResponseFacts {
  statusCode: number;
  body: string;
  responseTimeMs: number;
}

const show = (v: unknown): string => {
  const s = v === MISSING ? 'missing' : (JSON.stringify(v) ?? 'undefined');
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
};

/**
 * The checks of one response, in §2.3 order (status, time, body, json). `budget` limits the time all its
 * regular expressions may take together (a workflow step shares it with its extracts).
 */
export function checkResponse(
  res: ResponseFacts,
  expectedStatus: readonly string[],
  a: Assertions,
  budget = new RegexBudget(),
): AssertionResult[] {
  const out: AssertionResult[] = [];
  const allowed = expectedStatus.join(', ');
  out.push(
    statusMatches(res.statusCode, expectedStatus)
      ? { name: 'status', ok: true, detail: `status ${res.statusCode} in ${allowed}` }
      : { name: 'status', ok: false, detail: `status ${res.statusCode} not in ${allowed}` },
  );
  if (a.maxResponseMs !== null) {
    out.push({
      name: 'maxResponseMs',
      ok: res.responseTimeMs <= a.maxResponseMs,
      detail: `response took ${res.responseTimeMs} ms (limit ${a.maxResponseMs} ms)`,
    });
  }
  if (a.bodyContains !== null) {
    const ok = res.body.includes(a.bodyContains);
    out.push({
      name: 'bodyContains',
      ok,
      detail: `body ${ok ? 'contains' : 'does not contain'} "${a.bodyContains}"`,
    });
  }
  if (a.bodyNotContains !== null) {
    const ok = !res.body.includes(a.bodyNotContains);
    out.push({
      name: 'bodyNotContains',
      ok,
      detail: `body ${ok ? 'does not contain' : 'contains'} "${a.bodyNotContains}"`,
    });
  }
  if (a.json.length > 0) {
    let doc: unknown = MISSING;
    try {
      doc = JSON.parse(res.body);
    } catch {
      // not JSON: every json assertion fails with the same text
    }
    for (const j of a.json) out.push(checkJson(doc, j, budget));
  }
  return out;
}

function checkJson(doc: unknown, j: JsonAssertion, budget: RegexBudget): AssertionResult {
  const name = `json ${j.path}`;
  if (doc === MISSING) return { name, ok: false, detail: `json ${j.path}: body is not JSON` };
  const actual = followPath(doc, parseJsonPath(j.path) as PathStep[]);
  const held = jsonOpHolds(j, actual, budget);
  if (typeof held === 'object') return { name, ok: false, detail: `json ${j.path}: ${held.error}` };
  const ok = held;
  const expected = j.op === 'exists' || j.op === 'notExists' ? j.op : `${j.op} ${show(j.value)}`;
  return {
    name,
    ok,
    detail: ok
      ? `json ${j.path}: ${show(actual)}`
      : `json ${j.path}: expected ${expected}, got ${show(actual)}`,
  };
}

/** Whether the assertion holds, or the error of a `matches` pattern cut off by its time limit. */
function jsonOpHolds(j: JsonAssertion, actual: unknown, budget: RegexBudget): boolean | { error: string } {
  switch (j.op) {
    case 'exists':
      return actual !== MISSING;
    case 'notExists':
      return actual === MISSING;
    case 'eq':
      return actual !== MISSING && isDeepStrictEqual(actual, j.value);
    case 'ne':
      return actual !== MISSING && !isDeepStrictEqual(actual, j.value);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (typeof actual !== 'number') return false;
      const v = j.value as number;
      return j.op === 'gt'
        ? actual > v
        : j.op === 'gte'
          ? actual >= v
          : j.op === 'lt'
            ? actual < v
            : actual <= v;
    }
    case 'contains':
      if (typeof actual === 'string') return typeof j.value === 'string' && actual.includes(j.value);
      if (Array.isArray(actual)) return actual.some((m) => isDeepStrictEqual(m, j.value));
      return false;
    case 'matches': {
      if (typeof actual !== 'string') return false;
      const r = compilePattern(j.value as string)?.(actual, budget);
      if (r === undefined) return false;
      return r.ok ? r.match : { error: r.error };
    }
  }
}

/** The first failing check's text, or undefined when all hold. */
export function firstFailure(results: readonly AssertionResult[]): string | undefined {
  return results.find((r) => !r.ok)?.detail;
}
