/** Wire shapes of email inboxes (design: wire-families.md §10). */
import type { Paging } from '../../api/types';

export type InboxStatus = 'pending' | 'ok' | 'paused';

/** One inbox: mail to `address` becomes messages in channel `appid`. */
export interface EmailInbox {
  id: number;
  appid: number;
  name: string;
  paused: boolean;
  /** `pending` until the first mail. */
  status: InboxStatus;
  lastCheckAt: string | null;
  createdAt: string;
  localPart: string;
  /** `{localPart}@{BELFRY_MAIL_DOMAIN}`. */
  address: string;
  /** null: the channel's default. */
  priority: number | null;
}

/** The body of POST /email-inbox and PUT /email-inbox/{id}. */
export interface EmailInboxInput {
  name: string;
  appid: number;
  priority: number | null;
  localPart?: string;
  paused?: boolean;
}

export type MailAction = 'message' | 'drop' | 'paused';

export interface MailAttachment {
  filename: string | null;
  size: number;
  contentType: string;
}

/** One mail the SMTP listener took for an inbox. Attachments are listed, never stored. */
export interface MailEvent {
  id: number;
  inboxId: number;
  appid: number;
  from: string;
  to: string;
  subject: string;
  /** The text/plain part, or the HTML part as text; ≤ 64 KiB. */
  text: string;
  attachments: MailAttachment[];
  receivedAt: string;
  /** null: no rule matched, the default action (a message). */
  matchedRuleId: number | null;
  action: MailAction;
  messageId: number | null;
  size: number;
}

export interface MailEventPage {
  paging: Paging;
  events: MailEvent[];
}

/** Each present key is a pattern: a case-insensitive substring, or `/source/flags` a RegExp. */
export interface RuleMatch {
  from?: string;
  subject?: string;
  body?: string;
}

export type RuleAction = 'message' | 'drop';

export interface InboxRule {
  id: number;
  inboxId: number;
  name: string;
  match: RuleMatch;
  action: RuleAction;
  /** Template with {{subject}}, {{from}}, {{to}}; default {{subject}}. */
  title?: string | null;
  priority?: number | null;
  position: number;
  createdAt: string;
}

/** The body of a rule create or update. */
export interface InboxRuleInput {
  name: string;
  match: RuleMatch;
  action: RuleAction;
  title: string | null;
  priority: number | null;
}

/** `POST /email-inbox/rule/from-event/{eid}` answers a draft (no id unless `save: true`). */
export interface FromMailAnswer {
  rule: Partial<InboxRule> & Pick<InboxRule, 'match' | 'action'>;
}

/** `GET /email-inbox/listener` (Belfry's addition): the SMTP listener of this server. */
export interface ListenerState {
  enabled: boolean;
  /** `host:port` it is bound to; null when off. */
  address: string | null;
  domain: string;
}
