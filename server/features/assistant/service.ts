import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { ApiError, errors } from '../../http/errors';
import { rfc3339 } from '../../lib/clock';
import { assertUserLevel } from '../verified-hosts/service';
import { gatherFacts } from './data';
import { computeInsights, type Insight } from './insights';
import { type Lang, langOf, localReply } from './local';
import { type ChatMessage, complete, extractJson, ProviderFailure, providerModel } from './provider';
import { systemPrompt } from './snapshot';
import {
  appendMessage,
  deleteThread,
  findThread,
  insertThread,
  lastMessages,
  listMessages,
  listThreads,
  type ThreadRow,
} from './store';

/** Messages of a thread sent to the provider (after the system prompt). */
export const HISTORY_SENT = 20;
export const TITLE_CHARS = 60;
/** How long computed insights are reused (per user, language and polish). */
export const INSIGHTS_TTL_MS = 10 * 60_000;

function ownThread(ctx: AppContext, p: Principal, id: number): ThreadRow {
  const row = findThread(ctx.db, id);
  if (!row || row.user_id !== p.userId) throw errors.notFound('thread');
  return row;
}

export function threadsOf(ctx: AppContext, p: Principal): ThreadRow[] {
  assertUserLevel(p);
  return listThreads(ctx.db, p.userId);
}

export function messagesOf(ctx: AppContext, p: Principal, id: number) {
  assertUserLevel(p);
  return listMessages(ctx.db, ownThread(ctx, p, id).id);
}

export function removeThread(ctx: AppContext, p: Principal, id: number): void {
  assertUserLevel(p);
  ctx.db.transaction(() => deleteThread(ctx.db, ownThread(ctx, p, id).id));
}

export interface ChatInput {
  threadId?: number | undefined;
  message: string;
  lang?: Lang | undefined;
}

/** `{title}` of a new thread: the first 60 characters of the first message, on one line. */
export function threadTitle(message: string): string {
  return [...message.replace(/\s+/g, ' ').trim()].slice(0, TITLE_CHARS).join('');
}

/**
 * `POST /assistant/chat`. The question is stored first; a provider failure answers 502 and leaves it in the
 * thread without a reply (the next turn sends it again as history), docs/assistant.md.
 */
export async function chat(ctx: AppContext, p: Principal, input: ChatInput) {
  assertUserLevel(p);
  const now = ctx.clock.now();
  const threadId = ctx.db.transaction(() => {
    const id =
      input.threadId === undefined
        ? insertThread(ctx.db, p.userId, threadTitle(input.message), now)
        : ownThread(ctx, p, input.threadId).id;
    appendMessage(ctx.db, id, 'user', input.message, now);
    return id;
  });
  const lang = langOf(input.message, input.lang);
  const facts = gatherFacts(ctx, p);
  const model = providerModel(ctx);
  let reply: string;
  if (model) {
    const history: ChatMessage[] = lastMessages(ctx.db, threadId, HISTORY_SENT).map((m) => ({
      role: m.role,
      content: m.content,
    }));
    const system = systemPrompt(facts, computeInsights(ctx, facts, lang), lang);
    try {
      reply = await complete(ctx, [{ role: 'system', content: system }, ...history]);
    } catch (err) {
      if (err instanceof ProviderFailure)
        throw new ApiError(502, `assistant provider failed: ${err.message}`);
      throw err;
    }
  } else reply = localReply(input.message, facts, lang);
  // The thread may have been deleted while the provider answered: then the reply is not stored.
  ctx.db.transaction(() => {
    if (findThread(ctx.db, threadId)) appendMessage(ctx.db, threadId, 'assistant', reply, ctx.clock.now());
  });
  return { threadId, reply, provider: model ?? 'local' };
}

export interface InsightsAnswer {
  generatedAt: string;
  provider: string;
  polished: boolean;
  /** (ext) The configured model, null without a provider: the UI offers polishing only when there is one. */
  model: string | null;
  items: Insight[];
}

interface Cached {
  at: number;
  answer: InsightsAnswer;
}

const caches = new WeakMap<AppContext, Map<string, Cached>>();

function cacheOf(ctx: AppContext): Map<string, Cached> {
  let c = caches.get(ctx);
  if (!c) {
    c = new Map();
    caches.set(ctx, c);
  }
  return c;
}

/** Drops a user's cached insights (their account went). */
export function forgetInsights(ctx: AppContext, userId: number): void {
  const c = caches.get(ctx);
  if (!c) return;
  for (const k of c.keys()) if (k.startsWith(`${userId}:`)) c.delete(k);
}

/**
 * `GET /assistant/insights`: the rules over the user's data, cached 10 minutes per user, language and
 * polish. `polish` asks the provider to rewrite titles and details; without a provider, or when it fails
 * or answers something unusable, the items come back as the rules wrote them with `polished: false`.
 */
export async function insights(
  ctx: AppContext,
  p: Principal,
  opts: { refresh: boolean; polish: boolean; lang: Lang },
): Promise<InsightsAnswer> {
  assertUserLevel(p);
  const now = ctx.clock.now();
  const cache = cacheOf(ctx);
  const key = `${p.userId}:${opts.lang}:${opts.polish ? 'p' : ''}`;
  const hit = cache.get(key);
  if (hit && !opts.refresh && now - hit.at < INSIGHTS_TTL_MS) return hit.answer;
  for (const [k, v] of cache) if (now - v.at >= INSIGHTS_TTL_MS) cache.delete(k);
  const items = computeInsights(ctx, gatherFacts(ctx, p), opts.lang);
  const model = providerModel(ctx);
  let answer: InsightsAnswer = {
    generatedAt: rfc3339(now),
    provider: 'local',
    polished: false,
    model: model ?? null,
    items,
  };
  if (opts.polish && model && items.length > 0) {
    const polished = await polish(ctx, items, opts.lang);
    if (polished) answer = { ...answer, provider: model, polished: true, items: polished };
  }
  cache.set(key, { at: now, answer });
  return answer;
}

async function polish(ctx: AppContext, items: Insight[], lang: Lang): Promise<Insight[] | undefined> {
  const input = items.map((i, n) => ({
    n,
    kind: i.kind,
    severity: i.severity,
    title: i.title,
    detail: i.detail,
  }));
  let reply: string;
  try {
    reply = await complete(ctx, [
      {
        role: 'system',
        content: [
          'Rewrite each insight of a notification server for its user: a short, clear title (at most 80',
          'characters) and a one- or two-sentence detail. Keep every name and number. Answer with JSON only:',
          '{"items": [{"n": <same n>, "title": "...", "detail": "..."}]} with one entry per input item.',
          lang === 'ru' ? 'Write in Russian.' : 'Write in English.',
        ].join(' '),
      },
      { role: 'user', content: JSON.stringify({ items: input }) },
    ]);
  } catch (err) {
    ctx.log.warn('assistant polish failed', { detail: (err as Error).message });
    return undefined;
  }
  const parsed = extractJson(reply) as { items?: unknown } | undefined;
  const list = Array.isArray(parsed?.items) ? parsed.items : Array.isArray(parsed) ? parsed : undefined;
  if (!list || list.length !== items.length) return undefined;
  const out: Insight[] = [];
  for (const [n, item] of items.entries()) {
    const e = list.find((x) => (x as { n?: unknown })?.n === n) ?? list[n];
    const { title, detail } = (e ?? {}) as { title?: unknown; detail?: unknown };
    if (typeof title !== 'string' || typeof detail !== 'string' || !title.trim() || !detail.trim())
      return undefined;
    out.push({ ...item, title: title.trim().slice(0, 200), detail: detail.trim().slice(0, 1_000) });
  }
  return out;
}
