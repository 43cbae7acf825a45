import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { AppContext } from '../../../context';
import { netErrorText, timeoutText, untilAborted } from './errors';
import { bareHost, resolveHost } from './resolve';
import { certValidTo } from './tcp';

export interface HttpRequestSpec {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  basicAuth?: { username: string; password: string } | null;
  /** Up to MAX_REDIRECTS. */
  followRedirects: boolean;
  ignoreTlsErrors: boolean;
  /** Aborts at the timeout (error `timeout after {timeoutSec} s`) or when the server stops. */
  signal: AbortSignal;
  timeoutSec: number;
  allowPrivate: boolean;
  /** Bytes of the body kept for assertions and extraction (default 2 MiB); the rest is drained. */
  maxBodyBytes?: number;
}

export type HttpResult =
  | {
      ok: true;
      statusCode: number;
      finalUrl: string;
      headers: Record<string, string>;
      body: string;
      responseTimeMs: number;
      /** Unix ms of the peer certificate's expiry (https only). */
      tlsValidTo?: number;
    }
  | { ok: false; error: string; responseTimeMs: number };

export const MAX_REDIRECTS = 10;
export const DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024;
const USER_AGENT = 'Belfry-Monitor';

/** Headers a redirect to another origin must not carry (credentials and the Host meant for the first one). */
const FIRST_ORIGIN_ONLY = /^(authorization|cookie|proxy-authorization|host)$/i;

interface Hop {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  tlsValidTo?: number;
}

/**
 * One HTTP(S) check request on node:http/https (per-request TLS options, the peer certificate, manual
 * redirects, our own resolution): every hop's host is resolved with resolveHost (overrides, private-address
 * refusal) and the socket connects to that address, so what was checked is what is connected to.
 * Never throws: failures come back as the §2.3 request-step texts.
 */
export async function httpRequest(ctx: AppContext, spec: HttpRequestSpec): Promise<HttpResult> {
  const started = performance.now();
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  const fail = (error: string): HttpResult => ({ ok: false, error, responseTimeMs: elapsed() });
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch {
    return fail(`ERR_INVALID_URL: invalid URL ${spec.url}`);
  }
  let method = spec.method.toUpperCase();
  let body = spec.body ?? '';
  let headers = { ...(spec.headers ?? {}) };
  let basicAuth = spec.basicAuth ?? null;
  for (let redirects = 0; ; redirects++) {
    if (spec.signal.aborted) return fail(timeoutText(spec.timeoutSec));
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return fail(`ERR_UNSUPPORTED_PROTOCOL: ${url.protocol} is not http or https`);
    const resolved = await untilAborted(
      resolveHost(ctx, url.hostname, { allowPrivate: spec.allowPrivate }),
      spec.signal,
    );
    if (resolved === null) return fail(timeoutText(spec.timeoutSec));
    if ('error' in resolved) return fail(resolved.error);
    let hop: Hop;
    try {
      hop = await oneRequest(url, resolved.address, method, headers, body, basicAuth, spec);
    } catch (err) {
      if (spec.signal.aborted) return fail(timeoutText(spec.timeoutSec));
      return fail(netErrorText(err, 'TLS error'));
    }
    const location = hop.headers.location;
    if (!spec.followRedirects || !isRedirect(hop.statusCode) || location === undefined) {
      return {
        ok: true,
        statusCode: hop.statusCode,
        finalUrl: url.toString(),
        headers: hop.headers,
        body: hop.body,
        responseTimeMs: elapsed(),
        ...(hop.tlsValidTo === undefined ? {} : { tlsValidTo: hop.tlsValidTo }),
      };
    }
    if (redirects >= MAX_REDIRECTS) return fail(`too many redirects: more than ${MAX_REDIRECTS}`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      return fail(`ERR_INVALID_URL: bad redirect location ${location}`);
    }
    // 303, and 301/302 after a POST, continue as GET without a body (as browsers and curl -L do).
    if (
      (hop.statusCode === 303 && method !== 'HEAD') ||
      ((hop.statusCode === 301 || hop.statusCode === 302) && method === 'POST')
    ) {
      method = 'GET';
      body = '';
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-/i.test(k)));
    }
    if (next.origin !== url.origin) {
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !FIRST_ORIGIN_ONLY.test(k)));
      basicAuth = null;
    }
    url = next;
  }
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function oneRequest(
  url: URL,
  address: string,
  method: string,
  given: Record<string, string>,
  body: string,
  basicAuth: { username: string; password: string } | null,
  spec: HttpRequestSpec,
): Promise<Hop> {
  const secure = url.protocol === 'https:';
  const host = bareHost(url.hostname);
  const headers: Record<string, string> = {};
  const has = (name: string) => Object.keys(headers).some((k) => k.toLowerCase() === name);
  for (const [k, v] of Object.entries(given)) headers[k] = v;
  if (!has('host')) headers.Host = url.host;
  if (!has('user-agent')) headers['User-Agent'] = USER_AGENT;
  if (!has('accept')) headers.Accept = '*/*';
  // Credentials in the URL (`https://user:pass@host/`) count as basic auth, as in curl and browsers.
  if (!basicAuth && url.username !== '')
    basicAuth = { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
  if (basicAuth && !has('authorization'))
    headers.Authorization = `Basic ${Buffer.from(`${basicAuth.username}:${basicAuth.password}`).toString('base64')}`;
  const payload = Buffer.from(body, 'utf8');
  if (payload.length > 0 || ['POST', 'PUT', 'PATCH'].includes(method))
    headers['Content-Length'] = String(payload.length);
  const options: https.RequestOptions = {
    method,
    host: address,
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers,
    agent: false,
    signal: spec.signal,
  };
  if (secure) {
    options.rejectUnauthorized = !spec.ignoreTlsErrors;
    // SNI and the certificate's name check use the URL's host, not the address connected to.
    if (net.isIP(host) === 0) options.servername = host;
  }
  const maxBody = spec.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return new Promise<Hop>((resolve, reject) => {
    const req = (secure ? https : http).request(options, (res: IncomingMessage) => {
      const tlsValidTo = secure ? certValidTo(res.socket as TLSSocket) : undefined;
      const kept: Buffer[] = [];
      let keptBytes = 0;
      res.on('data', (chunk: Buffer) => {
        if (keptBytes >= maxBody) return; // drained, not kept
        const part = keptBytes + chunk.length > maxBody ? chunk.subarray(0, maxBody - keptBytes) : chunk;
        kept.push(part);
        keptBytes += part.length;
      });
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('the response was cut off')));
      res.on('end', () =>
        resolve({
          statusCode: res.statusCode ?? 0,
          headers: flatHeaders(res),
          body: Buffer.concat(kept).toString('utf8'),
          ...(tlsValidTo === undefined ? {} : { tlsValidTo }),
        }),
      );
    });
    req.on('error', reject);
    req.end(payload.length > 0 ? payload : undefined);
  });
}

/** Response headers by lower-case name; repeated ones joined with ", " (as HTTP allows). */
function flatHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}
