/**
 * The router's templates and matching for the rule editor's live preview against a past event. The
 * rules are the server's own code (server/features/router/engine.ts, pure: globs, conditions, `{{…}}`
 * templates on server/lib/json-path.ts), so the preview renders exactly what ingest will: `{{body.a.b}}`
 * or a bare `{{a.b}}` reads the body, `{{headers.x-github-event}}`, `{{query.name}}`, `{{path}}`,
 * `{{method}}`; missing (and null) → "", objects and arrays → compact JSON.
 */
import {
  compilePattern,
  compileTemplate,
  DEFAULT_TITLE,
  defaultText,
  pathMatches as globMatches,
  type Incoming,
  jsonEqual,
  render,
} from '../../../../server/features/router/engine';
import { followPath, MISSING, parseJsonPath } from '../../../../server/lib/json-path';
import type { MatchCondition, RouterEvent, RouterRule } from './types';

export { DEFAULT_TITLE };

type EventParts = Pick<RouterEvent, 'path' | 'method' | 'query' | 'headers' | 'body'>;

const incoming = (e: EventParts): Incoming => ({
  path: e.path,
  method: e.method,
  query: e.query,
  headers: e.headers,
  body: e.body,
});

/** A title or message template rendered against an event. */
export function renderTemplate(template: string, event: EventParts): string {
  return render(compileTemplate(template), incoming(event));
}

/**
 * The title and message a rule would make from an event, as ingest makes them: an empty title is the
 * default one (the editor sends it so), an empty or all-missing message the body as indented JSON.
 */
export function renderRule(
  rule: Pick<RouterRule, 'title' | 'message'>,
  event: EventParts,
): { title: string; message: string } {
  const title = renderTemplate(rule.title.trim() ? rule.title : DEFAULT_TITLE, event);
  const message = rule.message ? renderTemplate(rule.message, event) : '';
  return { title, message: message === '' ? defaultText(incoming(event)) : message };
}

const EXPR = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The `{{…}}` expressions of a template that find nothing (or null) in the event, shown as a hint. */
export function missingExpressions(template: string, event: EventParts): string[] {
  const out: string[] = [];
  for (const m of template.matchAll(EXPR)) {
    const expr = m[1] ?? '';
    if (renderTemplate(m[0], event) === '' && !out.includes(expr)) out.push(expr);
  }
  return out;
}

/** Whether a path pattern takes a path: `*` one segment (or part of one), `**` any number of them. */
export function pathMatches(pattern: string, path: string): boolean {
  return globMatches(compilePattern(pattern.trim() || '**'), path);
}

/** Whether one match condition holds on the body (JSON equality, no coercion). */
export function conditionHolds(c: MatchCondition, body: unknown): boolean {
  const steps = parseJsonPath(c.path, { requireRoot: true });
  const found = Array.isArray(steps) ? followPath(body, steps) : MISSING;
  if (c.op === 'exists') return found !== MISSING;
  if (c.op === 'notExists') return found === MISSING;
  return found !== MISSING && jsonEqual(found, c.value);
}

/**
 * Whether a rule would take an event, and if not, the first reason in words. `enabled` is left out: the
 * preview is about what the rule says; whether it is switched on is said beside it.
 */
export function whyNot(
  rule: Pick<RouterRule, 'pathPattern' | 'method' | 'match'>,
  event: Pick<RouterEvent, 'path' | 'method' | 'body'>,
): string | null {
  if (rule.method && rule.method !== event.method) return `the method is ${event.method}, not ${rule.method}`;
  if (!pathMatches(rule.pathPattern, event.path))
    return `the path ${event.path} does not fit ${rule.pathPattern.trim() || '**'}`;
  const failed = rule.match.findIndex((c) => !conditionHolds(c, event.body));
  if (failed >= 0) {
    const c = rule.match[failed] as MatchCondition;
    return `condition ${failed + 1} (${c.path} ${c.op}${c.op === 'equals' ? ` ${JSON.stringify(c.value)}` : ''}) does not hold`;
  }
  return null;
}
