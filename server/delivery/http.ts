import http, { type IncomingMessage, STATUS_CODES } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AppContext } from '../context';
import { untilAborted } from '../features/monitors/net/errors';
import { bareHost, PRIVATE_REFUSED, resolveHost } from '../features/monitors/net/resolve';
import { buildInfo } from '../lib/version';
import {
  DELIVERY_CONNECT_TIMEOUT_MS,
  DELIVERY_TOTAL_TIMEOUT_MS,
  DeliveryError,
  type SendIo,
} from './adapter';

/** One outbound POST of an adapter (§6.1: connect 5 s, total 15 s, no redirects). */
export interface DeliveryRequest {
  url: string;
  /** A JSON body (`application/json`) … */
  json?: unknown;
  /** … or a form body (`application/x-www-form-urlencoded`, Twilio) … */
  form?: Record<string, string>;
  /** … or JSON text sent byte for byte (a signed webhook body). */
  jsonText?: string;
  headers?: Record<string, string>;
  basicAuth?: { username: string; password: string };
  /**
   * Values that must never appear in an error text (bot tokens, keys, webhook URLs): replaced by `********`.
   * The request URL, its path and query and the Basic password are always added.
   */
  secrets?: readonly string[];
}

export interface DeliveryResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Bytes of a response body kept (for the error reason); the rest is drained. */
const RESPONSE_BODY_MAX_BYTES = 64 * 1024;
/** Characters of the service's reason in an error text. */
export const ERROR_REASON_MAX_CHARS = 200;
const MASK = '********';

export function timeoutError(): DeliveryError {
  return new DeliveryError(`timeout after ${DELIVERY_TOTAL_TIMEOUT_MS / 1000} s`, true);
}

/**
 * POSTs on node:http/https to the address resolveHost gave (the monitors' rules: overrides, and loopback,
 * private and link-local addresses refused with `private address refused` when `!io.allowPrivate`).
 * Resolves with a 2xx answer; throws DeliveryError otherwise: network errors, 408, 429 and 5xx retryable
 * (with `retryAfterSec` from `Retry-After` or the service's `retry_after`), other statuses permanent.
 * The error text is `HTTP {status}: {the service's reason}` or the network error, never a secret.
 */
export async function deliveryPost(io: SendIo, req: DeliveryRequest): Promise<DeliveryResponse> {
  const secrets = secretsOf(req);
  try {
    return await post(io, req);
  } catch (err) {
    if (err instanceof DeliveryError)
      throw new DeliveryError(redact(err.message, secrets), err.retryable, err.retryAfterSec);
    throw new DeliveryError(redact(String((err as Error)?.message ?? err), secrets), true);
  }
}

async function post(io: SendIo, req: DeliveryRequest): Promise<DeliveryResponse> {
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    throw new DeliveryError('invalid URL', false);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new DeliveryError(`unsupported protocol ${url.protocol}`, false);
  const signal = AbortSignal.any([io.signal, AbortSignal.timeout(DELIVERY_TOTAL_TIMEOUT_MS)]);
  if (signal.aborted) throw timeoutError();
  const resolved = await untilAborted(
    resolveHost(io.ctx, url.hostname, { allowPrivate: io.allowPrivate }),
    signal,
  );
  if (resolved === null) throw timeoutError();
  if ('error' in resolved) throw new DeliveryError(resolved.error, resolved.error !== PRIVATE_REFUSED);
  let res: DeliveryResponse;
  try {
    res = await send(io, url, resolved.address, req, signal);
  } catch (err) {
    if (signal.aborted) throw timeoutError();
    throw new DeliveryError(networkText(err), true);
  }
  if (res.status >= 200 && res.status < 300) return res;
  throw statusError(io, res);
}

function send(
  io: SendIo,
  url: URL,
  address: string,
  req: DeliveryRequest,
  signal: AbortSignal,
): Promise<DeliveryResponse> {
  const secure = url.protocol === 'https:';
  const host = bareHost(url.hostname);
  const body =
    req.form !== undefined
      ? new URLSearchParams(req.form).toString()
      : (req.jsonText ?? (req.json !== undefined ? JSON.stringify(req.json) : ''));
  const payload = Buffer.from(body, 'utf8');
  const headers: Record<string, string> = {
    Host: url.host,
    'User-Agent': `Belfry/${buildInfo(io.ctx.config).version}`,
    Accept: 'application/json, text/plain, */*',
    'Content-Type':
      req.form !== undefined ? 'application/x-www-form-urlencoded' : 'application/json; charset=utf-8',
    ...req.headers,
    'Content-Length': String(payload.length),
  };
  if (req.basicAuth)
    headers.Authorization = `Basic ${Buffer.from(`${req.basicAuth.username}:${req.basicAuth.password}`).toString('base64')}`;
  const options: https.RequestOptions = {
    method: 'POST',
    host: address,
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers,
    agent: agentOf(io.ctx, secure),
    signal,
  };
  if (secure && net.isIP(host) === 0) options.servername = host;
  return new Promise<DeliveryResponse>((resolve, reject) => {
    const r = (secure ? https : http).request(options, (res: IncomingMessage) => {
      const kept: Buffer[] = [];
      let keptBytes = 0;
      res.on('data', (chunk: Buffer) => {
        if (keptBytes >= RESPONSE_BODY_MAX_BYTES) return;
        const part = chunk.subarray(0, RESPONSE_BODY_MAX_BYTES - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      });
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('the response was cut off')));
      res.on('end', () => {
        const flat: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers))
          if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
        resolve({ status: res.statusCode ?? 0, headers: flat, body: Buffer.concat(kept).toString('utf8') });
      });
    });
    r.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(
        () => r.destroy(new Error(`connect timeout after ${DELIVERY_CONNECT_TIMEOUT_MS / 1000} s`)),
        DELIVERY_CONNECT_TIMEOUT_MS,
      );
      socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    r.on('error', reject);
    r.end(payload);
  });
}

/**
 * Keep-alive agents per server: a drain to one service reuses its connections instead of a TCP (and TLS)
 * handshake per delivery (the redelivery bench: connect was the largest single CPU cost per delivery).
 * The pool is keyed by the pinned address (and TLS server name), so what was resolved is what is reused.
 * Idle sockets are dropped after AGENT_IDLE_MS, before the common 5 s keep-alive of servers closes them
 * under a request.
 */
const AGENT_IDLE_MS = 4_000;
const AGENT_SOCKETS_PER_HOST = 16;
const agents = new WeakMap<AppContext, { http: http.Agent; https: https.Agent }>();

function agentOf(ctx: AppContext, secure: boolean): http.Agent {
  let a = agents.get(ctx);
  if (!a) {
    const opts = {
      keepAlive: true,
      maxSockets: AGENT_SOCKETS_PER_HOST,
      maxFreeSockets: AGENT_SOCKETS_PER_HOST,
      timeout: AGENT_IDLE_MS,
    };
    a = { http: new http.Agent(opts), https: new https.Agent(opts) };
    agents.set(ctx, a);
  }
  return secure ? a.https : a.http;
}

/** Closes this server's delivery connections (at stop). */
export function closeDeliveryAgents(ctx: AppContext): void {
  const a = agents.get(ctx);
  a?.http.destroy();
  a?.https.destroy();
  agents.delete(ctx);
}

/** node's own text for socket errors (`connect ECONNREFUSED 127.0.0.1:9`, TLS failures). */
function networkText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return typeof e?.message === 'string' && e.message !== '' ? e.message : String(err);
}

function statusError(io: SendIo, res: DeliveryResponse): DeliveryError {
  const { status } = res;
  if (status >= 300 && status < 400)
    return new DeliveryError(`HTTP ${status}: redirects are not followed`, false);
  const retryable = status === 408 || status === 429 || status >= 500;
  const text = `HTTP ${status}: ${reasonOf(res.body) || STATUS_CODES[status] || 'error'}`;
  return new DeliveryError(text, retryable, retryable ? retryAfterOf(io, res) : undefined);
}

/**
 * The service's short reason: Telegram's `description`, the `message` of Discord, PagerDuty, Opsgenie,
 * Twilio and Mattermost (with their `errors` and `code`), else the plain-text body (Slack) — one line,
 * at most ERROR_REASON_MAX_CHARS.
 */
export function reasonOf(body: string): string {
  const text = body.trim();
  let reason = text.split(/\r?\n/)[0] ?? '';
  try {
    reason = jsonReason(JSON.parse(text)) ?? reason;
  } catch {
    // plain text (Slack)
  }
  return cutReason(reason.replace(/\p{Cc}+/gu, ' ').trim());
}

/** `{description}`, `{message, code?, errors?}` or an Azure-style `{error: {code, message}}`; null when none. */
function jsonReason(j: unknown): string | null {
  if (typeof j !== 'object' || j === null || Array.isArray(j)) return null;
  const o = j as Record<string, unknown>;
  if (typeof o.error === 'object' && o.error !== null) return jsonReason(o.error);
  const main = [o.description, o.message, o.error_description, o.error].find(
    (v): v is string => typeof v === 'string' && v !== '',
  );
  const details = flatStrings(o.errors);
  if (!main && details.length === 0) return null;
  const code = typeof o.code === 'number' || typeof o.code === 'string' ? ` (${o.code})` : '';
  return [main ? `${main}${code}` : '', details.join('; ')].filter(Boolean).join(': ');
}

function cutReason(s: string): string {
  const chars = [...s];
  return chars.length <= ERROR_REASON_MAX_CHARS
    ? s
    : `${chars.slice(0, ERROR_REASON_MAX_CHARS - 1).join('')}…`;
}

function flatStrings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(flatStrings);
  if (typeof v === 'object' && v !== null) return Object.values(v).flatMap(flatStrings);
  return [];
}

/** `Retry-After` (seconds or an HTTP-date), else the body's `retry_after` (Discord) or `parameters.retry_after` (Telegram). */
export function retryAfterOf(io: SendIo, res: DeliveryResponse): number | undefined {
  const header = res.headers['retry-after']?.trim();
  if (header) {
    if (/^\d+(\.\d+)?$/.test(header)) return Math.ceil(Number(header));
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - io.ctx.clock.now()) / 1000));
  }
  try {
    const j = JSON.parse(res.body) as { retry_after?: unknown; parameters?: { retry_after?: unknown } };
    const v = j?.parameters?.retry_after ?? j?.retry_after;
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Math.ceil(v);
  } catch {
    // no body hint
  }
  return undefined;
}

function secretsOf(req: DeliveryRequest): string[] {
  const out = [...(req.secrets ?? [])];
  try {
    const u = new URL(req.url);
    out.push(req.url, u.href, `${u.pathname}${u.search}`);
    if (u.search) out.push(u.search);
  } catch {
    out.push(req.url);
  }
  if (req.basicAuth) out.push(req.basicAuth.password);
  // Longest first, so a URL is masked whole rather than around a token inside it.
  return out.filter((s) => s.length >= 4 && s !== '/').sort((a, b) => b.length - a.length);
}

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join(MASK);
  return out;
}
