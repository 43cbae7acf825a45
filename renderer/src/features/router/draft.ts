/** The rule editor's draft: strings as typed, turned into the wire body (or a field's problem) on save. */
import { DEFAULT_TITLE } from './template';
import type { MatchCondition, MatchOp, RouterMethod, RouterRule, RouterRuleInput } from './types';

export interface ConditionDraft {
  /** A stable React key for the row. */
  key: number;
  path: string;
  op: MatchOp;
  /** The value as JSON text (`"push"`, `3`, `true`); only for `equals`. */
  value: string;
}

export interface RuleDraft {
  name: string;
  pathPattern: string;
  method: RouterMethod | '';
  match: ConditionDraft[];
  appid: number | '';
  title: string;
  message: string;
  /** Empty: the channel's default priority. */
  priority: string;
  enabled: boolean;
}

let nextKey = 1;
export function conditionDraft(c: Partial<MatchCondition> = {}): ConditionDraft {
  return {
    key: nextKey++,
    path: c.path ?? '$.',
    op: c.op ?? 'equals',
    value:
      c.op === 'equals' || c.op === undefined ? (c.value === undefined ? '' : JSON.stringify(c.value)) : '',
  };
}

/** A draft from a saved rule, a from-event draft, or nothing (a new rule). */
export function draftOf(
  rule: Partial<RouterRule> | null | undefined,
  defaultAppid: number | null,
): RuleDraft {
  return {
    name: rule?.name ?? '',
    pathPattern: rule?.pathPattern ?? '**',
    method: rule?.method ?? '',
    match: (rule?.match ?? []).map(conditionDraft),
    appid: rule?.appid ?? defaultAppid ?? '',
    title: rule?.title ?? DEFAULT_TITLE,
    message: rule?.message ?? '',
    priority: rule?.priority === null || rule?.priority === undefined ? '' : String(rule.priority),
    enabled: rule?.enabled ?? true,
  };
}

/** A problem found before sending, named like the server's 400s (`match[1].value: …`). */
export interface DraftProblem {
  field: string;
  text: string;
}

/** The conditions as the wire has them, or the first row whose value is not JSON. */
export function conditionsOf(rows: ConditionDraft[]): MatchCondition[] | DraftProblem {
  const out: MatchCondition[] = [];
  for (const [i, r] of rows.entries()) {
    if (r.op !== 'equals') {
      out.push({ path: r.path.trim(), op: r.op });
      continue;
    }
    try {
      out.push({ path: r.path.trim(), op: r.op, value: JSON.parse(r.value) });
    } catch {
      return {
        field: 'match',
        text: `match[${i}].value: not JSON — write text in quotes ("push"), numbers and true/false as they are`,
      };
    }
  }
  return out;
}

/** The body of POST/PUT, or the problem to show next to its field. */
export function bodyOf(d: RuleDraft): RouterRuleInput | DraftProblem {
  const match = conditionsOf(d.match);
  if (!Array.isArray(match)) return match;
  const p = d.priority.trim();
  if (p !== '' && !/^(10|\d)$/.test(p))
    return { field: 'priority', text: 'priority: a whole number 0 to 10' };
  return {
    name: d.name.trim(),
    pathPattern: d.pathPattern.trim() || '**',
    method: d.method || null,
    match,
    appid: d.appid === '' ? null : d.appid,
    title: d.title.trim() ? d.title : DEFAULT_TITLE,
    // Empty: the default text (the body as indented JSON), which the server keeps as null.
    message: d.message === '' ? null : d.message,
    priority: p === '' ? null : Number(p),
    enabled: d.enabled,
  };
}

export function isProblem(x: unknown): x is DraftProblem {
  return typeof x === 'object' && x !== null && 'field' in x && 'text' in x && !('name' in x);
}
