import type { AppContext } from '../../../context';
import type { CheckIo, CheckOutcome, MonitorKind } from '../kind';
import { SECRET_MASK } from '../kind';
import { type HttpResult, httpRequest } from '../net/http';
import { bareHost } from '../net/resolve';
import {
  type AssertionResult,
  type Assertions,
  checkResponse,
  DEFAULT_EXPECTED_STATUS,
  firstFailure,
  parseAssertions,
  readExpectedStatus,
} from './assertions';
import { SecretValues } from './redact';
import { bad, bool, field, httpUrl, int, maskByName, obj, oneOf, str, stringMap } from './validate';

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type Method = (typeof METHODS)[number];
export type BasicAuth = { username: string; password: string };

/** The request of an `http-monitor` and of a workflow step (§2.3). */
export interface RequestFields {
  method: Method;
  url: string;
  headers: Record<string, string>;
  body: string;
  basicAuth: BasicAuth | null;
  expectedStatus: string[];
  followRedirects: boolean;
  ignoreTlsErrors: boolean;
}

export interface HttpSettings extends RequestFields, Assertions {
  tlsExpiryDays: number;
}

export const BODY_MAX = 65_536;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const DAY_MS = 86_400_000;

function readBasicAuth(prev: BasicAuth | null | undefined) {
  return (v: unknown, path: string): BasicAuth => {
    const o = obj(v, path);
    const username = field(o, 'username', `${path}.username`, str({ max: 200 }), {
      prev: undefined,
      required: true,
    });
    const password = field(o, 'password', `${path}.password`, str({ max: 1_000 }), {
      prev: undefined,
      required: true,
    });
    if (password !== SECRET_MASK) return { username, password };
    if (!prev) bad(`${path}.password`, `"${SECRET_MASK}" keeps the stored value, and none is stored`);
    return { username, password: prev.password };
  };
}

export function readHeaders(prev: Record<string, string> | undefined) {
  return stringMap({
    max: 50,
    valueMax: 8_192,
    prev,
    caseInsensitive: true,
    name: (k, p) => {
      if (!HEADER_NAME.test(k)) bad(p, 'not a valid header name');
    },
  });
}

/**
 * The request fields of `body` (paths under `prefix`, `steps[0].` for a workflow step). `templated`: the
 * URL may hold `{{…}}` (checked once substituted). `"********"` keeps the secrets of `secretsFrom`
 * (default `prev`): a replaced workflow step keeps those of the stored step at its position.
 */
export function parseRequestFields(
  body: Record<string, unknown>,
  prev: RequestFields | undefined,
  prefix: string,
  o: { templated: boolean; secretsFrom?: RequestFields | undefined },
): RequestFields {
  const secrets = o.secretsFrom ?? prev;
  const headers = field(body, 'headers', `${prefix}headers`, readHeaders(secrets?.headers), {
    prev: prev?.headers,
    def: {},
  });
  for (const [k, v] of Object.entries(headers))
    if (/[\r\n\0]/.test(v)) bad(`${prefix}headers.${k}`, 'must not contain line breaks');
  return {
    method: field(body, 'method', `${prefix}method`, oneOf(METHODS, { upper: true }), {
      prev: prev?.method,
      def: 'GET',
    }),
    url: field(body, 'url', `${prefix}url`, httpUrl({ templated: o.templated }), {
      prev: prev?.url,
      required: true,
    }),
    headers,
    body: field(body, 'body', `${prefix}body`, str({ max: BODY_MAX }), { prev: prev?.body, def: '' }),
    basicAuth: field(body, 'basicAuth', `${prefix}basicAuth`, readBasicAuth(secrets?.basicAuth), {
      prev: prev?.basicAuth,
      def: null,
      nullable: true,
    }),
    expectedStatus: field(body, 'expectedStatus', `${prefix}expectedStatus`, readExpectedStatus, {
      prev: prev?.expectedStatus,
      def: DEFAULT_EXPECTED_STATUS,
    }),
    followRedirects: field(body, 'followRedirects', `${prefix}followRedirects`, bool, {
      prev: prev?.followRedirects,
      def: true,
    }),
    ignoreTlsErrors: field(body, 'ignoreTlsErrors', `${prefix}ignoreTlsErrors`, bool, {
      prev: prev?.ignoreTlsErrors,
      def: false,
    }),
  };
}

/** Request fields as answered: secret header values and the basic-auth password as `"********"` (§0.3). */
export function presentRequestFields(r: RequestFields): RequestFields {
  return {
    ...r,
    headers: maskByName(r.headers),
    basicAuth: r.basicAuth ? { username: r.basicAuth.username, password: SECRET_MASK } : null,
  };
}

/** The host of a URL (bare, lower-case), or null when it has none (yet: `{{…}}`). */
export function urlHost(url: string): string | null {
  try {
    const h = bareHost(new URL(url).hostname);
    return h === '' ? null : h;
  } catch {
    return null;
  }
}

/** `details.headers` of a test answer: the three headers §2.6 names, when present. */
function someHeaders(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ['content-type', 'content-length', 'location']) if (h[k] !== undefined) out[k] = h[k];
  return out;
}

/** `TLS certificate expires in {d} days ({date})` when fewer than `minDays` remain (0 = off). */
function tlsExpiry(validTo: number, now: number, minDays: number): AssertionResult {
  const days = daysLeft(validTo, now);
  const date = new Date(validTo).toISOString().slice(0, 10);
  return {
    name: 'tlsExpiryDays',
    ok: days >= minDays,
    detail: `TLS certificate expires in ${days} days (${date})`,
  };
}

export function daysLeft(validTo: number, now: number): number {
  return Math.floor((validTo - now) / DAY_MS);
}

/** Sends a request for a check with the check's signal, timeout and private-address rule. */
export function sendRequest(io: CheckIo, r: RequestFields): Promise<HttpResult> {
  return httpRequest(io.ctx, {
    method: r.method,
    url: r.url,
    headers: r.headers,
    body: r.body,
    basicAuth: r.basicAuth,
    followRedirects: r.followRedirects,
    ignoreTlsErrors: r.ignoreTlsErrors,
    signal: io.signal,
    timeoutSec: io.timeoutSec,
    allowPrivate: io.allowPrivate,
  });
}

/**
 * One HTTP check in the §2.3 order: request, status, time, body, json, tls. Shared with `monitor`. The
 * secret header values and basic-auth password are redacted from the outcome's texts (§0.3).
 */
export async function runHttpCheck(s: HttpSettings, io: CheckIo): Promise<CheckOutcome> {
  const secrets = new SecretValues();
  secrets.addRequest(s);
  return secrets.redact(await httpCheck(s, io));
}

async function httpCheck(s: HttpSettings, io: CheckIo): Promise<CheckOutcome> {
  const r = await sendRequest(io, s);
  if (!r.ok)
    return {
      ok: false,
      error: r.error,
      responseTimeMs: null,
      details: { finalUrl: s.url, assertions: [{ name: 'request', ok: false, detail: r.error }] },
    };
  const assertions = checkResponse(r, s.expectedStatus, s);
  const now = io.ctx.clock.now();
  if (s.tlsExpiryDays > 0 && r.tlsValidTo !== undefined)
    assertions.push(tlsExpiry(r.tlsValidTo, now, s.tlsExpiryDays));
  const error = firstFailure(assertions);
  return {
    ok: error === undefined,
    ...(error === undefined ? {} : { error }),
    responseTimeMs: r.responseTimeMs,
    details: {
      statusCode: r.statusCode,
      finalUrl: r.finalUrl,
      headers: someHeaders(r.headers),
      bodyExcerpt: r.body.slice(0, 1_000),
      ...(r.tlsValidTo === undefined ? {} : { tlsDaysLeft: daysLeft(r.tlsValidTo, now) }),
      assertions,
    },
  };
}

export const httpMonitor: MonitorKind<HttpSettings> = {
  kind: 'http-monitor',
  defaults: { intervalSec: 60, timeoutSec: 10, timeoutMaxSec: 120 },
  parse(body, prev, _ctx: AppContext) {
    return {
      ...parseRequestFields(body, prev, '', { templated: false }),
      ...parseAssertions(body, prev, ''),
      tlsExpiryDays: field(body, 'tlsExpiryDays', 'tlsExpiryDays', int(0, 365), {
        prev: prev?.tlsExpiryDays,
        def: 0,
      }),
    };
  },
  present(s) {
    return { ...s, ...presentRequestFields(s) };
  },
  target: (s) => s.url,
  hosts: (s) => [urlHost(s.url) ?? s.url],
  check: (s, _state, io) => runHttpCheck(s, io),
};
