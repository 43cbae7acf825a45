import { z } from 'zod';
import type { AppContext } from '../../context';
import {
  DELIVERY_DELAY_DEFAULT_SEC,
  DELIVERY_DELAY_MAX_SEC,
  PRIORITY_MAX,
  PRIORITY_MIN,
} from '../../lib/limits';
import type { DeliveryItem } from '../adapter';

/** The fields every adapter object has (docs/api.md "deliveryConfig"). */
export const commonFields = {
  enabled: z.boolean().default(true),
  minPriority: z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX).default(PRIORITY_MIN),
  delaySec: z.number().int().min(0).max(DELIVERY_DELAY_MAX_SEC).default(DELIVERY_DELAY_DEFAULT_SEC),
};
export const httpsUrl = z.url({ protocol: /^https?$/ }).max(2000);
export const secretString = z.string().min(1).max(2000);
export const region = z.enum(['us', 'eu']).default('us');

/** `{...common, webhookUrl}`: Slack, Discord and Teams (the URL is the secret). */
export const webhookUrlSchema = z.strictObject({ ...commonFields, webhookUrl: httpsUrl });

/** Base URL of a public API: BELFRY_DELIVERY_API_URLS replaces every region's (tests: loopback fakes). */
export function apiBase(
  ctx: AppContext,
  name: 'telegram' | 'pagerduty' | 'opsgenie' | 'twilio',
  fallback: string,
): string {
  return ctx.config.deliveryApiUrls[name] ?? fallback;
}

/** `text` cut to `max` characters (code points), ending with `…` when cut. */
export function cut(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** `[{channel}] {title}: {message}` (SMS, PagerDuty). */
export function oneLine(item: DeliveryItem): string {
  return `[${item.channel.name}] ${item.title}: ${item.message}`;
}

/** The link buttons of a chat message: Open always, Mark as read when there is a read link. */
export function itemLinks(item: DeliveryItem): { label: string; url: string }[] {
  const out = [{ label: 'Open', url: item.links.message }];
  if (item.links.read) out.push({ label: 'Mark as read', url: item.links.read });
  return out;
}

/** The message date as RFC 3339 (UTC). */
export function isoDate(item: DeliveryItem): string {
  return new Date(item.date).toISOString();
}

/** A Markdown link `[label](url)` whose label cannot close or format it (Discord, Mattermost, Teams). */
export function markdownLink(label: string, url: string): string {
  return `[${label.replace(/[\\[\]*_~`|>]/g, '\\$&')}](${url.replace(/\(/g, '%28').replace(/\)/g, '%29')})`;
}

/** Answer buttons as Markdown links `[yes](…) · [no](…)` (services without link buttons). */
export function markdownLinks(buttons: readonly AnswerButton[]): string {
  return buttons.map((b) => markdownLink(b.label, b.url)).join(' · ');
}

/** The extras key of a question's message (wire rules §7.1). */
export const QUESTION_EXTRA = 'service::question';
const QUESTION_TYPES = ['choice', 'multi', 'form', 'text'] as const;
/** At most this many options (POST /ask) and characters per option label are carried. */
const QUESTION_OPTIONS_MAX = 10;
const QUESTION_LABEL_MAX = 100;
const ANSWER_URL_MAX = 2000;

export interface AnswerButton {
  label: string;
  url: string;
  /** The question's `defaultOption` (the highlighted button). */
  primary: boolean;
}

/** What a delivery shows of a question: its answer buttons and the lines that help the reader. */
export interface QuestionParts {
  /**
   * Choice questions: one per option, its signed `/a/answer` link; other types, or when the service
   * cannot carry every option link: one "Answer in Belfry" (the message in the inbox); none once the
   * deadline has passed.
   */
  buttons: AnswerButton[];
  /** Whether `buttons` are the options (else the one "Answer in Belfry", or none). */
  perOption: boolean;
  /** Plain-text lines: the options when no button carries them, the form's fields, the deadline. */
  lines: string[];
}

function utcMinute(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function deadlineOf(v: unknown): number | null {
  const ms = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : Number.NaN;
  return Number.isFinite(ms) ? ms : null;
}

/**
 * The question a delivered message carries in `extras["service::question"]`, or null. Per-option links
 * are used only when each is this server's own `{publicUrl}/a/answer?token=…` (the public URL the
 * message link starts with), so extras a sender wrote by hand cannot put foreign links behind answer buttons.
 * `now` (the send time) closes the question once `expiresAt` has passed; `fits` is the service's limit
 * on the per-option buttons (all or none: a reader never sees some options only).
 */
export function questionParts(
  item: DeliveryItem,
  now?: number,
  fits: (buttons: AnswerButton[]) => boolean = () => true,
): QuestionParts | null {
  const q = item.extras?.[QUESTION_EXTRA] as Record<string, unknown> | undefined;
  if (typeof q !== 'object' || q === null || Array.isArray(q)) return null;
  const type = QUESTION_TYPES.find((t) => t === q.type);
  if (!type) return null;
  const options = (Array.isArray(q.options) ? q.options : [])
    .filter((o): o is string => typeof o === 'string' && o !== '')
    .slice(0, QUESTION_OPTIONS_MAX);
  const expiresAt = deadlineOf(q.expiresAt);
  const open = expiresAt === null || now === undefined || now < expiresAt;
  const inApp: AnswerButton = { label: 'Answer in Belfry', url: item.links.message, primary: true };

  let choices: AnswerButton[] = [];
  if (type === 'choice' && options.length > 0) {
    const links = (typeof q.links === 'object' && q.links !== null ? q.links : {}) as Record<string, unknown>;
    const at = item.links.message.indexOf('/inbox?');
    const prefix = at > 0 ? `${item.links.message.slice(0, at)}/a/answer?token=` : null;
    const valid = (u: unknown): u is string =>
      typeof u === 'string' &&
      prefix !== null &&
      u.startsWith(prefix) &&
      u.length <= ANSWER_URL_MAX &&
      !/\s/.test(u);
    if (options.every((o) => Object.hasOwn(links, o) && valid(links[o])))
      choices = options.map((o) => ({
        label: cut(o, QUESTION_LABEL_MAX),
        url: links[o] as string,
        primary: o === q.defaultOption,
      }));
  }
  const perOption = open && choices.length > 0 && fits(choices);
  const buttons = !open ? [] : perOption ? choices : [inApp];

  const lines: string[] = [];
  if (!perOption && options.length > 0)
    lines.push(
      `Options: ${options.map((o) => cut(o, QUESTION_LABEL_MAX)).join(' · ')}${type === 'multi' ? ' (one or more)' : ''}`,
    );
  if (type === 'form' && Array.isArray(q.fields)) {
    const names = q.fields
      .map((f) => {
        const r = (f ?? {}) as Record<string, unknown>;
        const name = typeof r.label === 'string' && r.label !== '' ? r.label : r.name;
        return typeof name === 'string' ? `${name}${r.required === true ? '*' : ''}` : null;
      })
      .filter((n): n is string => n !== null);
    if (names.length > 0) lines.push(cut(`Form: ${names.join(', ')}`, 300));
  }
  if (type === 'text') lines.push(q.format === 'json' ? 'Answer with JSON' : 'Answer with text');
  if (expiresAt !== null)
    lines.push(open ? `Answer by ${utcMinute(expiresAt)}` : `Closed at ${utcMinute(expiresAt)}`);
  return { buttons, perOption, lines };
}
