import { followPath, MISSING, type PathStep, parseJsonPath } from '../../lib/json-path';
import type { RuleRow } from './store';

/**
 * The router's pure parts (wire rules §11): glob path patterns, `match` conditions and `{{…}}` templates,
 * compiled once per rule so ingest only evaluates them.
 *
 * The UI's rule preview (renderer/src/features/router/template.ts) imports this module, so the preview
 * renders exactly what ingest will: keep it free of Node-only imports (and its imports too), or the
 * renderer build breaks.
 */

/** What a request brings to the rules and templates. */
export interface Incoming {
  /** Starts with `/`, no query. */
  path: string;
  method: string;
  query: Record<string, unknown>;
  /** Lower-case names, secrets already dropped. */
  headers: Record<string, string>;
  /** Parsed JSON, a form as an object, text, or null (no body). */
  body: unknown;
}

// ---- path patterns: `*` one segment (or part of one), `**` any number of segments

type Segment = { any: true } | { re: RegExp | null; literal: string };

function segmentsOf(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

export function compilePattern(pattern: string): Segment[] {
  return segmentsOf(pattern).map((s) => {
    if (s === '**') return { any: true } as const;
    if (!s.includes('*')) return { re: null, literal: s };
    const source = s
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]*');
    return { re: new RegExp(`^${source}$`), literal: s };
  });
}

function segmentMatches(seg: Segment, s: string): boolean {
  if ('any' in seg) return false;
  return seg.re === null ? seg.literal === s : seg.re.test(s);
}

/** Whether the path's segments fit the pattern's (empty segments ignored: `/a//b/` is `/a/b`). */
export function pathMatches(pattern: readonly Segment[], path: string): boolean {
  const segs = segmentsOf(path);
  // Iterative glob over segments with one backtrack point for the last `**` seen.
  let p = 0;
  let s = 0;
  let starP = -1;
  let starS = 0;
  while (s < segs.length) {
    const seg = pattern[p];
    if (seg && 'any' in seg) {
      starP = p++;
      starS = s;
    } else if (seg && segmentMatches(seg, segs[s]!)) {
      p++;
      s++;
    } else if (starP >= 0) {
      p = starP + 1;
      s = ++starS;
    } else return false;
  }
  while (p < pattern.length && 'any' in pattern[p]!) p++;
  return p === pattern.length;
}

// ---- match conditions

export interface MatchCondition {
  path: string;
  op: 'equals' | 'exists' | 'notExists';
  value?: unknown;
}

interface CompiledCondition {
  steps: PathStep[];
  op: MatchCondition['op'];
  value: unknown;
}

/** JSON equality: same type and value, objects key by key (order ignored), arrays in order; no coercion. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ka = Object.keys(a);
  const bo = b as Record<string, unknown>;
  if (ka.length !== Object.keys(bo).length) return false;
  return ka.every((k) => Object.hasOwn(bo, k) && jsonEqual((a as Record<string, unknown>)[k], bo[k]));
}

function holds(c: CompiledCondition, body: unknown): boolean {
  const found = followPath(body, c.steps);
  if (c.op === 'exists') return found !== MISSING;
  if (c.op === 'notExists') return found === MISSING;
  return found !== MISSING && jsonEqual(found, c.value);
}

// ---- templates

type Part =
  | string
  | { source: 'path' | 'method' }
  | { source: 'headers' | 'query' | 'body'; steps: PathStep[] };

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Splits a template into literal text and placeholders; a placeholder that is not a path renders "". */
export function compileTemplate(template: string): Part[] {
  const parts: Part[] = [];
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (m.index > last) parts.push(template.slice(last, m.index));
    last = m.index + m[0].length;
    const expr = m[1]!;
    if (expr === 'path' || expr === 'method') {
      parts.push({ source: expr });
      continue;
    }
    const steps = parseJsonPath(expr);
    if (!Array.isArray(steps) || steps.length === 0) {
      parts.push('');
      continue;
    }
    const head = steps[0];
    if ((head === 'headers' || head === 'query') && steps.length > 1) {
      const rest = steps.slice(1);
      // Header names are looked up in lower case, as they are stored.
      if (head === 'headers' && typeof rest[0] === 'string') rest[0] = rest[0].toLowerCase();
      parts.push({ source: head, steps: rest });
    } else if (head === 'body') parts.push({ source: 'body', steps: steps.slice(1) });
    else parts.push({ source: 'body', steps });
  }
  if (last < template.length) parts.push(template.slice(last));
  return parts;
}

/** A found value as text: strings as they are, objects and arrays as compact JSON, missing and null "". */
export function valueText(v: unknown): string {
  if (v === MISSING || v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

export function render(parts: readonly Part[], req: Incoming): string {
  let out = '';
  for (const p of parts) {
    if (typeof p === 'string') out += p;
    else if (!('steps' in p)) out += p.source === 'path' ? req.path : req.method;
    else {
      const root = p.source === 'body' ? req.body : p.source === 'headers' ? req.headers : req.query;
      out += valueText(followPath(root, p.steps));
    }
  }
  return out;
}

// ---- compiled rules

export interface CompiledRule {
  id: number;
  name: string;
  channelId: number;
  method: string | null;
  pattern: Segment[];
  conditions: CompiledCondition[];
  title: Part[];
  /** null: the default text. */
  message: Part[] | null;
  priority: number | null;
}

/** The enabled rules of a user, in position order, ready to evaluate. */
export function compileRules(rows: readonly RuleRow[]): CompiledRule[] {
  return rows
    .filter((r) => r.enabled === 1)
    .map((r) => ({
      id: r.id,
      name: r.name,
      channelId: r.channel_id,
      method: r.method,
      pattern: compilePattern(r.path_pattern),
      conditions: (JSON.parse(r.match) as MatchCondition[]).map((c) => {
        const steps = parseJsonPath(c.path);
        return { steps: Array.isArray(steps) ? steps : [], op: c.op, value: c.value };
      }),
      title: compileTemplate(r.title),
      message: r.message === null ? null : compileTemplate(r.message),
      priority: r.priority,
    }));
}

/** The first rule whose method, pattern and conditions all hold (they come in position order). */
export function firstMatch(rules: readonly CompiledRule[], req: Incoming): CompiledRule | undefined {
  for (const r of rules) {
    if (r.method !== null && r.method !== req.method) continue;
    if (!pathMatches(r.pattern, req.path)) continue;
    if (r.conditions.every((c) => holds(c, req.body))) return r;
  }
  return undefined;
}

/** Default title of a message (§11): `{{method}} {{path}}`. */
export const DEFAULT_TITLE = '{{method}} {{path}}';
/** The default text is the body as indented JSON, cut to this many characters. */
export const DEFAULT_TEXT_CHARS = 4_000;

/** The default text: the body as indented JSON (a text body as it is), at most 4,000 characters. */
export function defaultText(req: Incoming): string {
  const b = req.body;
  let text: string;
  if (b === null || b === undefined) text = '';
  else if (typeof b === 'string') text = b;
  else text = JSON.stringify(b, null, 2);
  if (text.length > DEFAULT_TEXT_CHARS) text = text.slice(0, DEFAULT_TEXT_CHARS);
  return text.trim() === '' ? `${req.method} ${req.path}` : text;
}
