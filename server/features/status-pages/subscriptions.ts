import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import { rfc3339 } from '../../lib/clock';
import { STATUS_CONFIRMATIONS_PER_HOUR } from '../../lib/limits';
import { readLink, signLink } from '../auth/links';
import { FailureLimiter } from '../auth/rate-limit';
import { historyKey, uptimeOfMany } from '../history/service';
import { queueMail } from '../mail/service';
import { formatDuration } from '../sources/messages';
import { sourceKind } from '../sources/registry';
import { pageUrl } from './service';
import {
  confirmedSubscribers,
  confirmSubscriber,
  deleteSubscriber,
  deleteUnconfirmedBefore,
  findPageBySlug,
  findSubscriber,
  findSubscriberByEmail,
  insertSubscriber,
  type PageRow,
  pagesAbove,
  type SubscriberRow,
} from './store';
import { incidentsOf, publicStatus } from './summary';

/**
 * Mail subscriptions of status pages (docs/api.md, "Status pages"): double opt-in through signed links,
 * confirmation mails limited per address, and one mail per incident start and resolution to confirmed
 * subscribers, each with an unsubscribe link and `List-Unsubscribe`.
 */

const HOUR_MS = 3_600_000;
const VERIFY_TTL_MS = 7 * 24 * HOUR_MS;
/** Unsubscribe links are signed afresh in every mail; an old one still works for a year. */
const UNSUB_TTL_MS = 365 * 24 * HOUR_MS;

const limiters = new WeakMap<AppContext, FailureLimiter>();
function confirmations(ctx: AppContext): FailureLimiter {
  let l = limiters.get(ctx);
  if (!l) {
    l = new FailureLimiter(ctx, STATUS_CONFIRMATIONS_PER_HOUR, HOUR_MS);
    limiters.set(ctx, l);
  }
  return l;
}

/** An enabled page by slug, or 404 `status page not found` (unknown and disabled alike). */
export function publicPage(ctx: AppContext, slug: string): PageRow {
  const page = findPageBySlug(ctx.db, slug);
  if (page?.enabled !== 1) throw errors.notFound('status page');
  return page;
}

const titleOf = (page: PageRow) => (page.title === '' ? page.slug : page.title);

function unsubUrl(ctx: AppContext, sub: SubscriberRow): string {
  const token = signLink(ctx, 'status-unsub', { s: sub.id, e: sub.email }, UNSUB_TTL_MS);
  return `${ctx.publicUrl()}/status-subscribe/unsub?token=${token}`;
}

/**
 * `POST /status/{slug}/subscribe`: the same answer for every valid address, whether it is new, waiting
 * for confirmation, confirmed or over its hourly mails. A confirmation mail goes out unless the address is
 * confirmed already or has had STATUS_CONFIRMATIONS_PER_HOUR of them in the last hour.
 */
export function subscribe(ctx: AppContext, slug: string, email: string): void {
  const page = publicPage(ctx, slug);
  const address = email.toLowerCase();
  const existing = findSubscriberByEmail(ctx.db, page.id, address);
  if (existing?.confirmed === 1) return;
  const limiter = confirmations(ctx);
  try {
    limiter.check(address);
  } catch {
    return;
  }
  limiter.fail(address);
  const id =
    existing?.id ?? ctx.db.transaction(() => insertSubscriber(ctx.db, page.id, address, ctx.clock.now()));
  const token = signLink(ctx, 'status-verify', { s: id, e: address }, VERIFY_TTL_MS);
  const link = `${ctx.publicUrl()}/status-subscribe/verify?token=${token}`;
  queueMail(ctx, {
    to: address,
    subject: `[${titleOf(page)}] Confirm your subscription`,
    text: `Someone (hopefully you) asked for mail about incidents on ${pageUrl(ctx, page)}.\n\nConfirm within 7 days:\n${link}\n\nIf it was not you, ignore this mail: nothing is sent without confirmation.`,
  });
}

/** Retention: subscribers whose confirmation link expired unused are removed. */
export function pruneUnconfirmed(ctx: AppContext): number {
  return ctx.db.transaction(() => deleteUnconfirmedBefore(ctx.db, ctx.clock.now() - VERIFY_TTL_MS));
}

function subscriberOfLink(ctx: AppContext, purpose: 'status-verify' | 'status-unsub', token: unknown) {
  const data = readLink(ctx, purpose, token);
  if (!data || typeof data.s !== 'number' || typeof data.e !== 'string') return null;
  return { id: data.s, email: data.e };
}

/** `GET /status-subscribe/verify?token=`: confirms; a bad, expired or withdrawn link is 400. */
export function verify(ctx: AppContext, token: unknown): void {
  const ref = subscriberOfLink(ctx, 'status-verify', token);
  const sub = ref ? findSubscriber(ctx.db, ref.id) : undefined;
  if (!ref || !sub || sub.email !== ref.email) throw errors.badRequest('token: invalid or expired link');
  if (sub.confirmed !== 1) ctx.db.transaction(() => confirmSubscriber(ctx.db, sub.id));
}

/** `GET /status-subscribe/unsub?token=`: removes the subscriber; repeating it is fine; a bad link is 400. */
export function unsubscribe(ctx: AppContext, token: unknown): void {
  const ref = subscriberOfLink(ctx, 'status-unsub', token);
  if (!ref) throw errors.badRequest('token: invalid or expired link');
  const sub = findSubscriber(ctx.db, ref.id);
  if (sub && sub.email === ref.email) ctx.db.transaction(() => deleteSubscriber(ctx.db, sub.id));
}

// ---------------------------------------------------------------- incident mails

/** Incident mails already sent (a recovery comes as a ping frame and an alert frame at once). */
const sent = new WeakMap<AppContext, Set<string>>();

function once(ctx: AppContext, key: string): boolean {
  let s = sent.get(ctx);
  if (!s) {
    s = new Set();
    sent.set(ctx, s);
  }
  if (s.has(key)) return false;
  if (s.size >= 10_000) s.clear();
  s.add(key);
  return true;
}

/**
 * A `source:event` frame: when it reports a source going down, or coming back up from down, and the
 * source's status intervals show an incident that started (or ended) at that very moment, every
 * confirmed subscriber of each enabled page showing the source gets one mail. A transition to `down`
 * that continues an incident across an `unknown` gap, and anything in maintenance, sends nothing.
 */
export function onSourceEvent(
  ctx: AppContext,
  frame: { appid: number; kind: string; data: Record<string, unknown>; at?: number },
): void {
  const d = frame.data;
  if (typeof d.id !== 'number') return;
  const to = typeof d.to === 'string' ? d.to : typeof d.status === 'string' ? d.status : undefined;
  if (to === undefined) return;
  const starts = to === 'down';
  const ends = publicStatus(to) === 'up' && (d.from === 'down' || d.event === 'recovery');
  if (!starts && !ends) return;
  const pages = pagesAbove(ctx.db, frame.appid);
  if (pages.length === 0) return;
  const kind = typeof d.kind === 'string' ? d.kind : frame.kind.split(':')[0]!;
  const source = sourceKind(ctx, kind)?.find(ctx, d.id);
  if (!source || source.paused) return;
  const at = frame.at ?? ctx.clock.now();
  const { intervals } = uptimeOfMany(ctx, [source], ctx.clock.now());
  const last = incidentsOf(intervals).at(-1);
  if (!last) return;
  let phase: 'start' | 'end';
  if (starts && last.startedAt === at && last.resolvedAt === null) phase = 'start';
  else if (ends && last.resolvedAt === at) phase = 'end';
  else return;
  if (!once(ctx, `${historyKey(kind, source.id)}:${last.startedAt}:${phase}`)) return;
  for (const page of pages) {
    const subject =
      phase === 'start'
        ? `[${titleOf(page)}] ${source.name} is down`
        : `[${titleOf(page)}] ${source.name} recovered after ${formatDuration(at - last.startedAt)}`;
    const line =
      phase === 'start'
        ? `${source.name} is down since ${rfc3339(last.startedAt)}.`
        : `${source.name} is up again since ${rfc3339(at)}, after ${formatDuration(at - last.startedAt)} down.`;
    for (const sub of confirmedSubscribers(ctx.db, page.id)) {
      const unsub = unsubUrl(ctx, sub);
      queueMail(ctx, {
        to: sub.email,
        subject,
        text: `${line}\n\nStatus page: ${pageUrl(ctx, page)}\n\nUnsubscribe: ${unsub}`,
        headers: { 'List-Unsubscribe': `<${unsub}>` },
      });
    }
  }
}
