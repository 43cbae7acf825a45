import { randomInt } from 'node:crypto';
import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import type { Paging } from '../../http/paging';
import { askJson } from '../assistant/provider';
import { channelInScope, isRestricted, receivedChannel } from '../channels/access';
import { findChannel } from '../channels/store';
import { compilePattern } from '../monitors/kinds/assertions';
import { maySend, sourcesInView, writableChannel } from '../sources/access';
import { statusChanged } from '../sources/messages';
import { presentEvent, presentRule, type RuleMatch } from './present';
import {
  allInboxIds,
  countInboxesOfUser,
  countRulesOfInbox,
  deleteEvent,
  deleteInbox,
  deleteRule,
  type EventRow,
  findEvent,
  findInbox,
  findInboxByLocalPart,
  findRule,
  type InboxFields,
  type InboxRow,
  inboxesOfUser,
  insertInbox,
  insertRule,
  pageEvents,
  pruneEventsOfInbox,
  type RuleFields,
  type RuleRow,
  recipientInboxes,
  rulesOfInbox,
  setRulePosition,
  updateInbox,
  updateRule,
  writeInboxStatus,
} from './store';

/** Source kind of `service::source` and the event-sources registry (§0.3, §10). */
export const KIND = 'email-inbox';
/** §0.7: at most this many inboxes per user; rules per inbox (not in the wire rules: a sane bound). */
export const INBOXES_PER_USER = 100;
export const RULES_PER_INBOX = 100;
/** §10: `localPart` after lowercasing; the generated one is 12 of `[a-z0-9]`. */
export const LOCAL_PART_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const LOCAL_PART_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const GENERATED_LOCAL_PART_CHARS = 12;
/** Retention (§10): 30 days, at most 1,000 events per inbox; rows deleted per inbox per run. */
export const EVENT_KEEP_MS = 30 * 86_400_000;
export const EVENTS_PER_INBOX = 1_000;
export const EVENT_PRUNE_BATCH = 5_000;
/** A rule's pattern and title lengths. */
export const PATTERN_MAX_CHARS = 1_000;
export const TITLE_MAX_CHARS = 1_000;
export const DEFAULT_RULE_TITLE = '{{subject}}';

// ---------------------------------------------------------------- inboxes

/** The caller's own inbox, inside an API token's scope; anything else is 404 (§0.2). */
export function ownInbox(ctx: AppContext, p: Principal, id: number): InboxRow {
  const row = findInbox(ctx.db, id);
  if (!row || row.user_id !== p.userId || !channelInScope(ctx, p, row.channel_id))
    throw errors.notFound('email inbox');
  return row;
}

export function listInboxes(ctx: AppContext, p: Principal, appid?: number): InboxRow[] {
  return sourcesInView(ctx, p, inboxesOfUser(ctx.db, p.userId), appid);
}

export function generateLocalPart(): string {
  let s = '';
  for (let i = 0; i < GENERATED_LOCAL_PART_CHARS; i++)
    s += LOCAL_PART_CHARS[randomInt(LOCAL_PART_CHARS.length)];
  return s;
}

/** A requested local part, lowercased and checked against the pattern (§10). */
export function checkLocalPart(raw: string): string {
  const v = raw.trim().toLowerCase();
  if (!LOCAL_PART_RE.test(v))
    throw errors.badRequest('localPart: 1-64 of a-z, 0-9, . _ - starting with a letter or digit');
  return v;
}

export interface InboxInput {
  appid?: number | undefined;
  name?: string | undefined;
  paused?: boolean | undefined;
  localPart?: string | undefined;
  priority?: number | null | undefined;
}

export function createInbox(ctx: AppContext, p: Principal, input: InboxInput): InboxRow {
  if (input.appid === undefined) throw errors.badRequest('appid: required');
  if (input.name === undefined) throw errors.badRequest('name: required');
  const channel = writableChannel(ctx, p, input.appid);
  const requested = input.localPart === undefined ? undefined : checkLocalPart(input.localPart);
  const now = ctx.clock.now();
  const id = ctx.db.transaction(() => {
    if (countInboxesOfUser(ctx.db, p.userId) >= INBOXES_PER_USER)
      throw errors.userCap(INBOXES_PER_USER, 'email inboxes');
    let localPart = requested;
    if (localPart !== undefined) {
      if (findInboxByLocalPart(ctx.db, localPart)) throw errors.localPartTaken();
    } else {
      do localPart = generateLocalPart();
      while (findInboxByLocalPart(ctx.db, localPart));
    }
    const fields: InboxFields = {
      channelId: channel.id,
      name: input.name!,
      localPart,
      priority: input.priority ?? null,
    };
    return insertInbox(ctx.db, p.userId, fields, input.paused ? 'paused' : 'pending', now);
  });
  statusChanged(ctx, channel.id);
  return findInbox(ctx.db, id)!;
}

export function changeInbox(ctx: AppContext, p: Principal, id: number, input: InboxInput): InboxRow {
  const row = ownInbox(ctx, p, id);
  let channelId = row.channel_id;
  if (input.appid !== undefined && input.appid !== row.channel_id)
    channelId = writableChannel(ctx, p, input.appid).id;
  // Resuming asks what creating asks: a channel the caller may still write to (§0.3).
  if (input.paused === false && row.status === 'paused') writableChannel(ctx, p, channelId);
  const localPart = input.localPart === undefined ? row.local_part : checkLocalPart(input.localPart);
  const now = ctx.clock.now();
  ctx.db.transaction(() => {
    if (localPart !== row.local_part && findInboxByLocalPart(ctx.db, localPart))
      throw errors.localPartTaken();
    updateInbox(ctx.db, id, {
      channelId,
      name: input.name ?? row.name,
      localPart,
      priority: input.priority === undefined ? row.priority : input.priority,
    });
    if (input.paused === true && row.status !== 'paused') writeInboxStatus(ctx.db, id, 'paused', now);
    else if (input.paused === false && row.status === 'paused')
      writeInboxStatus(ctx.db, id, row.last_check_at === null ? 'pending' : 'ok', now);
  });
  statusChanged(ctx, row.channel_id);
  if (channelId !== row.channel_id) statusChanged(ctx, channelId);
  return findInbox(ctx.db, id)!;
}

export function removeInbox(ctx: AppContext, p: Principal, id: number): void {
  const row = ownInbox(ctx, p, id);
  ctx.db.transaction(() => deleteInbox(ctx.db, id));
  statusChanged(ctx, row.channel_id);
}

/** A recipient who lost `send` on the channel: their inboxes there are paused (§0.3). */
export function pauseLostRecipients(ctx: AppContext, appid: number): void {
  const channel = findChannel(ctx.db, appid);
  if (!channel) return;
  const lost = recipientInboxes(ctx.db, appid, channel.user_id).filter((row) => {
    if (row.status === 'paused') return false;
    const v = receivedChannel(ctx, row.user_id, appid);
    return !v || !maySend(v);
  });
  if (lost.length === 0) return;
  const now = ctx.clock.now();
  ctx.db.transaction(() => {
    for (const row of lost) writeInboxStatus(ctx.db, row.id, 'paused', now);
  });
  statusChanged(ctx, appid);
}

// ---------------------------------------------------------------- rules

export interface RuleInput {
  name?: string | undefined;
  match?: Record<string, unknown> | undefined;
  action?: 'message' | 'drop' | undefined;
  title?: string | null | undefined;
  priority?: number | null | undefined;
  position?: number | undefined;
}

const MATCH_KEYS = ['from', 'subject', 'body'] as const;

/** `match`: each present key a §0.1 pattern (substring, or `/re/flags` that compiles); unknown keys ignored. */
export function checkMatch(raw: Record<string, unknown>): RuleMatch {
  const out: RuleMatch = {};
  for (const k of MATCH_KEYS) {
    const v = raw[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw errors.badRequest(`match.${k}: must be a string`);
    if (v === '') throw errors.badRequest(`match.${k}: must not be empty (leave it out to match anything)`);
    if (v.length > PATTERN_MAX_CHARS)
      throw errors.badRequest(`match.${k}: at most ${PATTERN_MAX_CHARS} characters`);
    if (!compilePattern(v)) throw errors.badRequest(`match.${k}: not a valid regular expression`);
    out[k] = v;
  }
  return out;
}

function ownRule(ctx: AppContext, p: Principal, inboxId: number, ruleId: number): RuleRow {
  const inbox = ownInbox(ctx, p, inboxId);
  const rule = findRule(ctx.db, ruleId);
  if (!rule || rule.inbox_id !== inbox.id) throw errors.notFound('email inbox rule');
  return rule;
}

export function listRules(ctx: AppContext, p: Principal, inboxId: number): RuleRow[] {
  return rulesOfInbox(ctx.db, ownInbox(ctx, p, inboxId).id);
}

function renumber(ctx: AppContext, ids: readonly number[]): void {
  ids.forEach((id, i) => {
    setRulePosition(ctx.db, id, i + 1);
  });
}

function clampPosition(position: number | undefined, n: number): number {
  if (position === undefined) return n;
  return Math.min(Math.max(position, 1), n);
}

export function createRule(ctx: AppContext, p: Principal, inboxId: number, input: RuleInput): RuleRow {
  const inbox = ownInbox(ctx, p, inboxId);
  const fields: RuleFields = {
    name: input.name ?? 'Rule',
    match: JSON.stringify(checkMatch(input.match ?? {})),
    action: input.action ?? 'message',
    title: input.title ?? null,
    priority: input.priority ?? null,
  };
  const id = ctx.db.transaction(() => {
    if (countRulesOfInbox(ctx.db, inbox.id) >= RULES_PER_INBOX)
      throw errors.perInboxCap(RULES_PER_INBOX, 'rules');
    const order = rulesOfInbox(ctx.db, inbox.id).map((r) => r.id);
    const at = clampPosition(input.position, order.length + 1);
    const id = insertRule(ctx.db, inbox.id, fields, at, ctx.clock.now());
    order.splice(at - 1, 0, id);
    renumber(ctx, order);
    return id;
  });
  return findRule(ctx.db, id)!;
}

export function changeRule(
  ctx: AppContext,
  p: Principal,
  inboxId: number,
  ruleId: number,
  input: RuleInput,
): RuleRow {
  const row = ownRule(ctx, p, inboxId, ruleId);
  const fields: RuleFields = {
    name: input.name ?? row.name,
    match: input.match === undefined ? row.match : JSON.stringify(checkMatch(input.match)),
    action: input.action ?? row.action,
    title: input.title === undefined ? row.title : input.title,
    priority: input.priority === undefined ? row.priority : input.priority,
  };
  ctx.db.transaction(() => {
    updateRule(ctx.db, row.id, fields);
    if (input.position !== undefined) {
      const order = rulesOfInbox(ctx.db, row.inbox_id)
        .map((r) => r.id)
        .filter((x) => x !== row.id);
      order.splice(clampPosition(input.position, order.length + 1) - 1, 0, row.id);
      renumber(ctx, order);
    }
  });
  return findRule(ctx.db, row.id)!;
}

export function removeRule(ctx: AppContext, p: Principal, inboxId: number, ruleId: number): void {
  const row = ownRule(ctx, p, inboxId, ruleId);
  ctx.db.transaction(() => {
    deleteRule(ctx.db, row.id);
    renumber(
      ctx,
      rulesOfInbox(ctx.db, row.inbox_id).map((r) => r.id),
    );
  });
}

// ---------------------------------------------------------------- events

export interface PageInput {
  limit: number;
  since: number;
  nextUrl: (since: number) => string;
}

/** `GET /email-inbox/event?inboxId&limit&since`: newest first, paging as `GET /message`. */
export function listEvents(ctx: AppContext, p: Principal, inboxId: number | undefined, req: PageInput) {
  // One inbox; or, for a scoped API token, the inboxes on channels in its scope; else all of the user's.
  let ids: number[] | undefined;
  if (inboxId !== undefined) ids = [ownInbox(ctx, p, inboxId).id];
  else if (isRestricted(p)) ids = listInboxes(ctx, p).map((r) => r.id);
  const rows = pageEvents(ctx.db, p.userId, ids, req.since, req.limit + 1);
  const hasNext = rows.length > req.limit;
  const shown = hasNext ? rows.slice(0, req.limit) : rows;
  const paging: Paging = { size: shown.length, limit: req.limit };
  if (hasNext) {
    paging.since = shown[shown.length - 1]!.id;
    paging.next = req.nextUrl(paging.since);
  }
  return { paging, events: shown.map(presentEvent) };
}

export function ownEvent(ctx: AppContext, p: Principal, id: number): EventRow {
  const row = findEvent(ctx.db, id);
  const inbox = row && findInbox(ctx.db, row.inbox_id);
  if (!row || !inbox || inbox.user_id !== p.userId || !channelInScope(ctx, p, inbox.channel_id))
    throw errors.notFound('email inbox event');
  return row;
}

export function removeEvent(ctx: AppContext, p: Principal, id: number): void {
  ownEvent(ctx, p, id);
  ctx.db.transaction(() => deleteEvent(ctx.db, id));
}

/** Events older than 30 days, and all but each inbox's newest 1,000 (bounded per inbox and run). */
export function pruneInboxEvents(ctx: AppContext): number {
  const olderThan = ctx.clock.now() - EVENT_KEEP_MS;
  let removed = 0;
  for (const id of allInboxIds(ctx.db))
    removed += ctx.db.transaction(() =>
      pruneEventsOfInbox(ctx.db, id, olderThan, EVENTS_PER_INBOX, EVENT_PRUNE_BATCH),
    );
  return removed;
}

// ---------------------------------------------------------------- assisted rule from an event

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** §10: the subject itself, or with digits `/^…$/i` where each run of digits is `\d+`. */
export function subjectPattern(subject: string): string {
  if (!/\d/.test(subject)) return subject;
  const parts = subject.split(/\d+/).map(escapeRegex);
  return `/^${parts.join('\\d+')}$/i`;
}

/** A pattern of the provider's, when it compiles and matches this mail's field. */
function heldPattern(pattern: unknown, text: string): string | undefined {
  if (typeof pattern !== 'string' || pattern.trim() === '' || pattern.length > 1_000) return undefined;
  const res = compilePattern(pattern)?.(text);
  return res?.ok && res.match ? pattern : undefined;
}

/**
 * The assistant's provider, when set, refines the local draft (name, title, from and subject patterns),
 * each checked: a pattern must compile and match this mail. No provider, a failure or an unusable answer:
 * the local draft. Only the sender and the subject are sent, never the body.
 */
async function refineDraft(
  ctx: AppContext,
  ev: { mail_from: string; subject: string },
  draft: { name: string; match: RuleMatch; title: string },
): Promise<{ name: string; match: RuleMatch; title: string }> {
  const refined = await askJson(
    ctx,
    'You write a rule of an email inbox that turns mails like this one into notifications. Given the sender, the subject and a draft rule, answer {"name", "match": {"from"?, "subject"?}, "title"}: patterns are a case-insensitive substring or /regex/flags that must match this mail; the title template may use {{subject}}, {{from}} and {{to}}; name at most 200 characters.',
    JSON.stringify({ from: ev.mail_from, subject: ev.subject, draft }),
    (v) => {
      const o = v as { name?: unknown; match?: { from?: unknown; subject?: unknown }; title?: unknown };
      if (!o || typeof o !== 'object') return undefined;
      const out: Partial<typeof draft> = {};
      if (typeof o.name === 'string' && o.name.trim() !== '') out.name = o.name.trim().slice(0, 200);
      if (typeof o.title === 'string' && o.title.trim() !== '' && o.title.length <= 1_000)
        out.title = o.title;
      if (o.match && typeof o.match === 'object') {
        const match: RuleMatch = {};
        const from = heldPattern(o.match.from, ev.mail_from);
        const subject = heldPattern(o.match.subject, ev.subject);
        if (from !== undefined) match.from = from;
        if (subject !== undefined) match.subject = subject;
        if (
          (o.match.from === undefined || from) &&
          (o.match.subject === undefined || subject) &&
          Object.keys(match).length > 0
        )
          out.match = match;
      }
      return Object.keys(out).length > 0 ? out : undefined;
    },
  );
  return refined ? { ...draft, ...refined } : draft;
}

export async function ruleFromEvent(ctx: AppContext, p: Principal, eventId: number, save: boolean) {
  const ev = ownEvent(ctx, p, eventId);
  const match: RuleMatch = {};
  if (ev.mail_from !== '') match.from = ev.mail_from;
  if (ev.subject !== '') match.subject = subjectPattern(ev.subject);
  const nameSource = ev.subject === '' ? `Mail from ${ev.mail_from || 'anyone'}` : ev.subject;
  const local = {
    name: nameSource.length > 200 ? nameSource.slice(0, 200) : nameSource,
    match,
    title: DEFAULT_RULE_TITLE,
  };
  const better = await refineDraft(ctx, ev, local);
  const draft = {
    inboxId: ev.inbox_id,
    name: better.name,
    match: better.match,
    action: 'message' as const,
    title: better.title,
    priority: null,
  };
  if (!save) return { rule: { id: null, ...draft, position: null, createdAt: null } };
  const row = createRule(ctx, p, ev.inbox_id, { ...draft, match: { ...draft.match } });
  return { rule: presentRule(row) };
}
