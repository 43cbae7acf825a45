import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { VERIFIED_HOSTS_PER_USER } from '../../lib/limits';
import { isRestricted } from '../channels/access';
import { hostName } from '../monitors/kinds/validate';
import { bareHost } from '../monitors/net/resolve';
import { dnsProof, httpProof } from './proof';
import {
  countVerifiedHostsOfUser,
  deleteVerifiedHost,
  findByHostAndMethod,
  findVerifiedHost,
  hostVerifiedFor,
  insertVerifiedHost,
  listVerifiedHostsOfUser,
  setHttpPort,
  type VerificationMethod,
  type VerifiedHostRow,
  writeCheck,
} from './store';

/**
 * Verified hosts (§3.1): a user's proof of control over a host, asked before a port scan of it. User-level
 * records (§0.2): a device token or an unscoped API token; a scoped API token is refused.
 */

export const TOKEN_CHARS = 32;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** 32 characters of [a-z0-9], uniform (bytes ≥ 252 are dropped so `% 36` has no bias). */
export function verificationToken(): string {
  let out = '';
  while (out.length < TOKEN_CHARS)
    for (const b of randomBytes(TOKEN_CHARS * 2)) {
      if (b >= 252) continue;
      out += ALPHABET[b % 36];
      if (out.length === TOKEN_CHARS) break;
    }
  return out;
}

/** §0.2 user-level class: a scoped API token cannot reach these records. */
export function assertUserLevel(p: Principal): void {
  if (isRestricted(p)) throw errors.restrictedScope('do this');
}

/**
 * `host` of a proof or a scan: a host name or an IP literal, lower-case, without scheme, port or path;
 * IPv6 without brackets, no trailing dot. 400 `host: …` otherwise.
 */
export function parseHost(v: unknown, path = 'host'): string {
  if (typeof v === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(v.trim()))
    throw errors.badRequest(`${path}: a host name or IP address without a scheme (not a URL)`);
  const h = bareHost(hostName(v, path));
  if (h === '') throw errors.badRequest(`${path}: required`);
  return h;
}

export interface StartInput {
  host: string;
  method: VerificationMethod;
  httpPort?: number | undefined;
}

export function listVerifiedHosts(ctx: AppContext, p: Principal): VerifiedHostRow[] {
  assertUserLevel(p);
  return listVerifiedHostsOfUser(ctx.db, p.userId);
}

/** The same host and method again answers the existing record (an unverified one takes a new httpPort). */
export function startVerification(ctx: AppContext, p: Principal, input: StartInput): VerifiedHostRow {
  assertUserLevel(p);
  if (input.method === 'dns' && net.isIP(input.host) !== 0)
    throw errors.badRequest('host: the dns method needs a host name, not an IP address');
  const httpPort = input.method === 'http' ? (input.httpPort ?? 80) : null;
  const id = ctx.db.transaction(() => {
    const existing = findByHostAndMethod(ctx.db, p.userId, input.host, input.method);
    if (existing) {
      if (
        httpPort !== null &&
        input.httpPort !== undefined &&
        existing.verified_at === null &&
        existing.http_port !== httpPort
      )
        setHttpPort(ctx.db, existing.id, httpPort);
      return existing.id;
    }
    if (countVerifiedHostsOfUser(ctx.db, p.userId) >= VERIFIED_HOSTS_PER_USER)
      throw errors.userCap(VERIFIED_HOSTS_PER_USER, 'verified hosts');
    return insertVerifiedHost(
      ctx.db,
      { userId: p.userId, host: input.host, method: input.method, token: verificationToken(), httpPort },
      ctx.clock.now(),
    );
  });
  return findVerifiedHost(ctx.db, id)!;
}

function ownHost(ctx: AppContext, p: Principal, id: number): VerifiedHostRow {
  const row = findVerifiedHost(ctx.db, id);
  if (!row || row.user_id !== p.userId) throw errors.notFound('verified host');
  return row;
}

/**
 * Runs the record's proof now. Passed: the record, verified (a verification holds until deleted). Failed:
 * `checkedAt` and `lastError` are stored, then 400 with the §3.1 text.
 */
export async function checkVerification(ctx: AppContext, p: Principal, id: number): Promise<VerifiedHostRow> {
  assertUserLevel(p);
  const row = ownHost(ctx, p, id);
  const error =
    row.method === 'http'
      ? await httpProof(ctx, {
          host: row.host,
          port: row.http_port ?? 80,
          token: row.token,
          allowPrivate: !ctx.config.blockPrivateTargets || p.admin,
        })
      : await dnsProof(ctx, { host: row.host, token: row.token });
  ctx.db.transaction(() => writeCheck(ctx.db, id, ctx.clock.now(), error));
  // Deleted while the proof ran.
  const after = findVerifiedHost(ctx.db, id);
  if (!after) throw errors.notFound('verified host');
  if (error !== null) throw errors.badRequest(error);
  return after;
}

/** Deleting a proof leaves scans already queued or running alone (§3.1). */
export function removeVerifiedHost(ctx: AppContext, p: Principal, id: number): void {
  assertUserLevel(p);
  ownHost(ctx, p, id);
  ctx.db.transaction(() => deleteVerifiedHost(ctx.db, id));
}

/** A passed proof of the caller for exactly this host string (no subdomains, no resolved IPs). */
export function isHostVerified(ctx: AppContext, userId: number, host: string): boolean {
  return hostVerifiedFor(ctx.db, userId, host);
}
