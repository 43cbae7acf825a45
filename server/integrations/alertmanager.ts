import { z } from 'zod';
import { errors } from '../http/errors';
import type { AlertReceiver, ReceivedMessage } from './registry';

/**
 * Prometheus Alertmanager webhook (version 4) and Grafana's webhook contact point (a superset with
 * version 1, orgId, title, state, message). One message for the firing alerts of a group and a separate
 * one for its resolved alerts (docs/reference.md, "Sending and reading messages"; docs/api.md, "Alert receivers").
 */
const labels = z.record(z.string(), z.string()).catch({});
const alert = z.looseObject({
  status: z.string().catch('firing'),
  labels,
  annotations: labels,
  startsAt: z.string().optional().catch(undefined),
  endsAt: z.string().optional().catch(undefined),
  generatorURL: z.string().optional().catch(undefined),
  fingerprint: z.string().optional().catch(undefined),
  silenceURL: z.string().optional().catch(undefined),
  dashboardURL: z.string().optional().catch(undefined),
  panelURL: z.string().optional().catch(undefined),
});
const body = z.looseObject({
  version: z.string().optional().catch(undefined),
  groupKey: z.string().optional().catch(undefined),
  truncatedAlerts: z.number().optional().catch(undefined),
  status: z.string().optional().catch(undefined),
  receiver: z.string().optional().catch(undefined),
  groupLabels: labels.optional(),
  commonLabels: labels.optional(),
  externalURL: z.string().optional().catch(undefined),
  alerts: z.array(alert),
  // Grafana additions
  orgId: z.number().optional().catch(undefined),
  title: z.string().optional().catch(undefined),
  state: z.string().optional().catch(undefined),
});
type Alert = z.output<typeof alert>;
type Body = z.output<typeof body>;

const SEVERITY_PRIORITY: Record<string, number> = {
  critical: 9,
  disaster: 9,
  page: 9,
  emergency: 9,
  error: 7,
  high: 7,
  major: 7,
  warning: 5,
  warn: 5,
  average: 5,
  minor: 4,
  info: 3,
  information: 3,
  low: 3,
  none: 2,
};
const RESOLVED_PRIORITY = 2;

function isGrafana(b: Body): boolean {
  return (
    b.orgId !== undefined ||
    b.version === '1' ||
    b.state === 'alerting' ||
    b.state === 'ok' ||
    b.alerts.some((a) => 'silenceURL' in a || 'values' in a || 'valueString' in a)
  );
}

function severityPriority(alerts: readonly Alert[]): number | undefined {
  let best: number | undefined;
  for (const a of alerts) {
    const p = SEVERITY_PRIORITY[(a.labels.severity ?? a.labels.priority ?? '').toLowerCase()];
    if (p !== undefined && (best === undefined || p > best)) best = p;
  }
  return best;
}

function groupName(b: Body, alerts: readonly Alert[]): string {
  const group = b.groupLabels ?? {};
  const name = group.alertname ?? b.commonLabels?.alertname ?? alerts[0]?.labels.alertname ?? 'alert';
  const rest = Object.entries(group)
    .filter(([k]) => k !== 'alertname')
    .map(([, v]) => v);
  return rest.length > 0 ? `${name} (${rest.join(', ')})` : name;
}

function escapeMarkdown(s: string): string {
  return s.replace(/([\\`*_[\]])/g, '\\$1');
}

function renderAlert(a: Alert): string {
  const headline = a.annotations.summary ?? a.annotations.description ?? a.labels.alertname ?? 'alert';
  const lines = [`**${escapeMarkdown(headline)}**`];
  if (a.annotations.description && a.annotations.description !== headline)
    lines.push(escapeMarkdown(a.annotations.description));
  const labelText = Object.entries(a.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  if (labelText) lines.push(`Labels: \`${labelText.replace(/`/g, "'")}\``);
  const links: [string, string | undefined][] = [
    ['Source', a.generatorURL],
    ['Runbook', a.annotations.runbook_url],
    ['Dashboard', a.dashboardURL],
    ['Panel', a.panelURL],
    ['Silence', a.silenceURL],
  ];
  const shown = links
    .filter(([, url]) => url !== undefined && url !== '')
    .map(([label, url]) => `[${label}](${url})`);
  if (shown.length > 0) lines.push(shown.join(' · '));
  return lines.join('\n');
}

function message(
  b: Body,
  source: 'alertmanager' | 'grafana',
  status: 'firing' | 'resolved',
  alerts: readonly Alert[],
): ReceivedMessage {
  const title =
    status === 'firing' && source === 'grafana' && b.title
      ? b.title
      : `[${status.toUpperCase()}:${alerts.length}] ${groupName(b, alerts)}`;
  const truncated = b.truncatedAlerts
    ? `\n\n_${b.truncatedAlerts} more alerts were left out by the sender._`
    : '';
  const priority = status === 'resolved' ? RESOLVED_PRIORITY : severityPriority(alerts);
  return {
    senderName: source === 'grafana' ? 'Grafana' : 'Alertmanager',
    title,
    message: alerts.map(renderAlert).join('\n\n') + truncated,
    ...(priority === undefined ? {} : { priority }),
    extras: {
      'client::display': { contentType: 'text/markdown' },
      alertmanager: {
        source,
        status,
        groupKey: b.groupKey ?? '',
        receiver: b.receiver ?? '',
        externalURL: b.externalURL ?? '',
        truncatedAlerts: b.truncatedAlerts ?? 0,
        fingerprints: alerts.map((a) => a.fingerprint ?? '').filter(Boolean),
      },
    },
  };
}

export const alertmanagerReceiver: AlertReceiver = {
  name: 'alertmanager',
  toMessages(raw) {
    const parsed = body.safeParse(raw);
    if (!parsed.success) throw errors.badRequest('not an Alertmanager or Grafana webhook body');
    const b = parsed.data;
    const source = isGrafana(b) ? 'grafana' : 'alertmanager';
    const firing = b.alerts.filter((a) => a.status !== 'resolved');
    const resolved = b.alerts.filter((a) => a.status === 'resolved');
    const out: ReceivedMessage[] = [];
    if (firing.length > 0) out.push(message(b, source, 'firing', firing));
    if (resolved.length > 0) out.push(message(b, source, 'resolved', resolved));
    return out;
  },
};
