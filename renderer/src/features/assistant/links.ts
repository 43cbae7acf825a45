import { query } from '../../api/client';
import type { InsightLink } from '../../api/types';

/** The six monitor kinds (docs/api.md, "Monitors"): one page, opened at `?kind=&id=`. */
const MONITOR_KINDS = new Set([
  'monitor',
  'http-monitor',
  'content-monitor',
  'port-monitor',
  'workflow-monitor',
  'browser-workflow',
]);

/** The page of each other source kind, opened at `?id=`. */
const SOURCE_PAGES: Record<string, string> = {
  heartbeat: '/heartbeats',
  'metric-source': '/metrics',
  'web-script': '/web-scripts',
  'email-inbox': '/inboxes',
};

/** Kinds whose page lists them without opening one. */
const LIST_PAGES: Record<string, string> = {
  'port-scan': '/port-scans',
  'webhook-router': '/routing',
  'router-rule': '/routing',
};

/**
 * Where an insight's link goes in the UI: a channel opens its messages in the inbox, a source its own
 * page with that source open. A kind the UI does not know yet gives null (the label is shown unlinked).
 */
export function insightHref(link: Pick<InsightLink, 'kind' | 'id'>): string | null {
  if (!Number.isInteger(link.id) || link.id <= 0) return null;
  if (link.kind === 'channel') return `/inbox${query({ channel: link.id })}`;
  if (MONITOR_KINDS.has(link.kind)) return `/monitors${query({ kind: link.kind, id: link.id })}`;
  const page = SOURCE_PAGES[link.kind];
  if (page) return `${page}${query({ id: link.id })}`;
  return LIST_PAGES[link.kind] ?? null;
}

/** The `lang` sent to the assistant: the UI has no locale of its own, so the browser's (ru → ru, else en). */
export function assistantLang(
  languages: readonly string[] = navigator.languages ?? [navigator.language],
): 'en' | 'ru' {
  return languages[0]?.toLowerCase().startsWith('ru') ? 'ru' : 'en';
}
