import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AppContext } from '../../../context';
import { TOK } from '../../../http/auth';
import { errors } from '../../../http/errors';
import { parseBody } from '../../../http/validate';
import { followPath, MISSING, parseJsonPath } from '../../../lib/json-path';
import { compileUserRegex, RegexBudget } from '../../../lib/safe-regex';
import { askJson } from '../../assistant/provider';
import { type CheckIo, type CheckOutcome, type MonitorKind, SECRET_MASK } from '../kind';
import { type Assertions, checkResponse, firstFailure, parseAssertions } from './assertions';
import { firstUrl, parseCurl } from './curl';
import { parseRequestFields, presentRequestFields, type RequestFields, sendRequest, urlHost } from './http';
import { SecretValues } from './redact';
import { arr, bad, field, maskByName, obj, oneOf, SECRET_NAME, str, stringMap } from './validate';

export interface Extract {
  var: string;
  from: 'json' | 'regex' | 'header';
  path?: string;
  pattern?: string;
  header?: string;
}

export interface WorkflowStep extends RequestFields {
  name: string;
  assert: Assertions;
  extract: Extract[];
}

export interface WorkflowSettings {
  variables: Record<string, string>;
  steps: WorkflowStep[];
}

const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;
const STEPS_MAX = 20;

function varName(k: string, path: string): void {
  if (!VAR_NAME.test(k)) bad(path, 'must be a name of letters, digits and _ (not starting with a digit)');
}

/** A regex field: `/source/flags` or a bare source. Null when it does not compile. */
export function compileRegex(pattern: string): RegExp | null {
  try {
    return compileUserRegex(pattern);
  } catch {
    return null;
  }
}

function readExtract(v: unknown, path: string): Extract {
  const o = obj(v, path);
  const name = field(o, 'var', `${path}.var`, str({ max: 100, min: 1 }), { prev: undefined, required: true });
  varName(name, `${path}.var`);
  const from = field(o, 'from', `${path}.from`, oneOf(['json', 'regex', 'header'] as const), {
    prev: undefined,
    required: true,
  });
  if (from === 'json') {
    const p = field(o, 'path', `${path}.path`, str({ max: 500, min: 1, trim: true }), {
      prev: undefined,
      required: true,
    });
    const steps = parseJsonPath(p);
    if (!Array.isArray(steps)) bad(`${path}.path`, `not a JSON path (${steps.error})`);
    return { var: name, from, path: p };
  }
  if (from === 'regex') {
    const p = field(o, 'pattern', `${path}.pattern`, str({ max: 1_000, min: 1 }), {
      prev: undefined,
      required: true,
    });
    if (!compileRegex(p)) bad(`${path}.pattern`, 'not a valid regular expression');
    return { var: name, from, pattern: p };
  }
  const h = field(o, 'header', `${path}.header`, str({ max: 100, min: 1, trim: true }), {
    prev: undefined,
    required: true,
  });
  return { var: name, from, header: h };
}

/**
 * One step. A present `steps` array replaces the stored one (§0.1): absent step fields take their defaults,
 * and `"********"` keeps the secret of the stored step at the same position (§0.3).
 */
function readStep(prevSteps: WorkflowStep[] | undefined) {
  return (v: unknown, i: number, path: string): WorkflowStep => {
    const o = obj(v, path);
    const stored = prevSteps?.[i];
    const request = parseRequestFields(o, undefined, `${path}.`, { templated: true, secretsFrom: stored });
    const assertBody = o.assert === undefined || o.assert === null ? {} : obj(o.assert, `${path}.assert`);
    return {
      name: field(o, 'name', `${path}.name`, str({ max: 100, min: 1, trim: true }), {
        prev: undefined,
        def: `step ${i + 1}`,
      }),
      ...request,
      assert: parseAssertions(assertBody, undefined, `${path}.assert.`),
      extract: field(
        o,
        'extract',
        `${path}.extract`,
        (x, p) => arr(x, p, 20).map((e, j) => readExtract(e, `${p}[${j}]`)),
        {
          prev: undefined,
          def: [],
        },
      ),
    };
  };
}

function presentStep(s: WorkflowStep): Record<string, unknown> {
  return { name: s.name, ...presentRequestFields(s), assert: s.assert, extract: s.extract };
}

/** `{{name}}`, `{{$timestamp}}` (unix s), `{{$uuid}}`; an unknown name is the step's error. */
const PLACEHOLDER = /\{\{\s*([^{}\s]+)\s*\}\}/g;

export function substitute(
  text: string,
  vars: ReadonlyMap<string, string>,
  nowMs: number,
): { text: string } | { error: string } {
  let missing: string | null = null;
  const out = text.replace(PLACEHOLDER, (whole, name: string) => {
    if (name === '$timestamp') return String(Math.floor(nowMs / 1000));
    if (name === '$uuid') return randomUUID();
    const v = vars.get(name);
    if (v === undefined) {
      missing ??= name;
      return whole;
    }
    return v;
  });
  return missing === null ? { text: out } : { error: `variable "${missing}" is not defined` };
}

/** The extracted text, undefined when nothing matched, or the error of a pattern cut off by its time limit. */
function extractValue(
  ex: Extract,
  body: string,
  headers: Record<string, string>,
  budget: RegexBudget,
): string | undefined | { error: string } {
  if (ex.from === 'header') return headers[(ex.header ?? '').toLowerCase()];
  if (ex.from === 'regex') {
    const re = compileRegex(ex.pattern ?? '');
    if (!re) return undefined;
    const r = budget.exec(re, body);
    if (!r.ok) return { error: r.error };
    return r.match ? (r.match[1] ?? r.match[0]) : undefined;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return undefined;
  }
  const found = followPath(doc, parseJsonPath(ex.path ?? '$') as (string | number)[]);
  if (found === MISSING) return undefined;
  return typeof found === 'string' ? found : JSON.stringify(found);
}

interface StepDetail {
  name: string;
  ok: boolean;
  statusCode?: number;
  responseTimeMs: number;
  error?: string;
  extracted: Record<string, string>;
}

/** The step with its `{{…}}` replaced in the URL, header values and body. */
function resolveStep(
  step: WorkflowStep,
  vars: ReadonlyMap<string, string>,
  now: number,
): { request: RequestFields } | { error: string } {
  const url = substitute(step.url, vars, now);
  if ('error' in url) return url;
  const body = substitute(step.body, vars, now);
  if ('error' in body) return body;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(step.headers)) {
    const h = substitute(v, vars, now);
    if ('error' in h) return h;
    headers[k] = h.text;
  }
  return { request: { ...step, url: url.text, body: body.text, headers } };
}

/** The steps in order; every secret the run sends is redacted from the outcome's texts (§0.3). */
async function runWorkflow(s: WorkflowSettings, io: CheckIo): Promise<CheckOutcome> {
  const secrets = new SecretValues();
  secrets.addNamed(s.variables);
  return secrets.redact(await runSteps(s, io, secrets));
}

async function runSteps(s: WorkflowSettings, io: CheckIo, secrets: SecretValues): Promise<CheckOutcome> {
  const vars = new Map(Object.entries(s.variables));
  const steps: StepDetail[] = [];
  let total = 0;
  const fail = (n: number, name: string, error: string, responseTimeMs: number | null): CheckOutcome => ({
    ok: false,
    error: `step ${n} "${name}": ${error}`,
    responseTimeMs,
    details: { steps },
  });
  for (const [i, step] of s.steps.entries()) {
    const n = i + 1;
    secrets.addRequest(step);
    const resolved = resolveStep(step, vars, io.ctx.clock.now());
    if ('error' in resolved) {
      steps.push({ name: step.name, ok: false, responseTimeMs: 0, error: resolved.error, extracted: {} });
      return fail(n, step.name, resolved.error, null);
    }
    secrets.addRequest(resolved.request);
    const r = await sendRequest(io, resolved.request);
    if (!r.ok) {
      steps.push({
        name: step.name,
        ok: false,
        responseTimeMs: r.responseTimeMs,
        error: r.error,
        extracted: {},
      });
      return fail(n, step.name, r.error, null);
    }
    total += r.responseTimeMs;
    const detail: StepDetail = {
      name: step.name,
      ok: true,
      statusCode: r.statusCode,
      responseTimeMs: r.responseTimeMs,
      extracted: {},
    };
    steps.push(detail);
    // the step's patterns (json `matches`, regex extracts) share one time limit: they run without yielding
    const budget = new RegexBudget();
    const error = firstFailure(checkResponse(r, step.expectedStatus, step.assert, budget));
    if (error !== undefined) {
      detail.ok = false;
      detail.error = error;
      return fail(n, step.name, error, total);
    }
    for (const ex of step.extract) {
      const value = extractValue(ex, r.body, r.headers, budget);
      if (typeof value !== 'string') {
        detail.ok = false;
        detail.error = `extract ${ex.var}: ${value === undefined ? 'no match' : value.error}`;
        return fail(n, step.name, detail.error, total);
      }
      vars.set(ex.var, value);
      if (SECRET_NAME.test(ex.var)) secrets.add(value);
      detail.extracted[ex.var] = SECRET_NAME.test(ex.var) ? SECRET_MASK : value;
    }
  }
  return { ok: true, responseTimeMs: total, details: { steps } };
}

const buildStepBody = z.object({
  curl: z.string().max(65_536).optional(),
  description: z.string().max(10_000).optional(),
});

/**
 * `POST /workflow-monitor/build-step`: a curl command line parsed here; a description goes to the
 * assistant's provider when one is set (buildStepAssisted), else its first URL becomes a GET step.
 */
export function buildStep(body: z.output<typeof buildStepBody>): WorkflowStep {
  let req: ReturnType<typeof parseCurl> = null;
  if (body.curl !== undefined && body.curl.trim() !== '') req = parseCurl(body.curl);
  else if (body.description !== undefined) {
    const url = firstUrl(body.description);
    if (url) req = parseCurl(`curl '${url.replace(/'/g, "'\\''")}'`);
  }
  if (req === null) throw errors.badRequest('curl: no URL found');
  if ('error' in req) throw errors.badRequest(`curl: ${req.error}`);
  let host = '';
  let path = '/';
  try {
    const u = new URL(req.url);
    host = u.host;
    path = u.pathname;
  } catch {
    // a URL with `$VAR` in its host stays as written
  }
  const name = `${req.method} ${host}${path}`.slice(0, 100);
  return readStep(undefined)({ ...req, name, expectedStatus: ['200-299'] }, 0, 'step');
}

/**
 * A description with the assistant's provider set: it is asked for the request as a curl command line,
 * which must parse like one the user pasted; a failure or an unusable answer: the local rule.
 */
export async function buildStepAssisted(
  ctx: AppContext,
  body: z.output<typeof buildStepBody>,
): Promise<WorkflowStep> {
  if ((body.curl === undefined || body.curl.trim() === '') && body.description !== undefined) {
    const curl = await askJson(
      ctx,
      'You turn a description of one HTTP request into a curl command line for an API check (method, URL, headers, body). Answer {"curl": "curl ..."}. Use $NAME for values the user must supply, such as tokens.',
      body.description,
      (v) => {
        const c = (v as { curl?: unknown })?.curl;
        if (typeof c !== 'string' || !/^\s*curl\s/.test(c)) return undefined;
        const parsed = parseCurl(c);
        return parsed !== null && !('error' in parsed) ? c : undefined;
      },
    );
    if (curl) return buildStep({ curl });
  }
  return buildStep(body);
}

export const workflowMonitor: MonitorKind<WorkflowSettings> = {
  kind: 'workflow-monitor',
  defaults: { intervalSec: 60, timeoutSec: 10, timeoutMaxSec: 120 },
  parse(body, prev) {
    const variables = field(
      body,
      'variables',
      'variables',
      stringMap({ max: 50, valueMax: 10_000, prev: prev?.variables, name: varName }),
      { prev: prev?.variables, def: {} },
    );
    const steps = field(
      body,
      'steps',
      'steps',
      (v, p) => {
        const items = arr(v, p, STEPS_MAX, 1);
        const read = readStep(prev?.steps);
        return items.map((item, i) => read(item, i, `${p}[${i}]`));
      },
      { prev: prev?.steps, required: true },
    );
    return { variables, steps };
  },
  present: (s) => ({ variables: maskByName(s.variables), steps: s.steps.map(presentStep) }),
  target: (s) => s.steps[0]?.url ?? '',
  hosts(s) {
    const vars = new Map(Object.entries(s.variables));
    const hosts = s.steps.map((step) => {
      const r = substitute(step.url, vars, 0);
      return ('text' in r ? urlHost(r.text) : null) ?? step.url;
    });
    return [...new Set(hosts)];
  },
  check: (s, _state, io) => runWorkflow(s, io),
  routes(t, ctx) {
    t.post('/workflow-monitor/build-step', { ...TOK, access: 'write' }, async (req) => ({
      step: await buildStepAssisted(ctx, parseBody(req, buildStepBody)),
    }));
  },
};
