import { mailDomainOf } from '../../config';
import type { AppContext } from '../../context';
import { rfc3339, rfc3339OrNull } from '../../lib/clock';
import type { EventRow, InboxRow, RuleRow } from './store';

/** The domain of inbox addresses now (§0.5: the setting, else the public URL's host). */
export function mailDomain(ctx: AppContext): string {
  return mailDomainOf(ctx.config, ctx.publicUrl({ tunnel: false })); // mail never goes through the tunnel
}

/** The inbox record (§0.3 base fields + §10). */
export function presentInbox(ctx: AppContext, row: InboxRow, domain = mailDomain(ctx)) {
  return {
    id: row.id,
    appid: row.channel_id,
    name: row.name,
    paused: row.status === 'paused',
    status: row.status,
    lastCheckAt: rfc3339OrNull(row.last_check_at),
    createdAt: rfc3339(row.created_at),
    localPart: row.local_part,
    address: `${row.local_part}@${domain}`,
    priority: row.priority,
  };
}

export interface RuleMatch {
  from?: string;
  subject?: string;
  body?: string;
}

export function presentRule(row: RuleRow) {
  return {
    id: row.id,
    inboxId: row.inbox_id,
    name: row.name,
    match: JSON.parse(row.match) as RuleMatch,
    action: row.action,
    title: row.title,
    priority: row.priority,
    position: row.position,
    createdAt: rfc3339(row.created_at),
  };
}

export interface Attachment {
  filename: string | null;
  size: number;
  contentType: string;
}

export function presentEvent(row: EventRow) {
  return {
    id: row.id,
    inboxId: row.inbox_id,
    appid: row.channel_id,
    from: row.mail_from,
    to: row.mail_to,
    subject: row.subject,
    text: row.text,
    attachments: JSON.parse(row.attachments) as Attachment[],
    receivedAt: rfc3339(row.received_at),
    matchedRuleId: row.rule_id,
    action: row.action,
    messageId: row.message_id,
    size: row.size,
  };
}
