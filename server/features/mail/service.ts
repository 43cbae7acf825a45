import nodemailer, { type Transporter } from 'nodemailer';
import type { AppContext } from '../../context';
import type { DueSource } from '../../jobs/due';
import { rfc3339 } from '../../lib/clock';
import {
  deleteMail,
  deleteOutboxBefore,
  dueMail,
  findMail,
  insertOutbox,
  leaseMail,
  mailAttemptFailed,
  nextMailDue,
  type OutboxRow,
} from './store';

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
  /** Extra headers (status-page mails: List-Unsubscribe). */
  headers?: Record<string, string>;
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

/** A failed SMTP send is tried again at most this many times in all (about two hours with MAIL_RETRY_MS). */
export const MAIL_MAX_ATTEMPTS = 8;
/** The wait after the n-th failure: 1 min, 2, 4, ... capped at an hour. */
export const MAIL_RETRY_FIRST_MS = 60_000;
export const MAIL_RETRY_MAX_MS = 3_600_000;
/** An attempt under way holds its mail this long: after a crash mid-attempt, the mail is tried again then. */
export const MAIL_LEASE_MS = 15 * 60_000;
const MAIL_BATCH = 10;
const LAST_ERROR_MAX_CHARS = 500;

export function mailRetryDelay(failures: number): number {
  return Math.min(MAIL_RETRY_FIRST_MS * 2 ** Math.min(failures - 1, 20), MAIL_RETRY_MAX_MS);
}

/**
 * Sends through SMTP (nodemailer) when BELFRY_SMTP_URL is set; otherwise keeps the mail in the outbox
 * the admin reads with `GET /admin/outbox`. Its links (password resets, verifications) are never
 * logged: a log is read by more people and tools than the outbox, which takes an admin with sudo.
 *
 * With SMTP the mail is first written to the outbox (pending) and tried at once; a failure is retried by
 * the due timer (DueSource 'mail') with backoff, up to MAIL_MAX_ATTEMPTS, then marked failed. A sent mail
 * is deleted, so the outbox keeps only what has not gone out. Resolves after the first attempt; never
 * throws for an SMTP failure (the mail stays queued).
 */
export async function sendMail(ctx: AppContext, mail: Mail): Promise<void> {
  const now = ctx.clock.now();
  if (!ctx.config.smtpUrl) {
    const id = ctx.db.transaction(() =>
      insertOutbox(ctx.db, { ...mail, now, status: 'kept', nextAttemptAt: null }),
    );
    ctx.log.info('mail kept in the outbox (no BELFRY_SMTP_URL); an admin reads it under Outbox', {
      id,
      to: mail.to,
      subject: mail.subject,
    });
    return;
  }
  // Inserted under a lease: the due timer leaves it to this first attempt.
  const id = ctx.db.transaction(() =>
    insertOutbox(ctx.db, { ...mail, now, status: 'pending', nextAttemptAt: now + MAIL_LEASE_MS }),
  );
  const row = findMail(ctx.db, id);
  if (row) await attempt(ctx, row);
}

/**
 * Outbox ids with an SMTP attempt under way in this process. The lease only covers a crash: when the clock
 * jumps past it while the attempt still runs (a laptop asleep mid-transaction, a server slow to answer
 * DATA), the due timer must not send the same mail a second time.
 */
const inFlight = new WeakMap<AppContext, Set<number>>();

function inFlightOf(ctx: AppContext): Set<number> {
  const known = inFlight.get(ctx);
  if (known) return known;
  const set = new Set<number>();
  inFlight.set(ctx, set);
  return set;
}

/** One SMTP attempt of a pending mail: deleted when sent, else rescheduled or given up. */
async function attempt(ctx: AppContext, row: OutboxRow): Promise<void> {
  const running = inFlightOf(ctx);
  if (running.has(row.id)) return;
  running.add(row.id);
  try {
    await attemptOnce(ctx, row);
  } finally {
    running.delete(row.id);
  }
}

async function attemptOnce(ctx: AppContext, row: OutboxRow): Promise<void> {
  const url = ctx.config.smtpUrl;
  if (!url) return; // SMTP switched off since: the mail waits, visible as pending
  try {
    await transportOf(ctx, url).sendMail({
      from: ctx.config.mailFrom,
      to: row.to_addr,
      subject: row.subject,
      text: row.text,
      ...(row.html === null ? {} : { html: row.html }),
      ...(row.headers === null ? {} : { headers: JSON.parse(row.headers) as Record<string, string> }),
    });
  } catch (err) {
    const failures = row.attempts + 1;
    const nextAt = failures >= MAIL_MAX_ATTEMPTS ? null : ctx.clock.now() + mailRetryDelay(failures);
    const error = (err instanceof Error ? err.message : String(err)).slice(0, LAST_ERROR_MAX_CHARS);
    ctx.db.transaction(() => mailAttemptFailed(ctx.db, row.id, error, nextAt));
    const fields = { id: row.id, to: row.to_addr, subject: row.subject, attempts: failures, error };
    if (nextAt === null) ctx.log.error('mail failed; giving up (an admin sees it under Outbox)', fields);
    else {
      ctx.log.warn('mail failed; will try again', { ...fields, nextAttemptAt: rfc3339(nextAt) });
      ctx.due.poke(nextAt);
    }
    return;
  }
  ctx.db.transaction(() => deleteMail(ctx.db, row.id));
  ctx.log.info('mail sent', { to: row.to_addr, subject: row.subject, attempts: row.attempts + 1 });
}

/** The due timer's source: pending mail whose next attempt has come (server/jobs/due.ts). */
export const mailDueSource: DueSource = {
  name: 'mail',
  nextDueAt: (ctx) => nextMailDue(ctx.db),
  runDue: async (ctx, now) => {
    const rows = dueMail(ctx.db, now, MAIL_BATCH);
    if (rows.length === 0) return;
    // A mail whose attempt still runs (see inFlight) has its lease renewed here and is not sent again.
    const until = ctx.clock.now() + MAIL_LEASE_MS;
    ctx.db.transaction(() => {
      for (const r of rows) leaseMail(ctx.db, r.id, until);
    });
    for (const r of rows) await attempt(ctx, r);
  },
};

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
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at === null ? null : rfc3339(row.next_attempt_at),
    lastError: row.last_error,
  };
}
