import type { Request } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../../context';
import { principalOf, TOK } from '../../../http/auth';
import { parseBody } from '../../../http/validate';
import { BROWSER_WORKFLOWS_PER_USER } from '../../../lib/limits';
import type { MonitorKind } from '../kind';
import { getMonitor, updateMonitor } from '../service';
import { buildBrowserStepAssisted } from './browser/build-step';
import { runBrowserSteps } from './browser/run';
import { readShot } from './browser/shots';
import {
  type BrowserSettings,
  parseBrowserSettings,
  presentBrowserSettings,
  presentStep,
  readCookies,
  readSteps,
  readVariables,
} from './browser/steps';
import { field, httpUrl, int, obj } from './validate';
import { substitute } from './workflow';

const DEFAULTS = { intervalSec: 300, timeoutSec: 60, timeoutMaxSec: 300 };
/** Assisted runs (test-step, login) end after the kind's default check timeout. */
const ASSISTED_TIMEOUT_MS = DEFAULTS.timeoutSec * 1000;
const WRITE = { ...TOK, access: 'write' } as const;

function allowPrivateFor(ctx: AppContext, req: Parameters<typeof principalOf>[0]): boolean {
  return !ctx.config.blockPrivateTargets || principalOf(req).admin;
}

function gotoUrls(s: Pick<BrowserSettings, 'steps' | 'variables'>): string[] {
  const vars = new Map(Object.entries(s.variables));
  return s.steps
    .filter((st) => st.action === 'goto')
    .map((st) => {
      const r = substitute(st.url ?? '', vars, 0);
      return 'text' in r ? r.text : (st.url ?? '');
    });
}

const buildStepBody = z.object({
  description: z.string().trim().min(1, 'required').max(10_000),
  url: z.string().trim().max(2_048).optional(),
});

/** `POST /browser-workflow/test-step`: the steps once, nothing saved; the test answer with the page's title. */
async function testStep(ctx: AppContext, req: Request) {
  const body = obj(req.body ?? {}, 'body');
  const p = principalOf(req);
  const steps = field(body, 'steps', 'steps', (v, path) => readSteps(v, path, undefined), {
    prev: undefined,
    required: true,
  });
  const variables = field(body, 'variables', 'variables', (v, path) => readVariables(v, path, undefined), {
    prev: undefined,
    def: {},
  });
  const cookies = field(body, 'cookies', 'cookies', (v, path) => readCookies(v, path, undefined, steps), {
    prev: undefined,
    def: [],
  });
  const r = await runBrowserSteps(
    { steps, variables, cookies },
    {
      ctx,
      signal: AbortSignal.timeout(ASSISTED_TIMEOUT_MS),
      allowPrivate: allowPrivateFor(ctx, req),
      owner: { userId: p.userId, monitorId: null },
    },
  );
  const o = r.outcome;
  return {
    ok: o.ok,
    status: o.ok ? 'up' : 'down',
    responseTimeMs: o.responseTimeMs,
    ...(o.error === undefined ? {} : { error: o.error }),
    details: { ...o.details, title: r.title },
  };
}

/**
 * `POST /browser-workflow/login`: opens `url`, runs the steps (the sign-in) and answers the cookies the
 * browser holds afterwards, with their values (the caller just signed in). With `workflowId` (the caller's
 * own browser workflow) a successful login's cookies replace that workflow's `cookies`.
 */
async function login(ctx: AppContext, req: Request, kind: BrowserKind) {
  const body = obj(req.body ?? {}, 'body');
  const p = principalOf(req);
  const url = field(body, 'url', 'url', httpUrl(), { prev: undefined, required: true });
  const none = body.steps === undefined || (Array.isArray(body.steps) && body.steps.length === 0);
  const given = none ? [] : readSteps(body.steps, 'steps', undefined);
  const workflowId = field(body, 'workflowId', 'workflowId', int(1, Number.MAX_SAFE_INTEGER), {
    prev: undefined,
    def: 0,
  });
  // the workflow is looked up (404) before anything runs
  if (workflowId) getMonitor(ctx, p, kind, workflowId);
  const steps = [...readSteps([{ action: 'goto', url }], 'url', undefined), ...given];
  const r = await runBrowserSteps(
    { steps, variables: {}, cookies: [] },
    {
      ctx,
      signal: AbortSignal.timeout(ASSISTED_TIMEOUT_MS),
      allowPrivate: allowPrivateFor(ctx, req),
      captureCookies: true,
    },
  );
  const cookies = r.cookies ?? [];
  if (r.outcome.ok && workflowId) updateMonitor(ctx, p, kind, workflowId, {}, { cookies });
  return {
    ok: r.outcome.ok,
    finalUrl: r.finalUrl,
    cookies,
    ...(r.outcome.error === undefined ? {} : { error: r.outcome.error }),
  };
}

type BrowserKind = MonitorKind<BrowserSettings>;

/**
 * `browser-workflow` (§2.3): steps in the user's own Chromium (server/lib/chromium.ts), a fresh context
 * per check with the workflow's cookies set before step 1. A failing check saves a JPEG screenshot
 * (browser/shots.ts) whose key rides in the down message's `extras["service::screenshot"]`. Paused on
 * battery (server/lib/power.ts); at most 20 per user.
 */
export const browserWorkflow: BrowserKind = {
  kind: 'browser-workflow',
  defaults: DEFAULTS,
  pausedOnBattery: true,
  perUser: { max: BROWSER_WORKFLOWS_PER_USER, things: 'browser workflows' },
  parse: (body, prev) => parseBrowserSettings(body, prev),
  present: (s) => presentBrowserSettings(s),
  target: (s) => gotoUrls(s)[0] ?? '',
  hosts(s) {
    const hosts = gotoUrls(s).map((u) => {
      try {
        return new URL(u).hostname;
      } catch {
        return u;
      }
    });
    return [...new Set(hosts)];
  },
  async check(s, _state, io) {
    const r = await runBrowserSteps(s, {
      ctx: io.ctx,
      signal: io.signal,
      allowPrivate: io.allowPrivate,
      ...(io.owner ? { owner: io.owner } : {}),
    });
    return r.outcome;
  },
  routes(t, ctx) {
    t.post('/browser-workflow/test-step', WRITE, (req) => testStep(ctx, req));
    t.post('/browser-workflow/build-step', WRITE, async (req) => {
      const body = parseBody(req, buildStepBody);
      const step = await buildBrowserStepAssisted(ctx, body.description, body.url);
      return { step: presentStep(step, { reveal: true }) };
    });
    t.post('/browser-workflow/login', WRITE, (req) => login(ctx, req, browserWorkflow));
    // Screenshots of failed checks: an <img> sends no header, so `?token=` is accepted (auth.ts, point 4).
    t.get('/browser-shot/:key', TOK, (req, res) => {
      const jpeg = readShot(ctx, principalOf(req), String(req.params.key));
      res.setHeader('Content-Type', 'image/jpeg');
      res.setHeader('Cache-Control', 'private, max-age=86400');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.end(jpeg);
      return undefined;
    });
  },
};
