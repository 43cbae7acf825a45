import type { UserFacts } from './data';
import type { Insight } from './insights';
import type { Lang } from './local';

/**
 * The data snapshot of the provider's system prompt (docs/assistant.md): counts, quota, source names,
 * kinds and statuses, channel names and insight titles. Never message bodies or titles, tokens, secrets,
 * settings, URLs or email addresses; names are user text, so anything in them that looks like an address,
 * a URL or a token is masked as well.
 */
export function scrub(text: string): string {
  return text
    .replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, '[url]')
    .replace(/[^\s@<>()"',;]+@[^\s@<>()"',;]+\.[a-z]{2,}/gi, '[address]')
    .replace(/[A-Za-z0-9_\-+/=]{20,}/g, '[token]')
    .slice(0, 200);
}

export function buildSnapshot(f: UserFacts, insights: Insight[]): Record<string, unknown> {
  return {
    now: new Date(f.now).toISOString(),
    totals: f.totals,
    quota: f.quota,
    channels: f.channels.map((c) => ({
      name: scrub(c.name),
      owned: c.owned,
      messages: c.messages,
      unread: c.unread,
      messagesLast24h: c.day,
    })),
    sources: f.sources.map((s) => ({
      name: scrub(s.name),
      kind: s.kind,
      status: s.status,
      paused: s.paused,
    })),
    failedDeliveriesLast24h: f.failedDeliveries.map((d) => ({ channel: scrub(d.channel), count: d.count })),
    busiestChannelsLast24h: f.busiest.map((c) => scrub(c.name)),
    insights: insights.map((i) => ({ kind: i.kind, severity: i.severity, title: scrub(i.title) })),
  };
}

export function systemPrompt(f: UserFacts, insights: Insight[], lang: Lang): string {
  return [
    'You are the assistant of Belfry, a personal notification server: channels receive messages from',
    'programs and monitoring sources (heartbeats, monitors, port scans, metrics, web scripts, email inboxes).',
    'Answer the user briefly and concretely from the snapshot of their account below; say so when it does',
    'not hold the answer. Never invent sources or numbers.',
    lang === 'ru' ? 'Answer in Russian.' : 'Answer in English unless the user writes in another language.',
    '',
    'Snapshot (JSON):',
    JSON.stringify(buildSnapshot(f, insights)),
  ].join('\n');
}
