import { promises as dns } from 'node:dns';
import net from 'node:net';
import type { AppContext } from '../../../context';
import { monitorNet } from '../kind';

export type Resolved = { address: string; family: 4 | 6 };
export type ResolveResult = Resolved | { error: string };

export const PRIVATE_REFUSED = 'private address refused';

/** Loopback, private, link-local, unspecified and carrier-grade NAT ranges (BELFRY_BLOCK_PRIVATE_TARGETS). */
const privateRanges = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  privateRanges.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  privateRanges.addSubnet(prefix, bits, 'ipv6');

/** True for an address BELFRY_BLOCK_PRIVATE_TARGETS refuses (IPv4-mapped IPv6 judged as its IPv4 address). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return privateRanges.check(mapped[1]!, 'ipv4');
  const family = net.isIP(address);
  if (family === 0) return false;
  return privateRanges.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** `[::1]` → `::1`, `Example.COM.` → `example.com`. */
export function bareHost(host: string): string {
  return host
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * RFC 6761 reserves `.invalid` for names that must never resolve: they fail here without asking any
 * resolver (so do the tests' unresolvable names, which must not send traffic elsewhere).
 */
function neverResolves(host: string): boolean {
  return host === 'invalid' || host.endsWith('.invalid');
}

/**
 * Resolves a host for a check: monitorNet(ctx).hosts overrides first, then DNS (dns.lookup). IP literals pass.
 * Without `allowPrivate` (BELFRY_BLOCK_PRIVATE_TARGETS on and the owner is not an administrator), loopback,
 * private and link-local addresses are refused: `private address refused`.
 */
export async function resolveHost(
  ctx: AppContext,
  host: string,
  opts: { allowPrivate: boolean },
): Promise<ResolveResult> {
  const h = bareHost(host);
  let found: Resolved;
  const literal = net.isIP(h);
  const override = literal ? undefined : monitorNet(ctx).hosts?.get(h);
  if (literal) found = { address: h, family: literal as 4 | 6 };
  else if (override && net.isIP(override)) found = { address: override, family: net.isIP(override) as 4 | 6 };
  else if (neverResolves(h) || h === '') return { error: `DNS lookup failed: ${host}` };
  else {
    try {
      const r = await dns.lookup(h, { verbatim: true });
      found = { address: r.address, family: r.family === 6 ? 6 : 4 };
    } catch {
      return { error: `DNS lookup failed: ${host}` };
    }
  }
  if (!opts.allowPrivate && isPrivateAddress(found.address)) return { error: PRIVATE_REFUSED };
  return found;
}

/** The error a lookup function hands to net/tls, carrying the check's error text. */
export class ResolveError extends Error {
  readonly code = 'EBELFRYRESOLVE';
}

/**
 * A net/tls `lookup` option built on resolveHost, so http.request and net.connect use the same rules.
 * Node calls no lookup for an IP literal host: callers connecting to literals call resolveHost themselves
 * (httpRequest and tcpProbe resolve every hop first and connect to the address they got).
 */
export function lookupFor(ctx: AppContext, opts: { allowPrivate: boolean }): net.LookupFunction {
  return (hostname, options, callback) => {
    resolveHost(ctx, hostname, opts).then(
      (r) => {
        if ('error' in r) {
          callback(new ResolveError(r.error), '', 4);
          return;
        }
        if ((options as { all?: boolean }).all)
          (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [r]);
        else callback(null, r.address, r.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 4),
    );
  };
}
