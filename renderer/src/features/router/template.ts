/**
 * The router's templates and matching, client side, for the rule editor's live preview against a past
 * event. Same rules as the server (wire-families §11): `{{body.a.b}}` or a bare `{{a.b}}` reads the body,
 * `{{headers.x-github-event}}`, `{{query.name}}`, `{{path}}`, `{{method}}`; the path syntax is the API's
 * one JSON path (`.key`, `["key"]`, `[n]`; server/lib/json-path.ts, shared); missing → "", objects and
 * arrays → compact JSON.
 */
import { followPath, MISSING, type PathStep, parseJsonPath } from '../../../../server/lib/json-path';
import type { MatchCondition, RouterEvent, RouterRule } from './types';

export const DEFAULT_TITLE = '{{method}} {{path}}';
/** The default message is the body as indented JSON, cut at this many characters. */
export const DEFAULT_MESSAGE_MAX = 4000;

type EventParts = Pick<RouterEvent, 'path' | 'method' | 'query' | 'headers' | 'body'>;

/** What one `{{…}}` expression reads from the event: a value, or MISSING. */
export function lookup(expr: string, event: EventParts): unknown {
  const e = expr.trim();
  if (e === 'path') return event.path;
  if (e === 'method') return event.method;
  const steps = parseJsonPath(e);
  if (!Array.isArray(steps)) return MISSING;
  const [first, ...rest] = steps;
  if (first === 'body') return followPath(event.body, rest);
  if (first === 'headers') {
    // Header names are stored lowercased: `{{headers.X-GitHub-Event}}` finds `x-github-event`.
    const [name, ...more] = rest;
    const lowered: PathStep[] = typeof name === 'string' ? [name.toLowerCase(), ...more] : rest;
    return followPath(event.headers, lowered);
  }
  if (first === 'query') return followPath(event.query, rest);
  return followPath(event.body, steps);
}

/** A found value as template text: strings as they are, anything else as compact JSON, missing as "". */
export function asText(value: unknown): string {
  if (value === MISSING || value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? '';
}

const EXPR = /\{\{([^{}]*)\}\}/g;

/** A title or message template rendered against an event. */
export function renderTemplate(template: string, event: EventParts): string {
  return template.replace(EXPR, (_, expr: string) => asText(lookup(expr, event)));
}

/** The message when a rule's template is empty: the body as indented JSON (text as it is), cut. */
export function defaultMessage(event: Pick<RouterEvent, 'body'>): string {
  const text =
    typeof event.body === 'string' ? event.body : (JSON.stringify(event.body ?? null, null, 2) ?? '');
  return text.length > DEFAULT_MESSAGE_MAX ? text.slice(0, DEFAULT_MESSAGE_MAX) : text;
}

/** The title and message a rule would make from an event (empty templates fall back to the defaults). */
export function renderRule(
  rule: Pick<RouterRule, 'title' | 'message'>,
  event: EventParts,
): { title: string; message: string } {
  return {
    title: renderTemplate(rule.title.trim() ? rule.title : DEFAULT_TITLE, event),
    message: rule.message.trim() ? renderTemplate(rule.message, event) : defaultMessage(event),
  };
}

/** The `{{…}}` expressions of a template that find nothing in the event (shown as a hint). */
export function missingExpressions(template: string, event: EventParts): string[] {
  const out: string[] = [];
  for (const m of template.matchAll(EXPR)) {
    const expr = (m[1] ?? '').trim();
    if (lookup(expr, event) === MISSING && !out.includes(expr)) out.push(expr);
  }
  return out;
}

/** A path pattern as a RegExp: `*` is one segment (or part of one), `**` any number of segments. */
export function patternRegExp(pattern: string): RegExp {
  let p = pattern.trim() || '**';
  if (!p.startsWith('/') && !p.startsWith('**')) p = `/${p}`;
  let re = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i] as string;
    if (p.startsWith('/**', i) && (i + 3 === p.length || p[i + 3] === '/')) {
      re += '(?:/.*)?';
      i += 2;
    } else if (p.startsWith('**', i)) {
      re += '.*';
      i += 1;
    } else if (c === '*') re += '[^/]*';
    else re += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}/?$`);
}

export function pathMatches(pattern: string, path: string): boolean {
  return patternRegExp(pattern).test(path);
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) =>
        Object.hasOwn(b, k) &&
        jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}

/** Whether one match condition holds on the body (JSON equality, no coercion). */
export function conditionHolds(c: MatchCondition, body: unknown): boolean {
  const steps = parseJsonPath(c.path);
  const found = Array.isArray(steps) ? followPath(body, steps) : MISSING;
  if (c.op === 'exists') return found !== MISSING;
  if (c.op === 'notExists') return found === MISSING;
  return found !== MISSING && jsonEqual(found, c.value);
}

/**
 * Whether a rule would take an event, and if not, the first reason in words. `enabled` is left out: the
 * preview is about what the rule says, whether it is switched on is shown beside it.
 */
export function whyNot(
  rule: Pick<RouterRule, 'pathPattern' | 'method' | 'match'>,
  event: Pick<RouterEvent, 'path' | 'method' | 'body'>,
): string | null {
  if (rule.method && rule.method !== event.method) return `the method is ${event.method}, not ${rule.method}`;
  if (!pathMatches(rule.pathPattern, event.path))
    return `the path ${event.path} does not fit ${rule.pathPattern || '**'}`;
  const failed = rule.match.findIndex((c) => !conditionHolds(c, event.body));
  if (failed >= 0) {
    const c = rule.match[failed] as MatchCondition;
    return `condition ${failed + 1} (${c.path} ${c.op}${c.op === 'equals' ? ` ${JSON.stringify(c.value)}` : ''}) does not hold`;
  }
  return null;
}
