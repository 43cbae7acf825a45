/**
 * The monitor kinds as the forms see them (docs/api.md "Monitors"): what each is called, its target, and
 * the conversion between a record's kind fields and the form's draft (plain strings and rows, so every
 * input is controlled), both ways. Secrets arrive as "********" and are sent back unchanged unless
 * edited: the server keeps the stored value (matched by name for headers and variables, by position for
 * workflow steps), so a masked value that moved to another name or position must be typed again.
 */
import {
  type BrowserStepDraft,
  browserMaskProblems,
  browserStepsOf,
  browserStepsToDrafts,
  type CookieDraft,
  cookiesToDrafts,
  draftToBrowserStep,
  draftToCookie,
} from './browser';
import type {
  ContentRule,
  Extract,
  JsonAssertion,
  Monitor,
  MonitorKindName,
  MonitorStatus,
  WorkflowStep,
} from './types';

export const SECRET_MASK = '********';

export const KINDS: { kind: MonitorKindName; label: string; description: string }[] = [
  { kind: 'monitor', label: 'Website', description: 'Up when the URL answers with a 2xx or 3xx status.' },
  {
    kind: 'http-monitor',
    label: 'HTTP request',
    description: 'Any method, headers, body and authentication; expected statuses, body and JSON checks.',
  },
  {
    kind: 'content-monitor',
    label: 'Page content',
    description: 'Watches the text of a part of a page: alerts when it changes or breaks a rule.',
  },
  {
    kind: 'port-monitor',
    label: 'TCP port',
    description: 'Up when a TCP connection (and TLS handshake) succeeds.',
  },
  {
    kind: 'workflow-monitor',
    label: 'Multi-step API check',
    description: 'Requests run in order, passing values from one answer to the next.',
  },
  {
    kind: 'browser-workflow',
    label: 'Browser workflow',
    description:
      'Steps in a real Chromium, like a person: open, type, click, expect. A failing step sends a screenshot. Paused on battery.',
  },
];

export function kindLabel(kind: string): string {
  return KINDS.find((k) => k.kind === kind)?.label ?? kind;
}

export function isKind(kind: string | null): kind is MonitorKindName {
  return KINDS.some((k) => k.kind === kind);
}

/** What the monitor checks, as its messages say it (§2.5): the URL, `host:port` or the first step's URL. */
export function targetOf(m: Pick<Monitor, 'kind' | 'url' | 'host' | 'port' | 'steps'>): string {
  if (m.kind === 'port-monitor') return `${m.host ?? ''}:${m.port ?? ''}`;
  if (m.kind === 'workflow-monitor') return m.steps?.[0]?.url ?? '';
  if (m.kind === 'browser-workflow') return browserStepsOf(m).find((s) => s.action === 'goto')?.url ?? '';
  return m.url ?? '';
}

/** Worst first: what needs attention tops the list; then by name. */
const STATUS_ORDER: MonitorStatus[] = ['down', 'unknown', 'pending', 'maintenance', 'up', 'paused'];
export function byAttention(a: Monitor, b: Monitor): number {
  return STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status) || a.name.localeCompare(b.name);
}

/** Header and variable names whose values the server masks (§0.3). */
export function isSecretName(name: string): boolean {
  return /auth|cookie|token|secret|passw|api-?key/i.test(name);
}

// ---------------------------------------------------------------------------------------------------------
// Rows: headers and variables as editable name/value rows.

export interface Pair {
  name: string;
  value: string;
}

export function toPairs(o: Record<string, string> | undefined | null): Pair[] {
  return Object.entries(o ?? {}).map(([name, value]) => ({ name, value }));
}

/** Rows back to an object; rows with an empty name are dropped, the last of two equal names wins. */
export function fromPairs(rows: Pair[]): Record<string, string> {
  const o: Record<string, string> = {};
  for (const r of rows) if (r.name.trim()) o[r.name.trim()] = r.value;
  return o;
}

/** `200-299, 301` → `["200-299", "301"]`. */
export function parseStatusList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

const NUMBER_OPS = new Set(['gt', 'gte', 'lt', 'lte']);
const NO_VALUE_OPS = new Set(['exists', 'notExists']);

export interface AssertionDraft {
  path: string;
  op: JsonAssertion['op'];
  value: string;
}

/**
 * An assertion's value as the form shows it: numbers and other JSON as JSON, strings as they are, except
 * a string that would read as JSON (`"42"`, `"true"`) for eq/ne, which keeps its quotes.
 */
export function assertionValueText(op: JsonAssertion['op'], value: unknown): string {
  if (value === undefined || NO_VALUE_OPS.has(op)) return '';
  if (typeof value !== 'string') return JSON.stringify(value);
  if (op === 'eq' || op === 'ne') {
    try {
      JSON.parse(value);
      return JSON.stringify(value);
    } catch {
      return value;
    }
  }
  return value;
}

/** The form's text back to the wire value: gt..lte a number, eq/ne JSON when it parses, else the text. */
export function parseAssertionValue(op: JsonAssertion['op'], text: string): unknown {
  if (NO_VALUE_OPS.has(op)) return undefined;
  if (NUMBER_OPS.has(op)) return text.trim() === '' ? text : Number(text);
  if (op === 'eq' || op === 'ne') {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

export function toAssertionDrafts(list: JsonAssertion[] | undefined): AssertionDraft[] {
  return (list ?? []).map((a) => ({ path: a.path, op: a.op, value: assertionValueText(a.op, a.value) }));
}

export function fromAssertionDrafts(list: AssertionDraft[]): JsonAssertion[] {
  return list
    .filter((a) => a.path.trim())
    .map((a) => {
      const value = parseAssertionValue(a.op, a.value);
      return value === undefined
        ? { path: a.path.trim(), op: a.op }
        : { path: a.path.trim(), op: a.op, value };
    });
}

const nullIfEmpty = (s: string) => (s.trim() === '' ? null : s);
const numberOrNull = (s: string) => (s.trim() === '' ? null : Number(s));
const textOf = (v: number | string | null | undefined) => (v === null || v === undefined ? '' : String(v));

// ---------------------------------------------------------------------------------------------------------
// Workflow steps.

/** The request part shared by an HTTP monitor and a workflow step. */
export interface RequestDraft {
  method: string;
  url: string;
  headers: Pair[];
  body: string;
  username: string;
  password: string;
  expectedStatus: string;
  followRedirects: boolean;
}

/** Limits on the answer shared by an HTTP monitor and a workflow step's `assert`. */
export interface AnswerChecksDraft {
  maxResponseMs: string;
  bodyContains: string;
  bodyNotContains: string;
  json: AssertionDraft[];
}

export interface StepDraft extends RequestDraft, AnswerChecksDraft {
  /** React key, stable while the step moves. */
  key: string;
  /** Its position in the stored workflow (masked values are kept by position), null for a new step. */
  origIndex: number | null;
  name: string;
  extract: Extract[];
}

function requestToDraft(r: Partial<WorkflowStep> | undefined): RequestDraft {
  return {
    method: r?.method ?? 'GET',
    url: r?.url ?? '',
    headers: toPairs(r?.headers),
    body: r?.body ?? '',
    username: r?.basicAuth?.username ?? '',
    password: r?.basicAuth?.password ?? '',
    expectedStatus: (r?.expectedStatus ?? ['200-299']).join(', '),
    followRedirects: r?.followRedirects ?? true,
  };
}

function answerChecksToDraft(a: WorkflowStep['assert'] | undefined): AnswerChecksDraft {
  return {
    maxResponseMs: textOf(a?.maxResponseMs),
    bodyContains: a?.bodyContains ?? '',
    bodyNotContains: a?.bodyNotContains ?? '',
    json: toAssertionDrafts(a?.json),
  };
}

function requestOnWire(d: RequestDraft) {
  return {
    method: d.method,
    url: d.url.trim(),
    headers: fromPairs(d.headers),
    body: d.body,
    basicAuth: d.username ? { username: d.username, password: d.password } : null,
    expectedStatus: parseStatusList(d.expectedStatus),
    followRedirects: d.followRedirects,
  };
}

function answerChecksOnWire(d: AnswerChecksDraft) {
  return {
    maxResponseMs: numberOrNull(d.maxResponseMs),
    bodyContains: nullIfEmpty(d.bodyContains),
    bodyNotContains: nullIfEmpty(d.bodyNotContains),
    json: fromAssertionDrafts(d.json),
  };
}

let keySeq = 0;
const nextKey = () => `s${++keySeq}`;

export function stepToDraft(s: Partial<WorkflowStep>, origIndex: number | null): StepDraft {
  return {
    key: nextKey(),
    origIndex,
    name: s.name ?? '',
    ...requestToDraft(s),
    ...answerChecksToDraft(s.assert),
    extract: (s.extract ?? []).map((e) => ({ ...e })),
  };
}

export function emptyStep(): StepDraft {
  return stepToDraft({}, null);
}

export function draftToStep(d: StepDraft): WorkflowStep {
  const step: WorkflowStep = {
    ...requestOnWire(d),
    assert: answerChecksOnWire(d),
    extract: d.extract
      .filter((e) => e.var.trim())
      .map((e) => {
        const base = { var: e.var.trim(), from: e.from };
        if (e.from === 'json') return { ...base, path: e.path ?? '$' };
        if (e.from === 'regex') return { ...base, pattern: e.pattern ?? '' };
        return { ...base, header: e.header ?? '' };
      }),
  };
  if (d.name.trim()) step.name = d.name.trim();
  return step;
}

export function moveItem<T>(list: T[], from: number, to: number): T[] {
  if (to < 0 || to >= list.length || from === to) return list;
  const next = [...list];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item as T);
  return next;
}

// ---------------------------------------------------------------------------------------------------------
// The kind fields of a whole monitor.

/** Every kind's fields in one draft; `url` is also the plain and content monitors' address. */
export interface KindDraft extends RequestDraft, AnswerChecksDraft {
  ignoreTlsErrors: boolean;
  tlsExpiryDays: string;
  selector: string;
  rule: ContentRule;
  value: string;
  render: 'html' | 'browser';
  host: string;
  port: string;
  tls: boolean;
  variables: Pair[];
  steps: StepDraft[];
  browserSteps: BrowserStepDraft[];
  cookies: CookieDraft[];
}

export function draftOf(m?: Partial<Monitor>): KindDraft {
  return {
    ...requestToDraft(m),
    ignoreTlsErrors: m?.ignoreTlsErrors ?? false,
    ...answerChecksToDraft(m),
    tlsExpiryDays: String(m?.tlsExpiryDays ?? 0),
    selector: m?.selector ?? '',
    rule: m?.rule ?? 'changed',
    value: textOf(m?.value),
    render: m?.render ?? 'html',
    host: m?.host ?? '',
    port: textOf(m?.port),
    tls: m?.tls ?? false,
    variables: toPairs(m?.variables),
    steps:
      m?.kind !== 'browser-workflow' && m?.steps?.length
        ? m.steps.map((s, i) => stepToDraft(s, i))
        : [emptyStep()],
    browserSteps: browserStepsToDrafts(m?.kind === 'browser-workflow' ? m : undefined),
    cookies: cookiesToDrafts(m?.cookies),
  };
}

/** The content rule's value on the wire: a number for the number rules, null for `changed`. */
export function ruleValue(rule: ContentRule, text: string): string | number | null {
  if (rule === 'changed') return null;
  if (rule === 'numberAbove' || rule === 'numberBelow') return text.trim() === '' ? null : Number(text);
  return text;
}

/** The kind fields of the create/update/test body. */
export function kindBody(kind: MonitorKindName, d: KindDraft): Record<string, unknown> {
  switch (kind) {
    case 'monitor':
      return { url: d.url.trim() };
    case 'http-monitor':
      return {
        ...requestOnWire(d),
        ignoreTlsErrors: d.ignoreTlsErrors,
        ...answerChecksOnWire(d),
        tlsExpiryDays: Number(d.tlsExpiryDays || 0),
      };
    case 'content-monitor':
      return {
        url: d.url.trim(),
        selector: d.selector,
        rule: d.rule,
        value: ruleValue(d.rule, d.value),
        render: d.render,
      };
    case 'port-monitor':
      return { host: d.host.trim(), port: Number(d.port), tls: d.tls, ignoreTlsErrors: d.ignoreTlsErrors };
    case 'workflow-monitor':
      return { variables: fromPairs(d.variables), steps: d.steps.map(draftToStep) };
    case 'browser-workflow':
      return {
        variables: fromPairs(d.variables),
        cookies: d.cookies.filter((c) => c.name.trim()).map(draftToCookie),
        steps: d.browserSteps.map(draftToBrowserStep),
      };
  }
}

/**
 * Masked values the server could not match any more (§0.3): a header or variable renamed, a workflow step
 * moved or a step before it removed. Each must be typed again; the texts say where.
 */
export function maskProblems(kind: MonitorKindName, d: KindDraft, stored?: Partial<Monitor>): string[] {
  const problems: string[] = [];
  const maskedNames = (rows: Pair[], kept: Record<string, string> | undefined, where: string) => {
    for (const r of rows)
      if (r.value === SECRET_MASK && kept?.[r.name.trim()] !== SECRET_MASK)
        problems.push(`${where} "${r.name}": type the hidden value again`);
  };
  if (kind === 'http-monitor') {
    maskedNames(d.headers, stored?.headers, 'header');
    if (d.password === SECRET_MASK && stored?.basicAuth?.password !== SECRET_MASK)
      problems.push('password: type the hidden value again');
  }
  if (kind === 'browser-workflow') {
    maskedNames(d.variables, stored?.variables, 'variable');
    problems.push(...browserMaskProblems(d.browserSteps, d.cookies, stored));
  }
  if (kind === 'workflow-monitor') {
    maskedNames(d.variables, stored?.variables, 'variable');
    d.steps.forEach((s, i) => {
      const masked = s.headers.some((h) => h.value === SECRET_MASK) || s.password === SECRET_MASK;
      if (!masked) return;
      const label = `step ${i + 1}${s.name ? ` "${s.name}"` : ''}`;
      if (s.origIndex !== i)
        problems.push(`${label}: it moved, so its hidden values cannot be kept; type them again`);
      else maskedNames(s.headers, stored?.steps?.[i]?.headers, `${label} header`);
    });
  }
  return problems;
}
