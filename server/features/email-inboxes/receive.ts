import type { AppContext } from '../../context';
import { compilePattern } from '../monitors/kinds/assertions';
import { sendSourceMessage } from '../sources/messages';
import type { Attachment, RuleMatch } from './present';
import { DEFAULT_RULE_TITLE, KIND } from './service';
import { type InboxRow, insertEvent, markReceived, type RuleRow, rulesOfInbox } from './store';

/** §10: the stored text of a mail, and of a message made from it. */
export const EVENT_TEXT_BYTES = 64 * 1024;
export const MESSAGE_TEXT_CHARS = 10_000;
export const TITLE_CHARS = 1_000;
export const NO_SUBJECT = '(no subject)';
/** Subject and addresses stored with an event (parse-worker.ts cuts them). */
export const SUBJECT_CHARS = 1_000;
export const ADDRESS_CHARS = 320;

/**
 * What the SMTP listener hands over: one mail, parsed once (in a worker thread, parse-pool.ts) for every
 * recipient inbox. MIME with mailparser: `text` is the text/plain part, else the HTML part converted with
 * html-to-text (links kept as `text [url]`, images dropped), ≤ 64 KiB. Attachments are listed, never
 * stored. `from` is the From header's address, else the envelope sender.
 */
export interface ReceivedMail {
  from: string;
  subject: string;
  text: string;
  attachments: Attachment[];
  size: number;
}

// ---- rules

type PatternTest = NonNullable<ReturnType<typeof compilePattern>>;

interface CompiledRule {
  row: RuleRow;
  tests: { key: keyof RuleMatch; test: PatternTest }[];
}

/** An inbox's rules by position, their patterns compiled (a pattern that no longer compiles never matches). */
function compileRules(rows: RuleRow[]): CompiledRule[] {
  return rows.map((row) => {
    const match = JSON.parse(row.match) as RuleMatch;
    const tests: CompiledRule['tests'] = [];
    for (const key of ['from', 'subject', 'body'] as const) {
      const p = match[key];
      if (p === undefined) continue;
      tests.push({ key, test: compilePattern(p) ?? (() => ({ ok: true, match: false })) });
    }
    return { row, tests };
  });
}

/** The first rule whose present patterns all match (`{}` matches everything); undefined when none does. */
export function firstMatch(rules: CompiledRule[], mail: ReceivedMail): RuleRow | undefined {
  const field = { from: mail.from, subject: mail.subject, body: mail.text };
  for (const r of rules) {
    if (
      r.tests.every(({ key, test }) => {
        const res = test(field[key]);
        return res.ok && res.match;
      })
    )
      return r.row;
  }
  return undefined;
}

/** `{{subject}}`, `{{from}}`, `{{to}}`; any other `{{…}}` stays as written. */
export function renderTitle(template: string, v: { subject: string; from: string; to: string }): string {
  return template.replace(/\{\{\s*(subject|from|to)\s*\}\}/g, (_m, k: 'subject' | 'from' | 'to') => v[k]);
}

export interface Delivered {
  eventId: number;
  messageId: number | null;
  action: 'message' | 'drop' | 'paused';
}

/**
 * One accepted recipient inbox of a received mail (§10): the event, and the message unless the inbox is
 * paused or the first matching rule drops it. The quota spent: the event stands with `messageId: null`.
 */
export function deliverToInbox(ctx: AppContext, inbox: InboxRow, to: string, mail: ReceivedMail): Delivered {
  const rule = firstMatch(compileRules(rulesOfInbox(ctx.db, inbox.id)), mail);
  const now = ctx.clock.now();
  return ctx.db.transaction(() => {
    let action: Delivered['action'] = rule?.action ?? 'message';
    if (inbox.status === 'paused') action = 'paused';
    let messageId: number | null = null;
    if (action === 'message') {
      const subject = mail.subject === '' ? NO_SUBJECT : mail.subject;
      const title = renderTitle(rule?.title ?? DEFAULT_RULE_TITLE, { subject, from: mail.from, to }).trim();
      const text = `From: ${mail.from}\n\n${mail.text}`;
      const m: { title: string; message: string; priority?: number } = {
        title: (title === '' ? subject : title).slice(0, TITLE_CHARS),
        message: text.length > MESSAGE_TEXT_CHARS ? text.slice(0, MESSAGE_TEXT_CHARS) : text,
      };
      const priority = rule?.priority ?? inbox.priority;
      if (priority !== null) m.priority = priority;
      // sendSourceMessage's priority is required; without one the channel's default applies.
      messageId = sendSourceMessage(
        ctx,
        { kind: KIND, id: inbox.id, name: inbox.name, channelId: inbox.channel_id },
        'mail',
        m as { title: string; message: string; priority: number },
      );
    }
    const eventId = insertEvent(ctx.db, {
      inboxId: inbox.id,
      userId: inbox.user_id,
      channelId: inbox.channel_id,
      from: mail.from,
      to,
      subject: mail.subject,
      text: mail.text,
      attachments: JSON.stringify(mail.attachments),
      size: mail.size,
      receivedAt: now,
      ruleId: rule?.id ?? null,
      action,
      messageId,
    });
    markReceived(ctx.db, inbox.id, now);
    return { eventId, messageId, action };
  });
}
