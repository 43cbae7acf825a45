import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { rfc3339 } from '../../lib/clock';
import { channelInScope, inScope, receivedChannel } from '../channels/access';
import { planLimitsOf } from '../plans/caps';
import {
  countPagesOfUser,
  deletePage,
  deleteSubscriber,
  findPage,
  findPageBySlug,
  findSubscriber,
  insertPage,
  listPagesOfUser,
  listSubscribers,
  type PageRow,
  type PageSettings,
  type SubscriberRow,
  updatePage,
} from './store';

/** Status page records (docs/api.md, "Status pages"): the owner's CRUD, plan rules and subscriber list. */

export interface PageInput {
  appid?: number;
  slug?: string;
  title?: string;
  description?: string;
  enabled?: boolean;
  lang?: 'en' | 'ru';
  brandingHidden?: boolean;
}

/** The caller's own page inside an API token's scope; anything else is 404. */
function ownPage(ctx: AppContext, p: Principal, id: number): PageRow {
  const row = findPage(ctx.db, id);
  if (!row || row.user_id !== p.userId || !channelInScope(ctx, p, row.channel_id))
    throw errors.notFound('status page');
  return row;
}

/** A channel the caller owns (a shared one is not enough), in scope, not the internal channel. */
function ownChannel(ctx: AppContext, p: Principal, appid: number): number {
  const v = receivedChannel(ctx, p.userId, appid);
  if (!v?.owned || !inScope(p, v.row) || v.row.internal === 1)
    throw errors.badRequest('appid: no such channel');
  return v.row.id;
}

/** `brandingHidden` as shown: kept after a downgrade to free, but not applied there. */
export function brandingApplied(ctx: AppContext, row: PageRow): boolean {
  return row.branding_hidden === 1 && planLimitsOf(ctx, row.user_id).plan !== 'free';
}

export function presentPage(ctx: AppContext, row: PageRow) {
  return {
    id: row.id,
    appid: row.channel_id,
    slug: row.slug,
    title: row.title,
    description: row.description,
    enabled: row.enabled === 1,
    lang: row.lang,
    brandingHidden: row.branding_hidden === 1,
    url: pageUrl(ctx, row),
    createdAt: rfc3339(row.created_at),
  };
}

export function pageUrl(ctx: AppContext, row: Pick<PageRow, 'slug'>): string {
  return `${ctx.publicUrl()}/status/${row.slug}`;
}

export function listPages(ctx: AppContext, p: Principal): PageRow[] {
  return listPagesOfUser(ctx.db, p.userId).filter((r) => channelInScope(ctx, p, r.channel_id));
}

export function getPage(ctx: AppContext, p: Principal, id: number): PageRow {
  return ownPage(ctx, p, id);
}

function settingsOf(row: PageRow): PageSettings {
  return {
    channelId: row.channel_id,
    slug: row.slug,
    title: row.title,
    description: row.description,
    enabled: row.enabled === 1,
    lang: row.lang,
    brandingHidden: row.branding_hidden === 1,
  };
}

/** Checks a create or update: the channel, the plan's branding rule and the slug's uniqueness. */
function merged(ctx: AppContext, p: Principal, base: PageSettings, input: PageInput, id: number | null) {
  const next: PageSettings = { ...base };
  if (input.appid !== undefined && input.appid !== base.channelId)
    next.channelId = ownChannel(ctx, p, input.appid);
  if (input.slug !== undefined) next.slug = input.slug;
  if (input.title !== undefined) next.title = input.title;
  if (input.description !== undefined) next.description = input.description;
  if (input.enabled !== undefined) next.enabled = input.enabled;
  if (input.lang !== undefined) next.lang = input.lang;
  if (input.brandingHidden !== undefined) next.brandingHidden = input.brandingHidden;
  // Turning branding off is a pro/business feature; a page that kept it through a downgrade may keep it.
  if (next.brandingHidden && !base.brandingHidden && planLimitsOf(ctx, p.userId).plan === 'free')
    throw errors.forbidden('brandingHidden needs the pro or business plan');
  const taken = findPageBySlug(ctx.db, next.slug);
  if (taken && taken.id !== id) throw errors.conflict('slug: already taken');
  return next;
}

export function createPage(
  ctx: AppContext,
  p: Principal,
  input: PageInput & { appid: number; slug: string },
): PageRow {
  const base: PageSettings = {
    channelId: ownChannel(ctx, p, input.appid),
    slug: input.slug,
    title: '',
    description: '',
    enabled: true,
    lang: 'en',
    brandingHidden: false,
  };
  const settings = merged(ctx, p, base, { ...input, appid: base.channelId }, null);
  const id = ctx.db.transaction(() => {
    const { plan, limits } = planLimitsOf(ctx, p.userId);
    if (countPagesOfUser(ctx.db, p.userId) >= limits.statusPages)
      throw errors.planLimit(`at most ${limits.statusPages} status pages on the ${plan} plan`);
    return insertPage(ctx.db, p.userId, settings, ctx.clock.now());
  });
  return findPage(ctx.db, id)!;
}

export function updatePageFor(ctx: AppContext, p: Principal, id: number, input: PageInput): PageRow {
  const row = ownPage(ctx, p, id);
  const next = merged(ctx, p, settingsOf(row), input, id);
  ctx.db.transaction(() => updatePage(ctx.db, id, next));
  return findPage(ctx.db, id)!;
}

export function removePage(ctx: AppContext, p: Principal, id: number): void {
  ownPage(ctx, p, id);
  ctx.db.transaction(() => deletePage(ctx.db, id));
}

export function presentSubscriber(row: SubscriberRow) {
  return { id: row.id, email: row.email, confirmed: row.confirmed === 1, createdAt: rfc3339(row.created_at) };
}

export function subscribersOf(ctx: AppContext, p: Principal, id: number): SubscriberRow[] {
  return listSubscribers(ctx.db, ownPage(ctx, p, id).id);
}

export function removeSubscriber(ctx: AppContext, p: Principal, id: number, sid: number): void {
  const page = ownPage(ctx, p, id);
  const sub = findSubscriber(ctx.db, sid);
  if (!sub || sub.page_id !== page.id) throw errors.notFound('subscriber');
  ctx.db.transaction(() => deleteSubscriber(ctx.db, sid));
}
