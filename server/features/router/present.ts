import type { AppContext } from '../../context';
import { rfc3339 } from '../../lib/clock';
import type { EventRow, RouterRow, RuleRow } from './store';

/** `{token, url, enabled, defaultAppid, createdAt}`: the full token only when just created or rotated. */
export function presentRouter(ctx: AppContext, row: RouterRow, fullToken?: string) {
  const token = fullToken ?? row.token_hint;
  return {
    token,
    url: `${ctx.publicUrl()}/router/${token}`,
    enabled: row.enabled === 1,
    defaultAppid: row.default_channel_id,
    createdAt: rfc3339(row.created_at),
  };
}

export function presentRule(row: RuleRow) {
  return {
    id: row.id,
    name: row.name,
    pathPattern: row.path_pattern,
    method: row.method,
    match: JSON.parse(row.match) as unknown[],
    appid: row.channel_id,
    title: row.title,
    message: row.message,
    priority: row.priority,
    enabled: row.enabled === 1,
    position: row.position,
    createdAt: rfc3339(row.created_at),
  };
}

export function presentEvent(row: EventRow) {
  return {
    id: row.id,
    path: row.path,
    method: row.method,
    query: JSON.parse(row.query) as Record<string, unknown>,
    headers: JSON.parse(row.headers) as Record<string, string>,
    body:
      row.body_kind === 'json'
        ? (JSON.parse(row.body!) as unknown)
        : row.body_kind === 'text'
          ? row.body
          : null,
    receivedAt: rfc3339(row.received_at),
    matchedRuleId: row.rule_id,
    appid: row.channel_id,
    messageId: row.message_id,
    size: row.size,
  };
}
