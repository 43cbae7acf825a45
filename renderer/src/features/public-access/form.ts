import { SECRET_MASK, type TunnelProviderName, type TunnelRecord } from './types';

/**
 * The provider form's state: every field a string as typed, one set per provider so switching the
 * picker back and forth loses nothing. A secret field is empty when the stored value should be kept
 * (`storedSecrets` says which ones exist); only a pasted value replaces it.
 */
export interface TunnelForm {
  provider: TunnelProviderName;
  ssh: {
    host: string;
    port: string;
    user: string;
    privateKey: string;
    remotePort: string;
    publicUrl: string;
    bindAddress: string;
    hostFingerprint: string;
  };
  ngrok: { authtoken: string; domain: string };
  cloudflared: { token: string; hostname: string };
  /** Secrets the server holds (answered as "********"): `ssh.privateKey`, `ngrok.authtoken`, `cloudflared.token`. */
  storedSecrets: ReadonlySet<string>;
}

const text = (v: unknown): string => (v === null || v === undefined ? '' : String(v));

export function formOf(r: TunnelRecord): TunnelForm {
  const stored = new Set<string>();
  if (r.ssh?.privateKey === SECRET_MASK) stored.add('ssh.privateKey');
  if (r.ngrok?.authtoken === SECRET_MASK) stored.add('ngrok.authtoken');
  if (r.cloudflared?.token === SECRET_MASK) stored.add('cloudflared.token');
  const secret = (v: unknown) => (v === SECRET_MASK ? '' : text(v));
  return {
    provider: r.provider,
    ssh: {
      host: text(r.ssh?.host),
      port: text(r.ssh?.port ?? 22),
      user: text(r.ssh?.user),
      privateKey: secret(r.ssh?.privateKey),
      remotePort: text(r.ssh?.remotePort),
      publicUrl: text(r.ssh?.publicUrl),
      bindAddress: text(r.ssh?.bindAddress ?? 'localhost'),
      hostFingerprint: text(r.ssh?.hostFingerprint),
    },
    ngrok: { authtoken: secret(r.ngrok?.authtoken), domain: text(r.ngrok?.domain) },
    cloudflared: { token: secret(r.cloudflared?.token), hostname: text(r.cloudflared?.hostname) },
    storedSecrets: stored,
  };
}

/** A number field as typed: a whole number goes as a number, anything else as typed (the server names it). */
function num(s: string): number | string {
  const t = s.trim();
  return /^\d+$/.test(t) ? Number(t) : t;
}

/** An empty secret keeps the stored one ("********"); an empty one with nothing stored is left out. */
function secretOut(f: TunnelForm, path: string, value: string): string | undefined {
  if (value.trim() !== '') return value;
  return f.storedSecrets.has(path) ? SECRET_MASK : undefined;
}

/** Empty optional text is left out (the server's default), else trimmed. */
function opt(s: string): string | undefined {
  return s.trim() === '' ? undefined : s.trim();
}

/** The `PUT /tunnel` body for the chosen provider. */
export function bodyOf(f: TunnelForm): Record<string, unknown> {
  switch (f.provider) {
    case 'none':
      return { provider: 'none' };
    case 'ssh': {
      const s = f.ssh;
      return {
        provider: 'ssh',
        ssh: {
          host: opt(s.host),
          port: s.port.trim() === '' ? undefined : num(s.port),
          user: opt(s.user),
          privateKey: secretOut(f, 'ssh.privateKey', s.privateKey),
          remotePort: s.remotePort.trim() === '' ? undefined : num(s.remotePort),
          publicUrl: opt(s.publicUrl),
          bindAddress: s.bindAddress.trim() === '' ? undefined : s.bindAddress.trim(),
          hostFingerprint: opt(s.hostFingerprint) ?? null,
        },
      };
    }
    case 'ngrok':
      return {
        provider: 'ngrok',
        ngrok: {
          authtoken: secretOut(f, 'ngrok.authtoken', f.ngrok.authtoken),
          domain: opt(f.ngrok.domain) ?? null,
        },
      };
    case 'cloudflared':
      return {
        provider: 'cloudflared',
        cloudflared: {
          token: secretOut(f, 'cloudflared.token', f.cloudflared.token) ?? null,
          hostname: opt(f.cloudflared.hostname) ?? null,
        },
      };
  }
}

/** `host:port` of the record's target, whichever shape the server answers. */
export function targetText(t: TunnelRecord['target']): string {
  if (!t) return 'not running';
  return typeof t === 'string' ? t : `${t.host}:${t.port}`;
}

/**
 * What the public listener serves (and so what a tunnel exposes): the public routes only. Everything
 * else answers 404 there.
 */
export const EXPOSED_ROUTES: readonly { path: string; what: string }[] = [
  { path: '/health', what: 'health check (answers with this server’s instance id)' },
  { path: '/webhook/…', what: 'incoming webhooks into a channel (token in the URL)' },
  { path: '/heartbeat/ping/…', what: 'heartbeat pings' },
  { path: '/router/…', what: 'the webhook router' },
  { path: '/metric/…', what: 'metric ingest' },
  { path: '/script/…', what: 'web script snippets and error reports' },
  { path: '/status/…', what: 'public status pages' },
  { path: '/status-subscribe/…', what: 'status page subscriptions' },
  { path: '/a/answer', what: 'signed answer links of questions' },
  { path: '/m/read', what: 'signed “mark as read” links' },
  { path: '/image/…', what: 'message images' },
];

export const NEVER_EXPOSED =
  'Never exposed: this web app, sign-in, the API (accounts, channels, messages, tokens, settings), the live streams (/ws, /stream) and everything else. Each of them answers 404 on the public listener, and it reads no credentials.';
