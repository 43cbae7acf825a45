import { errors } from '../http/errors';
import type { AlertReceiver, ReceivedMessage } from './registry';

/**
 * Zabbix webhook media type: a flat object of strings posted by our media-type script (JSON or
 * urlencoded). Keys in any case; a value that still looks like an unexpanded `{MACRO}` is empty
 * (docs/api.md, "Alert receivers").
 */
const NSEVERITY_PRIORITY = [2, 3, 5, 6, 8, 10] as const;
const SEVERITY_NAMES = ['not classified', 'information', 'warning', 'average', 'high', 'disaster'];
const RESOLVED_PRIORITY = 2;

function normalise(raw: unknown): Map<string, string> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw errors.badRequest('expected a JSON object');
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    const s =
      typeof v === 'string'
        ? v
        : typeof v === 'number' || typeof v === 'boolean'
          ? String(v)
          : JSON.stringify(v);
    if (/^\{[A-Z0-9_.$#:]+\}$/.test(s.trim()) || s.trim() === '') continue;
    out.set(k.toLowerCase(), s);
  }
  return out;
}

function priorityOf(f: Map<string, string>): number | undefined {
  const n = Number(f.get('nseverity'));
  if (f.has('nseverity') && Number.isInteger(n) && n >= 0 && n <= 5) return NSEVERITY_PRIORITY[n];
  const idx = SEVERITY_NAMES.indexOf((f.get('severity') ?? '').toLowerCase());
  return idx >= 0 ? NSEVERITY_PRIORITY[idx] : undefined;
}

function parseTags(s: string | undefined): unknown {
  if (!s) return [];
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

export const zabbixReceiver: AlertReceiver = {
  name: 'zabbix',
  toMessages(raw) {
    const f = normalise(raw);
    const subject = f.get('subject') ?? f.get('event_name') ?? f.get('trigger_name');
    const text = f.get('message') ?? subject;
    if (!text) throw errors.badRequest('subject or message is required');
    const status = (f.get('status') ?? f.get('trigger_status') ?? '').toUpperCase();
    const resolved = status === 'RESOLVED' || status === 'OK' || f.get('event_value') === '0';
    let title = subject ?? '';
    if (resolved && !/resolved/i.test(title)) title = `[RESOLVED] ${title}`.trim();
    const priority = resolved ? RESOLVED_PRIORITY : priorityOf(f);
    const base = f.get('zabbix_url')?.replace(/\/+$/, '');
    const url =
      base && f.get('trigger_id') && f.get('event_id')
        ? `${base}/tr_events.php?triggerid=${encodeURIComponent(f.get('trigger_id')!)}&eventid=${encodeURIComponent(f.get('event_id')!)}`
        : undefined;
    const message: ReceivedMessage = {
      senderName: 'Zabbix',
      title,
      message: text,
      ...(priority === undefined ? {} : { priority }),
      extras: {
        zabbix: {
          eventId: f.get('event_id') ?? '',
          status: resolved ? 'RESOLVED' : status || 'PROBLEM',
          severity: f.get('severity') ?? '',
          host: f.get('host') ?? '',
          triggerId: f.get('trigger_id') ?? '',
          tags: parseTags(f.get('event_tags')),
          ...(url ? { url } : {}),
        },
        ...(url ? { 'client::notification': { click: { url } } } : {}),
      },
    };
    return [message];
  },
};
