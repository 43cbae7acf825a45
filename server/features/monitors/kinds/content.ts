import { z } from 'zod';
import type { AppContext } from '../../../context';
import { principalOf, TOK } from '../../../http/auth';
import { errors } from '../../../http/errors';
import type { RouteTable } from '../../../http/routes';
import { parseBody } from '../../../http/validate';
import { rfc3339OrNull } from '../../../lib/clock';
import { askJson } from '../../assistant/provider';
import { type Extraction, extract, validateSelector } from '../content/extract';
import { type ContentRender, fetchPage } from '../content/fetch';
import {
  CONTENT_RULES,
  type ContentRule,
  changedEvent,
  evaluateRule,
  isContentRule,
  parseRuleValue,
} from '../content/rules';
import { htmlExcerpt, suggestSelectors, withProposedSelectors } from '../content/suggest';
import type { MonitorKind } from '../kind';
import { bad, httpUrl } from './validate';

export interface ContentSettings {
  url: string;
  selector: string;
  rule: ContentRule;
  value: string | number | null;
  render: ContentRender;
}

export interface ContentState {
  /** The extracted text of the last check that matched (≤ 10,000 characters). */
  lastValue: string | null;
  /** When that text last differed from the one before (unix ms); null until the first change. */
  lastChangedAt: number | null;
  /** url + selector + render the text was taken with: a baseline of another page or selector is no baseline. */
  basis: string;
}

const RENDERS: readonly ContentRender[] = ['html', 'browser'];
/** Largest `html` a test-rule request may carry. */
const TEST_HTML_MAX_CHARS = 2 * 1024 * 1024;
const TEXT_MAX_CHARS = 1_000;
const DEFAULTS = { intervalSec: 60, timeoutSec: 10, timeoutMaxSec: 120 };

/** An http or https URL (the HTTP kinds' reader), else 400 `{field}: …`; absent, null or empty: `required`. */
function parseUrl(raw: unknown, field = 'url'): string {
  if (raw === undefined || raw === null || raw === '') bad(field, 'required');
  return httpUrl()(raw, field);
}

function parseSelector(raw: unknown): string {
  if (raw === undefined || raw === null) throw errors.badRequest('selector: required');
  if (typeof raw !== 'string') throw errors.badRequest('selector: must be a string');
  return validateSelector(raw);
}

function parseRule(raw: unknown): ContentRule {
  if (!isContentRule(raw)) throw errors.badRequest(`rule: must be one of ${CONTENT_RULES.join(', ')}`);
  return raw;
}

function parseRender(raw: unknown): ContentRender {
  if (typeof raw !== 'string' || !(RENDERS as readonly string[]).includes(raw))
    throw errors.badRequest('render: must be html or browser');
  return raw as ContentRender;
}

function basisOf(s: ContentSettings): string {
  return JSON.stringify([s.url, s.selector, s.render]);
}

function detailsOf(ex: Extraction): Record<string, unknown> {
  return ex.number === null
    ? { text: ex.text, matched: ex.matched }
    : { text: ex.text, number: ex.number, matched: ex.matched };
}

/** What the assisted endpoints may reach: everything, unless private targets are blocked for non-admins. */
function allowPrivateFor(ctx: AppContext, req: Parameters<typeof principalOf>[0]): boolean {
  return !ctx.config.blockPrivateTargets || principalOf(req).admin;
}

/** Assisted requests get the kind's default check timeout; a request aborting does not outlive it. */
function assistedSignal(): AbortSignal {
  return AbortSignal.timeout(DEFAULTS.timeoutSec * 1000);
}

const suggestBody = z.object({
  url: z.unknown().optional(),
  text: z.string().trim().min(1, 'required').max(TEXT_MAX_CHARS),
  render: z.unknown().optional(),
});

const testRuleBody = z.object({
  url: z.unknown().optional(),
  html: z.string().max(TEST_HTML_MAX_CHARS).optional(),
  selector: z.unknown().optional(),
  rule: z.unknown().optional(),
  value: z.unknown().optional(),
  previous: z.string().max(TEST_HTML_MAX_CHARS).nullable().optional(),
  render: z.unknown().optional(),
});

const WRITE = { ...TOK, access: 'write' } as const;

/**
 * `content-monitor` (§2.3): the text a CSS selector picks out of a page, judged by one of six rules.
 * `changed` keeps the last text as a baseline and sends a `changed` message when it differs.
 */
export const contentMonitor: MonitorKind<ContentSettings, ContentState> = {
  kind: 'content-monitor',
  defaults: DEFAULTS,

  parse(body, prev) {
    const has = (k: string) => body[k] !== undefined;
    const url = has('url') || !prev ? parseUrl(body.url) : prev.url;
    const selector = has('selector') || !prev ? parseSelector(body.selector) : prev.selector;
    const rule = has('rule') ? parseRule(body.rule) : (prev?.rule ?? 'changed');
    const render = has('render') ? parseRender(body.render) : (prev?.render ?? 'html');
    const value = parseRuleValue(rule, 'value' in body ? body.value : (prev?.value ?? null));
    return { url, selector, rule, value, render };
  },

  present(s, state) {
    return {
      url: s.url,
      selector: s.selector,
      rule: s.rule,
      value: s.value,
      render: s.render,
      lastValue: state?.lastValue ?? null,
      lastChangedAt: rfc3339OrNull(state?.lastChangedAt),
    };
  },

  target: (s) => s.url,

  hosts: (s) => [new URL(s.url).hostname],

  async check(s, state, io) {
    const page = await fetchPage(io.ctx, {
      url: s.url,
      render: s.render,
      signal: io.signal,
      timeoutSec: io.timeoutSec,
      allowPrivate: io.allowPrivate,
    });
    if (!page.ok)
      return {
        ok: false,
        error: page.error,
        ...(page.cannotRun ? { cannotRun: true } : {}),
        responseTimeMs: page.cannotRun ? null : page.responseTimeMs,
        details: { text: '', matched: 0 },
      };
    const ex = extract(page.html, s.selector);
    const basis = basisOf(s);
    const sameBasis = state?.basis === basis;
    const previous = sameBasis ? state.lastValue : null;
    const verdict = evaluateRule(s.rule, s.value, ex, previous);
    const outcome = {
      ok: verdict.ok,
      ...(verdict.error === undefined ? {} : { error: verdict.error }),
      responseTimeMs: page.responseTimeMs,
      details: detailsOf(ex),
    };
    if (ex.matched === 0) return outcome; // nothing to keep: the baseline stays what it was
    const differs = previous !== null && previous !== ex.text;
    const next: ContentState = {
      lastValue: ex.text,
      lastChangedAt: differs ? io.startedAt : sameBasis ? state.lastChangedAt : null,
      basis,
    };
    return {
      ...outcome,
      state: next,
      ...(s.rule === 'changed' && differs && previous !== null
        ? { event: changedEvent(io.name, previous, ex.text) }
        : {}),
    };
  },

  routes(t: RouteTable, ctx: AppContext) {
    t.post('/content-monitor/suggest-selector', WRITE, async (req) => {
      const body = parseBody(req, suggestBody);
      const url = parseUrl(body.url);
      const render = body.render === undefined ? 'html' : parseRender(body.render);
      const page = await fetchPage(ctx, {
        url,
        render,
        signal: assistedSignal(),
        timeoutSec: DEFAULTS.timeoutSec,
        allowPrivate: allowPrivateFor(ctx, req),
      });
      if (!page.ok) return { candidates: [], error: page.error };
      // With the assistant's provider: its selectors first, each checked on the page; else local rules only.
      const proposed = await askJson(
        ctx,
        'You find CSS selectors for a web page monitor. Given a page and a text on it, propose up to 5 CSS selectors of the element holding that text, the most stable first (ids, data attributes, semantic classes; no generated class names). Answer {"selectors": ["..."]}.',
        JSON.stringify({ text: body.text, html: htmlExcerpt(page.html) }),
        (v) => {
          const list = (v as { selectors?: unknown })?.selectors;
          return Array.isArray(list) && list.every((x) => typeof x === 'string')
            ? (list as string[]).slice(0, 10)
            : undefined;
        },
      );
      if (proposed) return { candidates: withProposedSelectors(page.html, body.text, proposed) };
      return { candidates: suggestSelectors(page.html, body.text) };
    });

    t.post('/content-monitor/test-rule', WRITE, async (req) => {
      const body = parseBody(req, testRuleBody);
      const selector = parseSelector(body.selector);
      const rule = parseRule(body.rule ?? 'changed');
      const value = parseRuleValue(rule, body.value);
      let html = body.html;
      if (html === undefined) {
        if (body.url === undefined || body.url === null) throw errors.badRequest('url: required (or html)');
        const page = await fetchPage(ctx, {
          url: parseUrl(body.url),
          render: body.render === undefined ? 'html' : parseRender(body.render),
          signal: assistedSignal(),
          timeoutSec: DEFAULTS.timeoutSec,
          allowPrivate: allowPrivateFor(ctx, req),
        });
        if (!page.ok) return { ok: false, text: '', matched: 0, error: page.error };
        html = page.html;
      }
      const ex = extract(html, selector);
      const verdict = evaluateRule(rule, value, ex, body.previous);
      // changed: ok = the text differs from `previous` (true without one)
      const ok =
        rule === 'changed' && verdict.ok && body.previous != null ? verdict.changed === true : verdict.ok;
      const error = verdict.error ?? (ok ? undefined : 'text has not changed');
      return { ok, ...detailsOf(ex), ...(error === undefined ? {} : { error }) };
    });
  },
};
