import type { AppContext } from '../../context';
import { DAY_MS } from '../quota/service';
import { formatDuration } from '../sources/messages';
import type { SourceSummary } from '../sources/registry';
import { HOUR_MS, type UserFacts } from './data';
import type { Lang } from './local';

/** An insight (§12 of docs/api.md "Assistant"): one rule that holds, with links to what it is about. */
export interface Insight {
  kind: InsightKind;
  title: string;
  detail: string;
  severity: 'info' | 'warning' | 'critical';
  links: { label: string; kind: string; id: number }[];
}

export type InsightKind =
  | 'source_down'
  | 'flapping'
  | 'noisy_channel'
  | 'quota'
  | 'unread_backlog'
  | 'delivery_failing'
  | 'cert_expiry'
  | 'idle_heartbeat';

/** The thresholds of the rules (docs/assistant.md). */
export const RULES = {
  downForMs: HOUR_MS,
  flappingChanges: 10,
  noisyPerDay: 100,
  noisyTimesMean: 3,
  /** The "3 × the 7-day mean" rule needs at least this many messages in 24 h (1 message vs 0 is no noise). */
  noisyMinForRatio: 10,
  quotaShare: 0.8,
  unreadBacklog: 100,
  certDays: 14,
  idleNewMs: DAY_MS,
} as const;

const SEVERITY_ORDER = { critical: 0, warning: 1, info: 2 } as const;

const sourceLink = (s: SourceSummary) => ({ label: s.name, kind: s.kind, id: s.id });
const channelLink = (c: { id: number; name: string }) => ({ label: c.name, kind: 'channel', id: c.id });

function t(lang: Lang, en: string, ru: string): string {
  return lang === 'en' ? en : ru;
}

/** Status changes in 24 h per visible source (one history interval starts at each change). */
function changesPerSource(ctx: AppContext, sources: SourceSummary[], since: number): Map<string, number> {
  const out = new Map<string, number>();
  if (sources.length === 0) return out;
  const wanted = new Set(sources.map((s) => `${s.kind}:${s.id}`));
  const ids = [...new Set(sources.map((s) => s.id))];
  for (const r of ctx.db.all<{ kind: string; source_id: number; n: number }>(
    `SELECT kind, source_id, COUNT(*) AS n FROM history_intervals
      WHERE source_id IN (${ids.map(() => '?').join(',')}) AND start_at >= ? GROUP BY kind, source_id`,
    [...ids, since],
  ))
    if (wanted.has(`${r.kind}:${r.source_id}`)) out.set(`${r.kind}:${r.source_id}`, r.n);
  return out;
}

const CERT = /TLS certificate expires in (-?\d+) days \((\d{4}-\d\d-\d\d)\)/;

/**
 * Certificates close to expiry, as the monitors' TLS assertion reports them (`tlsExpiryDays` set): the
 * days are counted again from the expiry date in the stored error, so a monitor checked yesterday is
 * still right today.
 */
function expiringCerts(ctx: AppContext, sources: SourceSummary[], now: number) {
  const monitors = sources.filter((s) => s.kind.endsWith('-monitor'));
  if (monitors.length === 0) return [];
  const rows = ctx.db.all<{ id: number; last_error: string | null }>(
    `SELECT id, last_error FROM monitors WHERE id IN (${monitors.map(() => '?').join(',')})`,
    monitors.map((m) => m.id),
  );
  const byId = new Map(monitors.map((m) => [m.id, m]));
  const out: { source: SourceSummary; days: number; date: string }[] = [];
  for (const r of rows) {
    const m = r.last_error ? CERT.exec(r.last_error) : null;
    if (!m) continue;
    const days = Math.floor((Date.parse(`${m[2]}T00:00:00Z`) + DAY_MS - now) / DAY_MS);
    if (days <= RULES.certDays) out.push({ source: byId.get(r.id)!, days, date: m[2]! });
  }
  return out;
}

/** Every rule over the user's facts, most severe first. */
export function computeInsights(ctx: AppContext, f: UserFacts, lang: Lang): Insight[] {
  const items: Insight[] = [];
  const now = f.now;
  const active = f.sources.filter((s) => !s.paused);

  for (const s of active)
    if (s.status === 'down' && s.statusSince !== null && now - s.statusSince > RULES.downForMs) {
      const d = formatDuration(now - s.statusSince);
      items.push({
        kind: 'source_down',
        title: t(lang, `${s.name} is down`, `${s.name} недоступен`),
        detail: t(lang, `Down for ${d} (${s.kind}).`, `Недоступен уже ${d} (${s.kind}).`),
        severity: 'critical',
        links: [sourceLink(s)],
      });
    }

  const changes = changesPerSource(ctx, active, now - DAY_MS);
  for (const s of active) {
    const n = changes.get(`${s.kind}:${s.id}`) ?? 0;
    if (n > RULES.flappingChanges)
      items.push({
        kind: 'flapping',
        title: t(lang, `${s.name} is flapping`, `${s.name} нестабилен`),
        detail: t(
          lang,
          `${n} status changes in 24 h; now ${s.status}.`,
          `${n} смен статуса за 24 ч; сейчас ${s.status}.`,
        ),
        severity: 'warning',
        links: [sourceLink(s)],
      });
  }

  for (const c of f.channels) {
    const mean = c.week / 7;
    const ratio = c.day >= RULES.noisyMinForRatio && c.day > RULES.noisyTimesMean * mean;
    if (c.day > RULES.noisyPerDay || ratio)
      items.push({
        kind: 'noisy_channel',
        title: t(lang, `${c.name} is noisy`, `Канал ${c.name} шумит`),
        detail: t(
          lang,
          `${c.day} messages in 24 h; the 7-day daily mean was ${mean.toFixed(1)}.`,
          `${c.day} сообщений за 24 ч; среднее за 7 дней — ${mean.toFixed(1)} в день.`,
        ),
        severity: 'warning',
        links: [channelLink(c)],
      });
  }

  const { used, limit } = f.quota;
  if (limit > 0 && used > RULES.quotaShare * limit) {
    const pct = Math.round((used / limit) * 100);
    items.push({
      kind: 'quota',
      title: t(lang, `Daily quota ${pct} % used`, `Дневная квота использована на ${pct} %`),
      detail: t(
        lang,
        `${used} of ${limit} events today (${f.quota.plan} plan); the quota resets at 00:00 UTC.`,
        `${used} из ${limit} событий сегодня (тариф ${f.quota.plan}); квота обнуляется в 00:00 UTC.`,
      ),
      severity: used >= limit ? 'critical' : 'warning',
      links: [],
    });
  }

  if (f.totals.unread > RULES.unreadBacklog) {
    const top = f.channels
      .filter((c) => c.unread > 0)
      .sort((a, b) => b.unread - a.unread || a.id - b.id)
      .slice(0, 3);
    items.push({
      kind: 'unread_backlog',
      title: t(lang, `${f.totals.unread} unread messages`, `Непрочитанных сообщений: ${f.totals.unread}`),
      detail: t(
        lang,
        `Most in ${top.map((c) => `${c.name} (${c.unread})`).join(', ')}.`,
        `Больше всего в ${top.map((c) => `${c.name} (${c.unread})`).join(', ')}.`,
      ),
      severity: 'info',
      links: top.map(channelLink),
    });
  }

  for (const d of f.failedDeliveries)
    items.push({
      kind: 'delivery_failing',
      title: t(lang, `Deliveries failing on ${d.channel}`, `Сбои доставки в канале ${d.channel}`),
      detail: t(
        lang,
        `${d.count} outbox ${d.count === 1 ? 'entry' : 'entries'} failed in 24 h; see the channel's delivery log.`,
        `Неудачных доставок за 24 ч: ${d.count}; подробности в журнале доставок канала.`,
      ),
      severity: 'warning',
      links: [{ label: d.channel, kind: 'channel', id: d.appid }],
    });

  for (const c of expiringCerts(ctx, active, now))
    items.push({
      kind: 'cert_expiry',
      title: t(
        lang,
        `Certificate of ${c.source.name} expires soon`,
        `Сертификат ${c.source.name} скоро истекает`,
      ),
      detail: t(
        lang,
        c.days < 0 ? `Expired on ${c.date}.` : `Expires in ${c.days} days (${c.date}).`,
        c.days < 0 ? `Истёк ${c.date}.` : `Истекает через ${c.days} дн. (${c.date}).`,
      ),
      severity: c.days <= 3 ? 'critical' : 'warning',
      links: [sourceLink(c.source)],
    });

  for (const s of active)
    if (
      s.kind === 'heartbeat' &&
      s.status === 'new' &&
      s.statusSince !== null &&
      now - s.statusSince > RULES.idleNewMs
    )
      items.push({
        kind: 'idle_heartbeat',
        title: t(lang, `${s.name} was never pinged`, `${s.name} ни разу не получил пинг`),
        detail: t(
          lang,
          `Created ${formatDuration(now - s.statusSince)} ago and still new: the job may not call its ping URL.`,
          `Создан ${formatDuration(now - s.statusSince)} назад и всё ещё новый: задача, видимо, не вызывает URL пинга.`,
        ),
        severity: 'info',
        links: [sourceLink(s)],
      });

  return items.sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
}
