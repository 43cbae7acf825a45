import nodemailer, { type Transporter } from 'nodemailer';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { untilAborted } from '../../features/monitors/net/errors';
import {
  DELIVERY_CONNECT_TIMEOUT_MS,
  DELIVERY_TOTAL_TIMEOUT_MS,
  type DeliveryAdapter,
  DeliveryError,
  type DeliveryItem,
} from '../adapter';
import { timeoutError } from '../http';
import { commonFields, escapeHtml, isoDate, questionParts } from './common';

export const NO_SMTP = 'no SMTP server configured (BELFRY_SMTP_URL)';

/** One SMTP transport per server (not the account-mail outbox: the delivery outbox does the retrying). */
const transports = new WeakMap<AppContext, Transporter>();

function transportOf(ctx: AppContext, url: string): Transporter {
  let t = transports.get(ctx);
  if (!t) {
    t = nodemailer.createTransport({
      url,
      connectionTimeout: DELIVERY_CONNECT_TIMEOUT_MS,
      greetingTimeout: DELIVERY_CONNECT_TIMEOUT_MS,
      socketTimeout: DELIVERY_TOTAL_TIMEOUT_MS,
    } as Parameters<typeof nodemailer.createTransport>[0]);
    transports.set(ctx, t);
  }
  return t;
}

/** Closes this server's delivery SMTP transport (at stop). */
export function closeEmailTransport(ctx: AppContext): void {
  transports.get(ctx)?.close();
  transports.delete(ctx);
}

const BUTTON =
  'display:inline-block;padding:8px 16px;margin:4px 6px 4px 0;border-radius:6px;text-decoration:none;';
const PRIMARY = `${BUTTON}background:#2563eb;color:#ffffff;border:1px solid #2563eb`;
const SECONDARY = `${BUTTON}background:#ffffff;color:#2563eb;border:1px solid #2563eb`;

/**
 * §6.2 email: subject `[{channel}] {title}`, text and HTML with message, priority, date and the links; a
 * question's answer buttons (HTML) and `Answer "{option}": {url}` lines (text) after the message.
 */
export function emailContent(
  item: DeliveryItem,
  now?: number,
): { subject: string; text: string; html: string } {
  const q = questionParts(item, now);
  const lines = [item.message, ''];
  const link = (label: string, url: string) => `<a href="${escapeHtml(url)}">${escapeHtml(label)}</a>`;
  const html = [
    `<h2>${escapeHtml(item.title)}</h2>`,
    `<p style="white-space:pre-wrap">${escapeHtml(item.message)}</p>`,
  ];
  if (q) {
    for (const b of q.buttons)
      lines.push(q.perOption ? `Answer "${b.label}": ${b.url}` : `${b.label}: ${b.url}`);
    lines.push(...q.lines, '');
    if (q.buttons.length > 0)
      html.push(
        `<p>${q.buttons
          .map(
            (b) =>
              `<a href="${escapeHtml(b.url)}" style="${b.primary ? PRIMARY : SECONDARY}">${escapeHtml(b.label)}</a>`,
          )
          .join('\n')}</p>`,
      );
    if (q.lines.length > 0) html.push(`<p>${q.lines.map(escapeHtml).join('<br>')}</p>`);
  }
  lines.push(`Priority: ${item.priority}`, `Date: ${isoDate(item)}`, '', `Open: ${item.links.message}`);
  if (item.links.read) lines.push(`Mark as read: ${item.links.read}`);
  html.push(
    `<p>Priority: ${item.priority}<br>Date: ${isoDate(item)}</p>`,
    `<p>${link('Open', item.links.message)}${item.links.read ? ` · ${link('Mark as read', item.links.read)}` : ''}</p>`,
  );
  return { subject: `[${item.channel.name}] ${item.title}`, text: lines.join('\n'), html: html.join('\n') };
}

/**
 * nodemailer's error as a DeliveryError: SMTP 4xx retryable, 5xx permanent (`SMTP 550: …`), bad
 * credentials or addresses permanent, connection errors retryable. The SMTP password never shows.
 */
function smtpError(err: unknown, smtpUrl: string): DeliveryError {
  const e = err as { responseCode?: number; response?: string; code?: string; message?: string };
  let password = '';
  try {
    password = decodeURIComponent(new URL(smtpUrl).password);
  } catch {
    // no password to hide
  }
  const hide = (s: string) => (password.length >= 4 ? s.split(password).join('********') : s);
  if (typeof e?.responseCode === 'number') {
    const reply = (e.response ?? '').replace(/^\d{3}[ -]?/, '').trim();
    return new DeliveryError(
      hide(`SMTP ${e.responseCode}: ${reply.slice(0, 200)}`),
      e.responseCode < 500 && e.code !== 'EAUTH',
    );
  }
  const permanent = e?.code === 'EAUTH' || e?.code === 'ENOAUTH' || e?.code === 'EENVELOPE';
  return new DeliveryError(hide(String(e?.message ?? err)), !permanent);
}

export const emailAdapter: DeliveryAdapter = {
  name: 'email',
  schema: z.strictObject({ ...commonFields, to: z.array(z.email()).min(1).max(10) }),
  secrets: [],
  async send(io, config, item) {
    const smtpUrl = io.ctx.config.smtpUrl;
    if (!smtpUrl) throw new DeliveryError(NO_SMTP, false);
    const { subject, text, html } = emailContent(item, io.ctx.clock.now());
    const sending = transportOf(io.ctx, smtpUrl).sendMail({
      from: io.ctx.config.mailFrom,
      to: config.to as string[],
      subject,
      text,
      html,
      priority: item.priority >= 8 ? 'high' : 'normal',
    });
    sending.catch(() => {}); // an abandoned (timed-out) send must not surface as unhandled
    let sent: unknown;
    try {
      sent = await untilAborted(sending, io.signal);
    } catch (err) {
      throw smtpError(err, smtpUrl);
    }
    if (sent === null) throw timeoutError();
  },
};
