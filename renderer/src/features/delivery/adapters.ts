import { ApiError } from '../../api/client';
import { fromPairs, type Pair, SECRET_MASK, toPairs } from '../monitors/kinds';

/**
 * The re-delivery adapters as the settings screen shows them: their fields (docs/api.md
 * "deliveryConfig"), where each value comes from, and the conversions between a channel's masked
 * `deliveryConfig` entry and the form's draft, both ways. The server validates; this only shapes input.
 */
export { SECRET_MASK };

/** The common fields' defaults (docs/api.md "deliveryConfig"). */
export const DEFAULT_DELAY_SEC = 300;
export const DELAY_MAX_SEC = 86_400;

export type FieldKind = 'text' | 'secret' | 'url' | 'emails' | 'phone' | 'region' | 'headers';

export interface AdapterField {
  key: string;
  label: string;
  kind: FieldKind;
  /** Where to find the value, shown under the field. */
  hint: string;
  optional?: boolean;
  placeholder?: string;
}

export interface AdapterInfo {
  name: string;
  label: string;
  /** One line on what the adapter sends and where. */
  about: string;
  fields: AdapterField[];
  /** Fixed fields sent as they are (Twilio's `provider`). */
  fixed?: Record<string, unknown>;
}

const twilio = (what: 'texts' | 'calls'): AdapterField[] => [
  {
    key: 'accountSid',
    label: 'Account SID',
    kind: 'text',
    hint: 'Twilio Console → Account info: the Account SID (starts with AC).',
    placeholder: 'AC…',
  },
  {
    key: 'authToken',
    label: 'Auth token',
    kind: 'secret',
    hint: 'Twilio Console → Account info: the Auth Token (click to show it).',
  },
  {
    key: 'from',
    label: 'From number',
    kind: 'phone',
    hint: `A Twilio number of yours that can send ${what === 'texts' ? 'SMS' : 'voice calls'} (Phone Numbers → Active numbers), with the country code.`,
    placeholder: '+15551234567',
  },
  {
    key: 'to',
    label: 'To number',
    kind: 'phone',
    hint: `Your phone, with the country code; a trial account ${what === 'texts' ? 'texts' : 'calls'} only verified numbers.`,
    placeholder: '+15557654321',
  },
];

const incomingWebhook = (hint: string, placeholder: string): AdapterField => ({
  key: 'webhookUrl',
  label: 'Webhook URL',
  kind: 'secret',
  hint,
  placeholder,
});

/** In the order of docs/api.md (and the server's registry). */
export const ADAPTERS: readonly AdapterInfo[] = [
  {
    name: 'email',
    label: 'Email',
    about: 'A mail with the message and a “Mark as read” link, through the server’s SMTP settings.',
    fields: [
      {
        key: 'to',
        label: 'To',
        kind: 'emails',
        hint: '1 to 10 addresses, separated by commas. The server must have an SMTP server (BELFRY_SMTP_URL).',
        placeholder: 'me@example.com',
      },
    ],
  },
  {
    name: 'sms',
    label: 'SMS',
    about: 'A text message through your Twilio account: the title, the message and a read link.',
    fields: twilio('texts'),
    fixed: { provider: 'twilio' },
  },
  {
    name: 'call',
    label: 'Phone call',
    about: 'A call through your Twilio account that reads the channel, title and message aloud twice.',
    fields: twilio('calls'),
    fixed: { provider: 'twilio' },
  },
  {
    name: 'slack',
    label: 'Slack',
    about: 'A post with “Open” and “Mark as read” buttons in a Slack channel.',
    fields: [
      incomingWebhook(
        'api.slack.com/apps → your app → Incoming Webhooks → Add New Webhook to Workspace, pick the channel, copy the URL.',
        'https://hooks.slack.com/services/…',
      ),
    ],
  },
  {
    name: 'discord',
    label: 'Discord',
    about: 'An embed with the message and a read link in a Discord channel.',
    fields: [
      incomingWebhook(
        'Channel settings → Integrations → Webhooks → New Webhook → Copy Webhook URL.',
        'https://discord.com/api/webhooks/…',
      ),
    ],
  },
  {
    name: 'teams',
    label: 'Microsoft Teams',
    about: 'A card with “Open” and “Mark as read” in a Teams channel.',
    fields: [
      incomingWebhook(
        'In the channel: … → Workflows → “Post to a channel when a webhook request is received” (or an Incoming Webhook connector); copy the URL it gives.',
        'https://…webhook.office.com/… or a Workflows URL',
      ),
    ],
  },
  {
    name: 'mattermost',
    label: 'Mattermost',
    about: 'A post with “Open” and “Mark as read” links in a Mattermost channel.',
    fields: [
      incomingWebhook(
        'Product menu → Integrations → Incoming Webhooks → Add Incoming Webhook; copy the URL.',
        'https://chat.example.com/hooks/…',
      ),
      {
        key: 'channel',
        label: 'Channel',
        kind: 'text',
        optional: true,
        hint: 'Optional: another channel than the webhook’s own, e.g. town-square.',
      },
      {
        key: 'username',
        label: 'Post as',
        kind: 'text',
        optional: true,
        hint: 'Optional: the sender name, when the server allows webhooks to override it.',
      },
    ],
  },
  {
    name: 'telegram',
    label: 'Telegram',
    about: 'A bot message with “Open” and “Mark read” buttons; quiet below priority 4.',
    fields: [
      {
        key: 'botToken',
        label: 'Bot token',
        kind: 'secret',
        hint: 'Message @BotFather, send /newbot and follow it; it answers the token (123456:ABC…).',
      },
      {
        key: 'chatId',
        label: 'Chat ID',
        kind: 'text',
        hint: 'Send your bot a message, then open api.telegram.org/bot<token>/getUpdates and copy message.chat.id; for a public channel, @channelname.',
        placeholder: '123456789',
      },
    ],
  },
  {
    name: 'webhook',
    label: 'Webhook',
    about:
      'A signed JSON POST to your own endpoint: event, message, channel and links (the same X-Belfry-Delivery id on every retry).',
    fields: [
      {
        key: 'url',
        label: 'URL',
        kind: 'url',
        hint: 'Your endpoint; a password in it or secret-looking query values show as ******** and are kept.',
        placeholder: 'https://example.com/belfry',
      },
      {
        key: 'secret',
        label: 'Signing secret',
        kind: 'secret',
        optional: true,
        hint: 'Optional: any long random text; each request then carries X-Belfry-Signature: sha256=HMAC of “{timestamp}.{body}”.',
      },
      {
        key: 'headers',
        label: 'Headers',
        kind: 'headers',
        optional: true,
        hint: 'Optional: at most 20 headers sent with each request (e.g. Authorization); every value is kept secret.',
      },
    ],
  },
  {
    name: 'pagerduty',
    label: 'PagerDuty',
    about: 'An Events API v2 alert (one per message), severity from the priority.',
    fields: [
      {
        key: 'routingKey',
        label: 'Integration key',
        kind: 'secret',
        hint: 'Service → Integrations → Add integration → Events API V2; copy its Integration Key.',
      },
      {
        key: 'region',
        label: 'Region',
        kind: 'region',
        hint: 'EU when your account is at *.eu.pagerduty.com.',
      },
    ],
  },
  {
    name: 'opsgenie',
    label: 'Opsgenie',
    about: 'An alert (one per message), P1 to P5 from the priority.',
    fields: [
      {
        key: 'apiKey',
        label: 'API key',
        kind: 'secret',
        hint: 'Settings → Integrations → Add integration → API (or a team’s API integration); copy its API Key.',
      },
      {
        key: 'region',
        label: 'Region',
        kind: 'region',
        hint: 'EU when your account is at *.app.eu.opsgenie.com.',
      },
    ],
  },
];

/** A webhook header as the form edits it (the monitors' name/value rows). */
export type HeaderRow = Pair;

/** One adapter's form: every input as the string it shows. */
export interface AdapterDraft {
  enabled: boolean;
  minPriority: string;
  delaySec: string;
  values: Record<string, string>;
  headers: HeaderRow[];
}

const str = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');

/** The form of a stored (masked) adapter entry, or of a new one with the defaults. */
export function draftOf(info: AdapterInfo, stored?: Record<string, unknown>): AdapterDraft {
  const values: Record<string, string> = {};
  let headers: HeaderRow[] = [];
  for (const f of info.fields) {
    const v = stored?.[f.key];
    if (f.kind === 'headers')
      headers = v && typeof v === 'object' ? toPairs(v as Record<string, string>) : [];
    else if (f.kind === 'emails') values[f.key] = Array.isArray(v) ? v.map(str).join(', ') : '';
    else if (f.kind === 'region') values[f.key] = v === 'eu' ? 'eu' : 'us';
    else values[f.key] = str(v);
  }
  return {
    enabled: stored ? stored.enabled !== false : true,
    minPriority: str(stored?.minPriority ?? 0),
    delaySec: str(stored?.delaySec ?? DEFAULT_DELAY_SEC),
    values,
    headers,
  };
}

/** A number input's value for the API: what was typed, as a number (the server says what is wrong). */
function numberOf(input: string): number | string {
  const n = Number(input);
  return input.trim() !== '' && Number.isFinite(n) ? n : input;
}

/** The adapter object a PUT sends; untouched secrets stay "********", which keeps the stored value. */
export function bodyOf(info: AdapterInfo, d: AdapterDraft): Record<string, unknown> {
  const body: Record<string, unknown> = {
    enabled: d.enabled,
    minPriority: numberOf(d.minPriority),
    delaySec: numberOf(d.delaySec),
    ...info.fixed,
  };
  for (const f of info.fields) {
    if (f.kind === 'headers') {
      const headers = fromPairs(d.headers);
      if (Object.keys(headers).length) body[f.key] = headers;
      continue;
    }
    const raw = d.values[f.key] ?? '';
    const v = f.kind === 'secret' ? raw : raw.trim();
    if (f.kind === 'emails')
      body[f.key] = v
        .split(/[\s,;]+/)
        .map((a) => a.trim())
        .filter(Boolean);
    else if (f.optional && v === '') continue;
    // Telegram takes numeric chat ids as numbers and @names as strings.
    else if (f.key === 'chatId' && /^-?\d{1,15}$/.test(v)) body[f.key] = Number(v);
    else body[f.key] = v;
  }
  return body;
}

/** Whether the draft differs from what is saved (a new adapter: always). */
export function isDirty(info: AdapterInfo, d: AdapterDraft, stored?: Record<string, unknown>): boolean {
  if (!stored) return true;
  return JSON.stringify(bodyOf(info, d)) !== JSON.stringify(bodyOf(info, draftOf(info, stored)));
}

/** Whether a field (not a header: the header rows say it themselves) still holds a masked value. */
export function hasMask(d: AdapterDraft): boolean {
  return Object.values(d.values).some((v) => v.includes(SECRET_MASK));
}

/** The common fields, shown under every adapter, and the keys a server 400 may name. */
export const COMMON_KEYS = ['enabled', 'minPriority', 'delaySec'] as const;

/**
 * Where a save's error belongs: the server names the adapter's field first
 * (`deliveryConfig.webhook.url: Invalid URL`, `deliveryConfig.webhook.headers.X-Key: no stored secret
 * to keep`, `deliveryConfig.webhook: the url changed; …`). `field` is the adapter's field it names (null:
 * the adapter as a whole, or not about deliveryConfig at all); `text` the server's words.
 */
export function problemOf(err: unknown, info: AdapterInfo): { field: string | null; text: string } | null {
  if (!err) return null;
  const text = err instanceof Error ? err.message : String(err);
  if (!(err instanceof ApiError)) return { field: null, text };
  const prefix = `deliveryConfig.${info.name}.`;
  if (!text.startsWith(prefix)) return { field: null, text };
  const key = /^[A-Za-z]+/.exec(text.slice(prefix.length))?.[0] ?? '';
  const known = [...COMMON_KEYS, ...info.fields.map((f) => f.key)].includes(key);
  return { field: known ? key : null, text };
}

/** "5 minutes", "1 hour 30 minutes", "45 seconds": a delay in words for the hint under its field. */
export function delayText(sec: number): string {
  if (!Number.isFinite(sec) || sec < 0) return '';
  if (sec === 0) return '0 seconds';
  const h = Math.floor(sec / 3600);
  const m = Math.floor((sec % 3600) / 60);
  const s = sec % 60;
  const part = (n: number, unit: string) => (n ? `${n} ${unit}${n === 1 ? '' : 's'}` : '');
  return [part(h, 'hour'), part(m, 'minute'), part(s, 'second')].filter(Boolean).join(' ');
}
