import nodemailer, { type Transporter } from 'nodemailer';
import type { AppContext } from '../../context';
import { rfc3339 } from '../../lib/clock';
import { deleteOutboxBefore, insertOutbox, type OutboxRow } from './store';

/** Kept mail older than this is dropped by retention (its links have expired long before). */
export const OUTBOX_RETENTION_MS = 30 * 86_400_000;

export function pruneOutbox(ctx: AppContext): number {
  return deleteOutboxBefore(ctx.db, ctx.clock.now() - OUTBOX_RETENTION_MS);
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

const transports = new WeakMap<AppContext, Transporter>();

function transportOf(ctx: AppContext, url: string): Transporter {
  let t = transports.get(ctx);
  if (!t) {
    t = nodemailer.createTransport(url);
    transports.set(ctx, t);
  }
  return t;
}

/**
 * Sends through SMTP (nodemailer) when BELFRY_SMTP_URL is set; otherwise keeps the mail in the outbox
 * the admin reads with `GET /admin/outbox`. Its links (password resets, verifications) are never
 * logged: a log is read by more people and tools than the outbox, which takes an admin with sudo.
 */
export async function sendMail(ctx: AppContext, mail: Mail): Promise<void> {
  const url = ctx.config.smtpUrl;
  if (url) {
    await transportOf(ctx, url).sendMail({
      from: ctx.config.mailFrom,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      ...(mail.html === undefined ? {} : { html: mail.html }),
    });
    ctx.log.info('mail sent', { to: mail.to, subject: mail.subject });
    return;
  }
  const id = ctx.db.transaction(() => insertOutbox(ctx.db, { ...mail, now: ctx.clock.now() }));
  ctx.log.info('mail kept in the outbox (no BELFRY_SMTP_URL); an admin reads it under Outbox', {
    id,
    to: mail.to,
    subject: mail.subject,
  });
}

/** Fire and forget: failures are logged, never thrown (mail must not decide an HTTP answer or its timing). */
export function queueMail(ctx: AppContext, mail: Mail): void {
  setImmediate(() => {
    sendMail(ctx, mail).catch((err: unknown) =>
      ctx.log.error('mail failed', { to: mail.to, subject: mail.subject, err }),
    );
  });
}

export function closeMail(ctx: AppContext): void {
  transports.get(ctx)?.close();
  transports.delete(ctx);
}

export function presentOutbox(row: OutboxRow) {
  return {
    id: row.id,
    to: row.to_addr,
    subject: row.subject,
    text: row.text,
    html: row.html,
    createdAt: rfc3339(row.created_at),
  };
}
