import type { IncomingHttpHeaders } from 'node:http';
import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { ApiError, errors } from '../../http/errors';
import type { Paging } from '../../http/paging';
import { followPath, MISSING, parseJsonPath } from '../../lib/json-path';
import { issueToken, tokenDigest, tokenPrefix } from '../../lib/tokens';
import { askJson } from '../assistant/provider';
import { isRestricted, receivedChannel } from '../channels/access';
import { presentMessage } from '../messages/present';
import { deleteOneMessage } from '../messages/service';
import { readIds } from '../messages/store';
import { maySend, writableChannel } from '../sources/access';
import { sendSourceMessage } from '../sources/messages';
import {
  type CompiledRule,
  compileRules,
  compileTemplate,
  DEFAULT_TITLE,
  defaultText,
  firstMatch,
  type Incoming,
  jsonEqual,
  type MatchCondition,
  render,
} from './engine';
import { presentEvent, presentRule } from './present';
import {
  allRouterUsers,
  deleteEvent,
  deleteRule,
  disableRulesOf,
  type EventRow,
  eventOfMessage,
  findEvent,
  findRouterByDigest,
  findRouterOfUser,
  findRule,
  insertEvent,
  insertRouter,
  insertRule,
  listRules,
  pageEvents,
  pageRoutedMessages,
  pruneEventsOfUser,
  type RouterRow,
  type RuleFields,
  type RuleRow,
  rotateRouterToken,
  routersWithDefaultIn,
  setRulePosition,
  updateRouter,
  updateRule,
  usersWithRulesOn,
} from './store';

/** Source kinds of `service::source` and the event-sources registry (wire rules §1.6, §11). */
export const RULE_KIND = 'router-rule';
export const ROUTER_KIND = 'webhook-router';
/** Who sends the messages of the default channel (no rule matched). */
export const ROUTER_SENDER = 'Webhook router';
/** §0.7: at most this many rules per user. */
export const ROUTER_RULES_MAX = 200;
/** §11: an event keeps at most this many headers, each value at most this many characters. */
export const EVENT_HEADERS_MAX = 50;
export const EVENT_HEADER_VALUE_CHARS = 1_000;
/** §11: bodies up to 64 KiB are stored; a larger one is refused (413) before anything is stored. */
export const EVENT_BODY_BYTES = 64 * 1024;
/** Retention (§11): 30 days, at most 1,000 events per user; rows deleted per user per run. */
export const EVENT_KEEP_MS = 30 * 86_400_000;
export const EVENTS_PER_USER = 1_000;
export const EVENT_PRUNE_BATCH = 5_000;
export const MATCH_MAX = 10;

// ---- the singleton

/** §0.2: the user-level class refuses API tokens with a restricted scope. */
export function requireUserLevel(p: Principal): void {
  if (isRestricted(p)) throw errors.restrictedScope('do this');
}

/** The caller's router, created on first use (`enabled`, no default channel); `token` only when just created. */
export function ensureRouter(ctx: AppContext, userId: number): { row: RouterRow; token?: string } {
  const row = findRouterOfUser(ctx.db, userId);
  if (row) return { row };
  const { token, digest, hint } = issueToken('R');
  ctx.db.transaction(() => insertRouter(ctx.db, userId, digest, hint, ctx.clock.now()));
  return { row: findRouterOfUser(ctx.db, userId)!, token };
}

/** A channel the caller may route to (own, or shared with `send` and accepted; never the system channel). */
function routableChannel(ctx: AppContext, p: Principal, id: number, field: string): number {
  try {
    return writableChannel(ctx, p, id).id;
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) throw errors.badRequest(`${field}: no such channel`);
    throw err;
  }
}

export function changeRouter(
  ctx: AppContext,
  p: Principal,
  patch: { enabled?: boolean | undefined; defaultAppid?: number | null | undefined },
): { row: RouterRow; token?: string } {
  const made = ensureRouter(ctx, p.userId);
  const row = made.row;
  const enabled = patch.enabled ?? row.enabled === 1;
  let channelId = row.default_channel_id;
  if (patch.defaultAppid !== undefined)
    channelId =
      patch.defaultAppid === null ? null : routableChannel(ctx, p, patch.defaultAppid, 'defaultAppid');
  ctx.db.transaction(() => updateRouter(ctx.db, row.id, enabled, channelId));
  return { ...made, row: findRouterOfUser(ctx.db, p.userId)! };
}

export function rotateRouter(ctx: AppContext, p: Principal): { row: RouterRow; token: string } {
  const { row } = ensureRouter(ctx, p.userId);
  const { token, digest, hint } = issueToken('R');
  ctx.db.transaction(() => rotateRouterToken(ctx.db, row.id, digest, hint));
  return { row: findRouterOfUser(ctx.db, p.userId)!, token };
}

// ---- rules

export interface RuleInput {
  name?: string | undefined;
  appid?: number | undefined;
  pathPattern?: string | undefined;
  method?: string | null | undefined;
  match?: unknown[] | undefined;
  title?: string | undefined;
  message?: string | null | undefined;
  priority?: number | null | undefined;
  enabled?: boolean | undefined;
  position?: number | undefined;
}

/** `match` as §11 has it: ≤ 10 `{path, op, value?}`, paths from `$`, `equals` with a value. */
export function checkMatch(raw: readonly unknown[]): MatchCondition[] {
  if (raw.length > MATCH_MAX) throw errors.badRequest(`match: at most ${MATCH_MAX} conditions`);
  return raw.map((c, i) => {
    const at = `match[${i}]`;
    if (typeof c !== 'object' || c === null || Array.isArray(c))
      throw errors.badRequest(`${at}: must be an object`);
    const o = c as Record<string, unknown>;
    if (typeof o.path !== 'string') throw errors.badRequest(`${at}.path: required`);
    if (o.path.length > 500) throw errors.badRequest(`${at}.path: at most 500 characters`);
    const steps = parseRootPath(o.path);
    if (typeof steps === 'string') throw errors.badRequest(`${at}.path: ${steps}`);
    if (o.op !== 'equals' && o.op !== 'exists' && o.op !== 'notExists')
      throw errors.badRequest(`${at}.op: must be one of equals, exists, notExists`);
    if (o.op === 'equals') {
      if (!Object.hasOwn(o, 'value')) throw errors.badRequest(`${at}.value: required`);
      if (JSON.stringify(o.value).length > 1_000)
        throw errors.badRequest(`${at}.value: at most 1000 characters`);
      return { path: o.path.trim(), op: o.op, value: o.value };
    }
    return { path: o.path.trim(), op: o.op };
  });
}

/** A body path of a condition: from `$` (§0.1); the parser's error text, or true. */
function parseRootPath(path: string): string | true {
  const steps = parseJsonPath(path, { requireRoot: true });
  return Array.isArray(steps) ? true : steps.error;
}

/** A glob of path segments (`*` one, `**` any), starting with `/`, or `**`. */
export function checkPattern(raw: string): string {
  const s = raw.trim();
  if (s === '') throw errors.badRequest('pathPattern: required');
  if (s.length > 500) throw errors.badRequest('pathPattern: at most 500 characters');
  if (/[\s?#]/.test(s)) throw errors.badRequest('pathPattern: no spaces, ? or # (the path has no query)');
  if (!s.startsWith('/') && !s.startsWith('**'))
    throw errors.badRequest('pathPattern: must start with / (or be **)');
  if (s.split('/').some((seg) => seg.includes('**') && seg !== '**'))
    throw errors.badRequest('pathPattern: ** must be a whole segment');
  return s;
}

function ownRule(ctx: AppContext, p: Principal, id: number): RuleRow {
  const row = findRule(ctx.db, id);
  if (!row || row.user_id !== p.userId) throw errors.notFound('router rule');
  return row;
}

export function listRulesOf(ctx: AppContext, p: Principal): RuleRow[] {
  return listRules(ctx.db, p.userId);
}

/** Renumbers the user's rules 1..n in the given order (only rows whose position changes are written). */
function renumber(ctx: AppContext, ids: readonly number[]): void {
  ids.forEach((id, i) => {
    setRulePosition(ctx.db, id, i + 1);
  });
}

function clampPosition(position: number | undefined, n: number): number {
  if (position === undefined) return n;
  return Math.min(Math.max(position, 1), n);
}

export function createRule(ctx: AppContext, p: Principal, input: RuleInput): RuleRow {
  if (input.name === undefined) throw errors.badRequest('name: required');
  if (input.appid === undefined) throw errors.badRequest('appid: required');
  const fields: RuleFields = {
    channelId: routableChannel(ctx, p, input.appid, 'appid'),
    name: input.name,
    pathPattern: checkPattern(input.pathPattern ?? '**'),
    method: input.method ?? null,
    match: JSON.stringify(checkMatch(input.match ?? [])),
    title: input.title ?? DEFAULT_TITLE,
    message: input.message ?? null,
    priority: input.priority ?? null,
    enabled: input.enabled ?? true,
  };
  ensureRouter(ctx, p.userId);
  const id = ctx.db.transaction(() => {
    const order = listRules(ctx.db, p.userId).map((r) => r.id);
    if (order.length >= ROUTER_RULES_MAX) throw errors.userCap(ROUTER_RULES_MAX, 'router rules');
    const at = clampPosition(input.position, order.length + 1);
    const id = insertRule(ctx.db, p.userId, fields, at, ctx.clock.now());
    order.splice(at - 1, 0, id);
    renumber(ctx, order);
    return id;
  });
  return findRule(ctx.db, id)!;
}

export function changeRule(ctx: AppContext, p: Principal, id: number, input: RuleInput): RuleRow {
  const row = ownRule(ctx, p, id);
  // Enabling a rule checks its channel again: one the owner lost `send` on stays off until `appid`
  // is changed (§0.3, like resuming a paused source).
  const enabling = input.enabled === true && row.enabled !== 1;
  const fields: RuleFields = {
    channelId:
      (input.appid === undefined || input.appid === row.channel_id) && !enabling
        ? row.channel_id
        : routableChannel(ctx, p, input.appid ?? row.channel_id, 'appid'),
    name: input.name ?? row.name,
    pathPattern: input.pathPattern === undefined ? row.path_pattern : checkPattern(input.pathPattern),
    method: input.method === undefined ? row.method : input.method,
    match: input.match === undefined ? row.match : JSON.stringify(checkMatch(input.match)),
    title: input.title ?? row.title,
    message: input.message === undefined ? row.message : input.message,
    priority: input.priority === undefined ? row.priority : input.priority,
    enabled: input.enabled ?? row.enabled === 1,
  };
  ctx.db.transaction(() => {
    updateRule(ctx.db, id, fields);
    if (input.position !== undefined) {
      const order = listRules(ctx.db, p.userId)
        .map((r) => r.id)
        .filter((x) => x !== id);
      order.splice(clampPosition(input.position, order.length + 1) - 1, 0, id);
      renumber(ctx, order);
    }
  });
  return findRule(ctx.db, id)!;
}

export function removeRule(ctx: AppContext, p: Principal, id: number): void {
  ownRule(ctx, p, id);
  ctx.db.transaction(() => {
    deleteRule(ctx.db, id);
    renumber(
      ctx,
      listRules(ctx.db, p.userId).map((r) => r.id),
    );
  });
}

// ---- events and routed messages

export interface PageInput {
  limit: number;
  since: number;
  nextUrl: (since: number) => string;
}

function paging<T>(rows: T[], req: PageInput, idOf: (r: T) => number): { paging: Paging; shown: T[] } {
  const hasNext = rows.length > req.limit;
  const shown = hasNext ? rows.slice(0, req.limit) : rows;
  const out: Paging = { size: shown.length, limit: req.limit };
  if (hasNext) {
    out.since = idOf(shown[shown.length - 1]!);
    out.next = req.nextUrl(out.since);
  }
  return { paging: out, shown };
}

export function listEvents(ctx: AppContext, p: Principal, req: PageInput) {
  const page = paging(pageEvents(ctx.db, p.userId, req.since, req.limit + 1), req, (r) => r.id);
  return { paging: page.paging, events: page.shown.map(presentEvent) };
}

function ownEvent(ctx: AppContext, p: Principal, id: number): EventRow {
  const row = findEvent(ctx.db, id);
  if (!row || row.user_id !== p.userId) throw errors.notFound('router event');
  return row;
}

export function getEvent(ctx: AppContext, p: Principal, id: number): EventRow {
  return ownEvent(ctx, p, id);
}

export function removeEvent(ctx: AppContext, p: Principal, id: number): void {
  ownEvent(ctx, p, id);
  ctx.db.transaction(() => deleteEvent(ctx.db, id));
}

export function listRoutedMessages(ctx: AppContext, p: Principal, req: PageInput) {
  const page = paging(pageRoutedMessages(ctx.db, p.userId, req.since, req.limit + 1), req, (r) => r.id);
  const read = readIds(ctx.db, p.userId, page.shown);
  return {
    paging: page.paging,
    messages: page.shown.map((r) => ({
      ...presentMessage(r, read.has(r.id)),
      routerEventId: r.router_event_id,
      ruleId: r.rule_id,
    })),
  };
}

/** Deletes a message the caller's router created (someone else's, or not a routed one: 404). */
export function removeRoutedMessage(ctx: AppContext, p: Principal, messageId: number): void {
  if (!eventOfMessage(ctx.db, p.userId, messageId)) throw errors.notFound('message');
  deleteOneMessage(ctx, p, messageId);
}

// ---- assisted rule from an event

const MATCH_KEYS = ['action', 'event', 'type', 'status', 'object_kind'] as const;
const TITLE_KEYS = ['title', 'subject', 'summary', 'name'] as const;
const TEXT_KEYS = ['message', 'text', 'description'] as const;

function eventBody(row: EventRow): unknown {
  if (row.body_kind === 'json') return JSON.parse(row.body!) as unknown;
  return row.body_kind === 'text' ? row.body : null;
}

/** A top-level key of an object body holding a string (the drafts only look there). */
function firstStringKey(body: unknown, keys: readonly string[]): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const o = body as Record<string, unknown>;
  return keys.find((k) => Object.hasOwn(o, k) && typeof o[k] === 'string');
}

export interface RuleDraft {
  name: string;
  appid: number | null;
  pathPattern: string;
  method: string;
  match: MatchCondition[];
  title: string;
  message: string | null;
  priority: null;
  enabled: true;
}

/** §11: the draft of a rule that matches this event (and events like it). */
export function draftFromEvent(ctx: AppContext, p: Principal, eventId: number): RuleDraft {
  const row = ownEvent(ctx, p, eventId);
  const router = findRouterOfUser(ctx.db, p.userId);
  const body = eventBody(row);
  const key = firstStringKey(body, MATCH_KEYS);
  const value = key === undefined ? undefined : (body as Record<string, string>)[key]!;
  const titleKey = firstStringKey(body, TITLE_KEYS);
  const textKey = firstStringKey(body, TEXT_KEYS);
  const name = `${row.method} ${row.path}${key === undefined ? '' : ` (${key} ${value})`}`;
  return {
    name: name.length > 200 ? name.slice(0, 200) : name,
    appid: router?.default_channel_id ?? null,
    pathPattern: row.path,
    method: row.method,
    match: key === undefined ? [] : [{ path: `$.${key}`, op: 'equals', value }],
    title: titleKey === undefined ? DEFAULT_TITLE : `{{${titleKey}}}`,
    message: textKey === undefined ? null : `{{${textKey}}}`,
    priority: null,
    enabled: true,
  };
}

/**
 * The assistant's provider, when set, refines the local draft: a better name, title and message template,
 * and match conditions, each checked (a condition must hold on this event; strings within the rule's
 * limits). No provider, a failure or an unusable answer: the local draft as it is.
 */
async function refinedDraft(ctx: AppContext, p: Principal, eventId: number): Promise<RuleDraft> {
  const draft = draftFromEvent(ctx, p, eventId);
  const row = ownEvent(ctx, p, eventId);
  const body = eventBody(row);
  const refined = await askJson(
    ctx,
    'You write a rule of a webhook router: it turns incoming webhooks like this one into notifications. Given the event and a draft rule, answer {"name", "match", "title", "message"}: name (at most 200 characters), match (at most 10 conditions {"path": "$.a.b", "op": "equals"|"exists"|"notExists", "value"?} that select events like this one), title and message templates using {{a.b}} for body fields, {{method}}, {{path}}, {{headers.x}} and {{query.x}}.',
    JSON.stringify({
      event: { method: row.method, path: row.path, body: JSON.stringify(body ?? null).slice(0, 8_000) },
      draft: { name: draft.name, match: draft.match, title: draft.title, message: draft.message },
    }),
    (v) => {
      const o = v as { name?: unknown; match?: unknown; title?: unknown; message?: unknown };
      if (!o || typeof o !== 'object') return undefined;
      const out: Partial<RuleDraft> = {};
      if (typeof o.name === 'string' && o.name.trim() !== '') out.name = o.name.trim().slice(0, 200);
      if (typeof o.title === 'string' && o.title.trim() !== '' && o.title.length <= 1_000)
        out.title = o.title;
      if (typeof o.message === 'string' && o.message.trim() !== '' && o.message.length <= 10_000)
        out.message = o.message;
      if (Array.isArray(o.match) && o.match.length <= 10) {
        const conds = o.match.map((c) => heldCondition(c, body));
        if (conds.every((c) => c !== undefined)) out.match = conds as MatchCondition[];
      }
      return Object.keys(out).length > 0 ? out : undefined;
    },
  );
  return refined ? { ...draft, ...refined } : draft;
}

/** A condition of the provider's, when well formed and true of this event's body. */
function heldCondition(c: unknown, body: unknown): MatchCondition | undefined {
  const { path, op, value } = (c ?? {}) as { path?: unknown; op?: unknown; value?: unknown };
  if (typeof path !== 'string' || !['equals', 'exists', 'notExists'].includes(String(op))) return undefined;
  const steps = parseJsonPath(path, { requireRoot: true });
  if ('error' in steps) return undefined;
  const found = followPath(body, steps);
  if (op === 'exists') return found === MISSING ? undefined : { path, op };
  if (op === 'notExists') return found === MISSING ? { path, op } : undefined;
  return found !== MISSING && jsonEqual(found, value) ? { path, op: 'equals', value } : undefined;
}

export async function ruleFromEvent(ctx: AppContext, p: Principal, eventId: number, save: boolean) {
  const draft = await refinedDraft(ctx, p, eventId);
  if (!save) return { rule: { id: null, ...draft, position: null, createdAt: null } };
  if (draft.appid === null) throw errors.badRequest('appid: no such channel');
  const row = createRule(ctx, p, { ...draft, appid: draft.appid });
  return { rule: presentRule(row) };
}

// ---- ingest

/** Header names never stored with an event: credentials and hop-by-hop headers (§11). */
const DROPPED_HEADERS = new Set([
  'authorization',
  'cookie',
  'proxy-authorization',
  'x-service-key',
  'x-legacy-key',
  'x-gotify-key',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The headers an event keeps: lower-case names, no secrets, at most 50, values cut to 1,000 characters. */
export function keptHeaders(raw: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || DROPPED_HEADERS.has(name)) continue;
    if (n++ >= EVENT_HEADERS_MAX) break;
    const text = Array.isArray(value) ? value.join(', ') : value;
    out[name] = text.length > EVENT_HEADER_VALUE_CHARS ? text.slice(0, EVENT_HEADER_VALUE_CHARS) : text;
  }
  return out;
}

export interface IngestInput {
  path: string;
  method: string;
  query: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** How the body is stored: JSON text (json), the text itself (text), or nothing. */
  bodyKind: EventRow['body_kind'];
  /** The body as stored: its text, or that text's UTF-8 bytes when the request's own bytes can be kept. */
  bodyText: string | Uint8Array | null;
  size: number;
}

function isEmpty(o: Record<string, unknown>): boolean {
  for (const _ in o) return false;
  return true;
}

export interface IngestAnswer {
  id: number;
  matchedRuleId: number | null;
  messageId: number | null;
}

interface RuleCache {
  routerId: number;
  version: number;
  rules: CompiledRule[];
}
const ruleCaches = new WeakMap<AppContext, Map<number, RuleCache>>();
const DEFAULT_TITLE_PARTS = compileTemplate(DEFAULT_TITLE);

/** The user's enabled rules, compiled, from memory while the router row's `rules_version` has not moved. */
function rulesOf(ctx: AppContext, router: RouterRow): CompiledRule[] {
  let byUser = ruleCaches.get(ctx);
  if (!byUser) {
    byUser = new Map();
    ruleCaches.set(ctx, byUser);
  }
  const cached = byUser.get(router.user_id);
  if (cached && cached.routerId === router.id && cached.version === router.rules_version) return cached.rules;
  const rules = compileRules(listRules(ctx.db, router.user_id));
  byUser.set(router.user_id, { routerId: router.id, version: router.rules_version, rules });
  return rules;
}

/** `POST|PUT|PATCH|GET /router/{token}/{path…}` (§11): store the event, route it, answer its ids. */
export function ingest(ctx: AppContext, token: string, input: IngestInput): IngestAnswer {
  const router = tokenPrefix(token) === 'R' ? findRouterByDigest(ctx.db, tokenDigest(token)) : undefined;
  if (router?.enabled !== 1) throw errors.notFound('router');
  if (input.size > EVENT_BODY_BYTES) throw errors.payloadTooLarge(EVENT_BODY_BYTES);
  const headers = keptHeaders(input.headers);
  const req: Incoming = {
    path: input.path,
    method: input.method,
    query: input.query,
    headers,
    body: input.body,
  };
  const rule = firstMatch(rulesOf(ctx, router), req);
  const channelId = rule ? rule.channelId : router.default_channel_id;
  const now = ctx.clock.now();
  let quotaSpent = false;
  const out = ctx.db.transaction(() => {
    let messageId: number | null = null;
    if (channelId !== null) {
      const title = render(rule?.title ?? DEFAULT_TITLE_PARTS, req);
      const rendered = rule?.message ? render(rule.message, req) : '';
      const m: { title: string; message: string; priority?: number } = {
        title: title.length > 1_000 ? title.slice(0, 1_000) : title,
        message: rendered === '' ? defaultText(req) : rendered.slice(0, 65_536),
      };
      if (rule && rule.priority !== null) m.priority = rule.priority;
      const src = rule
        ? { kind: RULE_KIND, id: rule.id, name: rule.name, channelId }
        : { kind: ROUTER_KIND, id: router.id, name: ROUTER_SENDER, channelId };
      // sendSourceMessage's priority is required; the channel's default when the rule has none.
      messageId = sendSourceMessage(
        ctx,
        src,
        'routed',
        m as { title: string; message: string; priority: number },
      );
      quotaSpent = messageId === null;
    }
    const id = insertEvent(ctx.db, {
      userId: router.user_id,
      path: input.path,
      method: input.method,
      query: isEmpty(input.query) ? '{}' : JSON.stringify(input.query),
      headers: JSON.stringify(headers),
      bodyKind: input.bodyKind,
      body: input.bodyText,
      size: input.size,
      receivedAt: now,
      ruleId: rule?.id ?? null,
      channelId,
      messageId,
    });
    return { id, matchedRuleId: rule?.id ?? null, messageId };
  });
  if (quotaSpent) throw errors.dailyQuotaExceeded();
  return out;
}

// ---- retention and lost channels

/** Events older than 30 days, and all but each user's newest 1,000 (bounded per user and run). */
export function pruneRouterEvents(ctx: AppContext): number {
  const olderThan = ctx.clock.now() - EVENT_KEEP_MS;
  let removed = 0;
  for (const userId of allRouterUsers(ctx.db))
    removed += ctx.db.transaction(() =>
      pruneEventsOfUser(ctx.db, userId, olderThan, EVENTS_PER_USER, EVENT_PRUNE_BATCH),
    );
  return removed;
}

/**
 * A share changed (§0.3): users who can no longer send to the channel have their rules there disabled
 * and lose it as their default channel.
 */
export function dropLostChannel(ctx: AppContext, appid: number): void {
  const lost = (userId: number) => {
    const v = receivedChannel(ctx, userId, appid);
    return !v || !maySend(v);
  };
  ctx.db.transaction(() => {
    for (const userId of usersWithRulesOn(ctx.db, appid))
      if (lost(userId)) disableRulesOf(ctx.db, appid, userId);
    for (const r of routersWithDefaultIn(ctx.db, [appid]))
      if (lost(r.user_id)) updateRouter(ctx.db, r.id, r.enabled === 1, null);
  });
}
