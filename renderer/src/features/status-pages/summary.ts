import type { HistoryDay } from '../heartbeats/types';
import type { Overall, PageLang, StatusPageInput, SummaryDay } from './types';

/** The public page's banner, in its language (the same texts the server renders). */
const BANNER: Record<PageLang, Record<Overall, string>> = {
  en: {
    operational: 'All systems operational',
    degraded: 'Partial outage',
    outage: 'Major outage',
    maintenance: 'Under maintenance',
  },
  ru: {
    operational: 'Все системы работают',
    degraded: 'Частичный сбой',
    outage: 'Серьёзный сбой',
    maintenance: 'Плановые работы',
  },
};

export function bannerText(overall: Overall, lang: PageLang): string {
  return BANNER[lang][overall];
}

/** A summary day as the shared uptime bar reads a history day (the summary carries no down seconds). */
export function asHistoryDays(days: SummaryDay[]): HistoryDay[] {
  return days.map((d) => ({ ...d, downSec: 0, avgMs: null }));
}

/** The rule the server applies to slugs: 3-60 characters of a-z, 0-9 and -. */
export const SLUG_PATTERN = '^[a-z0-9-]{3,60}$';

/** A slug suggested from a title: lowercase ASCII words joined by `-`, cut to 60. */
export function slugFrom(title: string): string {
  return title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
}

/** Whether the plan applies `brandingHidden` (pro and business; free keeps the flag but shows the footer). */
export function canHideBranding(plan: string | undefined): boolean {
  return plan === 'pro' || plan === 'business';
}

/** The form's state: the create body, with no channel chosen yet while the channels load. */
export type PageDraft = Omit<StatusPageInput, 'appid'> & { appid: number | '' };

export function blankPage(appid: number | ''): PageDraft {
  return { appid, slug: '', title: '', description: '', enabled: true, lang: 'en', brandingHidden: false };
}
