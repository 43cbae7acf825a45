import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AppContext, RequestMeta } from '../context';
import { tokenDigest, tokenPrefix } from '../lib/tokens';
import { sameOriginOrAllowed } from './cors';
import { ApiError, errors } from './errors';
import { isPublicSocket, publicListenerCredential } from './public-listener';

/** Who is calling, resolved once per request (http/auth.ts). */
export type PrincipalKind = 'device' | 'api' | 'app' | 'share' | 'basic';

export interface Principal {
  kind: PrincipalKind;
  userId: number;
  admin: boolean;
  /** device: the device; basic: none. */
  deviceId?: number;
  /** api: the API token; app: the channel key; share: the share record. */
  tokenId?: number;
  /** app and share: the one channel the key opens. */
  channelId?: number;
  /** api tokens: read or write; everything else that passes is write-capable unless canWrite says no. */
  access: 'read' | 'write';
  /** api tokens: channel scope; both empty means every channel. */
  scope?: { appIds: number[]; appTags: string[] };
  canRead: boolean;
  canWrite: boolean;
  /** app and share: who sends, as messages name it (the key's name or its channel's; the recipient's email). */
  label?: string;
}

/**
 * What authentication reads of a request. An express Request has it, and so does the lean lane's
 * request (lean.ts), which serves its routes without express.
 */
export interface AuthRequest {
  headers: IncomingHttpHeaders;
  query: Record<string, unknown>;
  socket: { remoteAddress?: string | undefined };
  path: string;
  /** Undefined only where no method is known; such a request is checked like a writing one. */
  method?: string | undefined;
  principal?: Principal | undefined;
}

/** Where the token came from: the first present transport wins (spec "Authentication", point 1). */
export type Credential =
  | { transport: 'service-key' | 'legacy-key' | 'bearer' | 'query' | 'cookie'; token: string }
  | { transport: 'basic'; email: string; password: string }
  | { transport: 'malformed-authorization' };

export const SESSION_COOKIE = 'service-client-token';

/**
 * Finds the credential of a request in the spec's order: X-Service-Key, X-Legacy-Key (alias
 * X-Gotify-Key, contract "Compatibility"), Authorization (Bearer, or Basic where routes allow it),
 * ?token=, the session cookie. The first one present decides, valid or not.
 */
export function readCredential(req: AuthRequest): Credential | null {
  const service = header(req, 'x-service-key');
  if (service !== undefined) return { transport: 'service-key', token: service };
  const legacy = header(req, 'x-legacy-key') ?? header(req, 'x-gotify-key');
  if (legacy !== undefined) return { transport: 'legacy-key', token: legacy };
  const authorization = header(req, 'authorization');
  if (authorization !== undefined) {
    const [scheme, ...rest] = authorization.split(' ');
    const value = rest.join(' ').trim();
    if (/^bearer$/i.test(scheme ?? '') && value) return { transport: 'bearer', token: value };
    if (/^basic$/i.test(scheme ?? '') && value) {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0)
        return { transport: 'basic', email: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    }
    return { transport: 'malformed-authorization' };
  }
  const query = req.query.token;
  if (typeof query === 'string' && query !== '') return { transport: 'query', token: query };
  const cookie = readCookie(req.headers.cookie, SESSION_COOKIE);
  if (cookie) return { transport: 'cookie', token: cookie };
  return null;
}

function header(req: AuthRequest, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}

export function readCookie(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const v = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(v);
      } catch {
        return v;
      }
    }
  }
  return undefined;
}

/**
 * The client's address for rate limits: the socket's peer, or with `trustProxy` the address the trusted
 * proxies name in X-Forwarded-For. A hop count trusts that many proxies in front of Belfry (the socket's
 * peer being the last); a list of addresses trusts exactly those, walking the header from the right
 * while the address at hand is one of them. Anything in the header that is not an IP address ends the walk.
 */
export function clientAddress(ctx: AppContext, req: AuthRequest): string {
  const peer = normalizeAddress(req.socket.remoteAddress ?? '');
  const trust = ctx.config.trustProxy;
  if (!trust) return peer;
  const raw = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(raw) ? raw.join(',') : (raw ?? ''))
    .split(',')
    .map((a) => normalizeAddress(a.trim()))
    .filter((a) => a !== '');
  // Nearest first: the socket's peer, then the header from its right end.
  const chain = [peer, ...forwarded.reverse()];
  let i = 0;
  if ('hops' in trust) i = Math.min(trust.hops, chain.length - 1);
  else while (i < chain.length - 1 && trust.addresses.includes(chain[i]!)) i++;
  for (let j = 1; j <= i; j++) if (isIP(chain[j]!) === 0) return chain[j - 1]!;
  return chain[i]!;
}

function normalizeAddress(a: string): string {
  return a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

/**
 * Who is asking, for the records and the throttles: the client address of clientAddress (the socket's peer,
 * or with `trustProxy` the address the trusted proxies name), the user agent and the path.
 */
export function requestMeta(ctx: AppContext, req: AuthRequest): RequestMeta {
  const ua = req.headers['user-agent'];
  return { ip: clientAddress(ctx, req), userAgent: typeof ua === 'string' ? ua : '', path: req.path };
}

const PREFIX_KIND: Record<string, PrincipalKind> = { C: 'device', M: 'api', A: 'app', S: 'share' };

/** Resolves a bare token (no transport) to a principal; used by HTTP routes, /ws and /stream alike. */
export function resolveToken(ctx: AppContext, token: string, meta: RequestMeta): Principal {
  // A hint from a list (tokenHint) pasted as the token: say so rather than "invalid".
  if (token.includes('*')) throw errors.maskedToken();
  const prefix = tokenPrefix(token);
  const resolver = prefix ? ctx.auth.tokens.get(prefix) : undefined;
  if (!prefix || !resolver) throw errors.invalidToken();
  const principal = resolver(token, tokenDigest(token), meta);
  if (!principal) throw errors.invalidToken();
  return principal;
}

/** How 401s name each kind of credential (issue 20: errors that say what to do). */
const KIND_LABEL: Record<PrincipalKind, string> = {
  device: 'a device token (C…, from signing in)',
  api: 'an API token (M…)',
  app: 'a channel key (A…)',
  share: 'a share key (S…)',
  basic: 'a username and password (Basic)',
};

/** 401 for a credential of a kind the rule does not take, naming the kinds it does take. */
export function kindNotAccepted(given: PrincipalKind, accepted: readonly PrincipalKind[]) {
  const names = accepted.map((k) => KIND_LABEL[k]);
  const list =
    names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : (names[0] ?? 'no token');
  return errors.tokenKindNotAccepted(KIND_LABEL[given], list);
}

/** Headers that look like a credential but are none Belfry reads (X-Api-Key, X-Gotify-Token, Api-Key...). */
const CREDENTIAL_LIKE = /^(x-[\w-]*(key|token|auth[\w-]*)|api-?key|token|access-?token)$/i;

/** No credential: the spec's 401, or one naming the accepted transports when a lookalike header was sent. */
export function missingCredential(req: AuthRequest) {
  const name = Object.keys(req.headers).find((h) => CREDENTIAL_LIKE.test(h));
  return name ? errors.unknownCredentialHeader(name) : errors.unauthorized();
}

export function kindOfToken(token: string): PrincipalKind | null {
  const p = tokenPrefix(token);
  return p ? (PREFIX_KIND[p] ?? null) : null;
}

export interface AuthRule {
  /** Kinds this route accepts. `basic` means a username and password are accepted too (spec point 3). */
  kinds: readonly PrincipalKind[];
  /**
   * Kinds that are recognised but refused with 403 instead of 401: channel keys on account-level
   * operations, API tokens on device-only operations (spec points 2 and 7).
   */
  forbid?: readonly PrincipalKind[];
  /** `write`: read-only API tokens and channel keys without write/send get 403. `read`: keys need read. */
  access?: 'read' | 'write';
  /** Sensitive action: a device token with an open sudo window (spec point 6). */
  sudo?: boolean;
  /** Administrators only (403 otherwise). */
  admin?: boolean;
}

/** Account-level routes: API or device token; a channel key gets 403. */
export const TOK: AuthRule = { kinds: ['device', 'api'], forbid: ['app', 'share'] };
/** Same, also accepting Basic (only the routes listed in the spec's point 3). */
export const TOK_BASIC: AuthRule = { kinds: ['device', 'api', 'basic'], forbid: ['app', 'share'] };
/** Device token only; an API token or a channel key gets 403. */
export const DEV: AuthRule = { kinds: ['device'], forbid: ['api', 'app', 'share'] };
/** Device token or Basic (the device routes of the spec's point 3); an API token or a channel key gets 403. */
export const DEV_BASIC: AuthRule = { kinds: ['device', 'basic'], forbid: ['api', 'app', 'share'] };
/** Channel keys (A, and S with its permission); any other kind gets 401. */
export const APP: AuthRule = { kinds: ['app', 'share'] };
/** Reading routes where a channel key with read permission sees only its own channel. */
export const READ: AuthRule = { kinds: ['device', 'api', 'app', 'share'], access: 'read' };

declare global {
  namespace Express {
    interface Request {
      principal?: Principal;
    }
  }
}

/** The authenticated principal of a route guarded by requireAuth. */
export function principalOf(req: { principal?: Principal | undefined }): Principal {
  if (!req.principal) throw new Error('principalOf() on a route without requireAuth');
  return req.principal;
}

export function requireAuth(ctx: AppContext, rule: AuthRule): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    authenticate(ctx, req, rule).then(
      (p) => {
        req.principal = p;
        next();
      },
      (err: unknown) => next(err),
    );
  };
}

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Cross-site request forgery: a cookie-authenticated request that can change something must come from
 * the app's own pages (see sameOriginOrAllowed); 403 otherwise. Bearer and other headers cannot be set
 * by another site, so only the cookie needs this.
 */
export function checkCookieOrigin(ctx: AppContext, req: AuthRequest, cred: Credential | null): void {
  if (cred?.transport !== 'cookie' || SAFE_METHODS.has(req.method ?? '')) return;
  if (!sameOriginOrAllowed(ctx, req))
    throw errors.forbidden('a request from another site cannot use the session cookie');
}

export async function authenticate(ctx: AppContext, req: AuthRequest, rule: AuthRule): Promise<Principal> {
  // The public listener strips credential headers; a ?token= on a route that takes one is refused too.
  if (isPublicSocket(req.socket)) throw publicListenerCredential();
  const cred = readCredential(req);
  if (!cred) throw missingCredential(req);
  checkCookieOrigin(ctx, req, cred);
  const meta = requestMeta(ctx, req);
  let principal: Principal;
  if (cred.transport === 'malformed-authorization') throw errors.malformedAuthorization();
  if (cred.transport === 'basic') {
    if (!rule.kinds.includes('basic')) throw errors.basicNotAccepted();
    if (!ctx.auth.basic) throw errors.unauthorized();
    principal = await ctx.auth.basic(cred.email, cred.password, meta);
  } else {
    // A masked hint has a kind's prefix and length: say it is a hint before judging its kind.
    if (cred.token.includes('*')) throw errors.maskedToken();
    const kind = kindOfToken(cred.token);
    // Decide on the kind before touching the store: a wrong kind is 401 (point 10) or 403 (points 2, 7).
    if (kind && !rule.kinds.includes(kind) && !rule.forbid?.includes(kind))
      throw kindNotAccepted(kind, rule.kinds);
    principal = resolveToken(ctx, cred.token, meta);
    if (rule.forbid?.includes(principal.kind)) {
      throw principal.kind === 'api'
        ? errors.forbidden('API tokens cannot do this; sign in with a device')
        : errors.tokenKindForbidden();
    }
  }
  checkAccess(principal, rule);
  if (rule.admin && !principal.admin) throw errors.forbidden('administrators only');
  if (rule.sudo) {
    if (principal.kind !== 'device')
      throw errors.forbidden('only a device session can confirm sensitive actions');
    if (!ctx.auth.sudo) throw new ApiError(501, 'sudo is not available in this build');
    ctx.auth.sudo(principal);
  }
  return principal;
}

function checkAccess(p: Principal, rule: AuthRule): void {
  if (rule.access === 'write') {
    if (p.kind === 'api' && p.access !== 'write') throw errors.permissionDenied('write');
    if ((p.kind === 'app' || p.kind === 'share') && !p.canWrite)
      throw errors.permissionDenied(p.kind === 'share' ? 'send' : 'write');
  }
  if (rule.access === 'read' && (p.kind === 'app' || p.kind === 'share') && !p.canRead)
    throw errors.permissionDenied('read');
}
