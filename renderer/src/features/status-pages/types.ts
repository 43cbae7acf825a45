/** Wire shapes of status pages (docs/api.md "Status pages"). */

export type PageLang = 'en' | 'ru';

/** The body of POST /status-page and PUT /status-page/{id}. */
export interface StatusPageInput {
  appid: number;
  slug: string;
  title: string;
  description: string;
  enabled: boolean;
  lang: PageLang;
  brandingHidden: boolean;
}

export interface StatusPage extends StatusPageInput {
  id: number;
  /** `{publicUrl}/status/{slug}`. */
  url: string;
  createdAt: string;
}

export interface Subscriber {
  id: number;
  email: string;
  confirmed: boolean;
  createdAt: string;
}

export type Overall = 'operational' | 'degraded' | 'outage' | 'maintenance';
export type PublicStatus = 'up' | 'down' | 'maintenance' | 'pending' | 'unknown';

export interface SummaryDay {
  date: string;
  uptime: number | null;
  status: 'up' | 'down' | 'maintenance' | 'none';
}

/** GET /status/{slug}/summary (public). */
export interface StatusSummary {
  slug: string;
  title: string;
  description: string;
  lang: PageLang;
  generatedAt: string;
  brandingHidden: boolean;
  overall: Overall;
  overallUptime90d: number | null;
  services: { name: string; status: PublicStatus; uptime90d: number | null; days: SummaryDay[] }[];
  incidents: { title: string; status: 'open' | 'resolved'; startedAt: string; resolvedAt?: string }[];
  maintenance: { name: string; startsAt: string; endsAt: string; active: boolean }[];
}
