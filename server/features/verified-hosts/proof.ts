import { promises as dns } from 'node:dns';
import net from 'node:net';
import type { AppContext } from '../../context';
import { httpRequest } from '../monitors/net/http';
import { bareHost } from '../monitors/net/resolve';

/**
 * The two proofs of §3.1. The http proof goes through the monitors' HTTP client and resolver (every hop
 * resolved by Belfry and connected to the address resolved, so BELFRY_BLOCK_PRIVATE_TARGETS holds for
 * users who are not administrators); the dns proof asks node:dns for TXT records, or the test hook.
 */

export const PROOF_PATH = '/.well-known/belfry-verification.txt';
export const TXT_PREFIX = 'belfry-verification=';
const HTTP_TIMEOUT_SEC = 10;
const MAX_REDIRECTS = 3;
/** What the proof reads of the file; a token line is short, the rest is only quoted back (100 characters). */
const PROOF_BODY_BYTES = 64 * 1024;
const FOUND_CHARS = 100;

/** `http://{host}[:{port}]/.well-known/belfry-verification.txt` (port 80 left out, IPv6 in brackets). */
export function proofUrl(host: string, port: number): string {
  const h = net.isIPv6(host) ? `[${host}]` : host;
  return `http://${h}${port === 80 ? '' : `:${port}`}${PROOF_PATH}`;
}

/**
 * The DNS view of the proofs, per server. Production leaves it unset (node:dns, the system's resolver);
 * tests set `resolveTxt` through `t.server.ctx` so no query leaves the machine.
 */
export interface VerificationDns {
  resolveTxt?: (host: string) => Promise<string[][]>;
}

const dnsHooks = new WeakMap<AppContext, VerificationDns>();

export function verificationDns(ctx: AppContext): VerificationDns {
  let d = dnsHooks.get(ctx);
  if (!d) {
    d = {};
    dnsHooks.set(ctx, d);
  }
  return d;
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/**
 * GET the proof file (10 s in all, at most 3 redirects, each on the same host): null when a line of a
 * 200 answer equals the token, else the §3.1 error text.
 */
export async function httpProof(
  ctx: AppContext,
  o: { host: string; port: number; token: string; allowPrivate: boolean },
): Promise<string | null> {
  const signal = AbortSignal.timeout(HTTP_TIMEOUT_SEC * 1000);
  let url = proofUrl(o.host, o.port);
  for (let redirects = 0; ; redirects++) {
    const r = await httpRequest(ctx, {
      method: 'GET',
      url,
      followRedirects: false,
      ignoreTlsErrors: false,
      signal,
      timeoutSec: HTTP_TIMEOUT_SEC,
      allowPrivate: o.allowPrivate,
      maxBodyBytes: PROOF_BODY_BYTES,
    });
    if (!r.ok) return `verification failed: GET ${url} failed: ${r.error}`;
    const location = r.headers.location;
    if (isRedirect(r.statusCode) && location !== undefined) {
      if (redirects >= MAX_REDIRECTS)
        return `verification failed: GET ${url} failed: more than ${MAX_REDIRECTS} redirects`;
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        return `verification failed: GET ${url} failed: bad redirect location ${location}`;
      }
      if (bareHost(next.hostname) !== o.host)
        return `verification failed: GET ${url} failed: redirect to another host (${next.host})`;
      url = next.toString();
      continue;
    }
    if (r.statusCode !== 200) return `verification failed: GET ${url} answered ${r.statusCode}`;
    if (r.body.split(/\r?\n/).some((line) => line.trim() === o.token)) return null;
    return `verification failed: ${url} does not contain the token (found: "${r.body.slice(0, FOUND_CHARS)}")`;
  }
}

/** Names under `.invalid` never resolve (RFC 6761): no query is sent for them. */
function neverResolves(host: string): boolean {
  return host === 'invalid' || host.endsWith('.invalid');
}

/** A TXT record `belfry-verification=<token>` on the host: null, else the §3.1 error text with what was found. */
export async function dnsProof(ctx: AppContext, o: { host: string; token: string }): Promise<string | null> {
  const expected = `${TXT_PREFIX}${o.token}`;
  let records: string[] = [];
  if (!neverResolves(o.host)) {
    try {
      const resolve = verificationDns(ctx).resolveTxt ?? ((h: string) => dns.resolveTxt(h));
      records = (await resolve(o.host)).map((chunks) => chunks.join(''));
    } catch {
      // No such name, no TXT records, or no answer: nothing found.
      records = [];
    }
  }
  if (records.some((r) => r.trim() === expected)) return null;
  const found = records.join(', ').slice(0, 2 * FOUND_CHARS);
  return `verification failed: no TXT record ${expected} on ${o.host} (found: "${found}")`;
}
