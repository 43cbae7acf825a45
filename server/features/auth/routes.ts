import type { Request, Response } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../context';
import {
  checkCookieOrigin,
  kindNotAccepted,
  kindOfToken,
  missingCredential,
  readCredential,
  requestMeta,
  resolveToken,
} from '../../http/auth';
import { errors } from '../../http/errors';
import { RouteTable } from '../../http/routes';
import { parseBody } from '../../http/validate';
import { presentSignIn } from '../devices/present';
import { createDevice, rotateDevice } from '../devices/service';
import { challengeUser, loginChallenge, mfaEnabled, pollChallenge, verifyChallenge } from '../mfa/service';
import { checkPassword } from '../users/service';
import { findUserByEmail, findUserById, type UserRow } from '../users/store';
import { clearSessionCookie, knownClientNonce, setKnownClientCookie, setSessionCookie } from './cookie';
import { limited, signInKeys } from './rate-limit';

export const DEFAULT_LOGIN_DEVICE_NAME = 'web';

const deviceFields = {
  name: z.string().trim().min(1).max(200).optional(),
  platform: z.string().max(100).optional(),
};
const loginBody = z.object(deviceFields);
const verifyBody = z.object({
  challenge: z.string().min(1, 'challenge is required').max(200),
  method: z.enum(['totp', 'recovery', 'mobile']),
  code: z.string().max(64).optional(),
  ...deviceFields,
});
const pollBody = z.object({ challenge: z.string().min(1, 'challenge is required').max(200) });

/** Creates the device of a finished sign-in, sets the session cookie, answers the spec's login body. */
function signIn(
  ctx: AppContext,
  req: Request,
  res: Response,
  user: UserRow,
  device: { name: string; platform: string },
  via: 'login' | 'mfa',
) {
  const created = createDevice(ctx, user, device, requestMeta(ctx, req), 'suspend-oldest', via);
  setSessionCookie(ctx, req, res, created.token);
  setKnownClientCookie(ctx, req, res, user.email, user.password_hash);
  return presentSignIn(created, user.id);
}

/** Spec "Login, logout, second factor, password": the browser and app sign-in routes. */
export function authRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'auth');
  // Basic only: the route authenticates itself so a 2FA account gets its challenge.
  t.post('/auth/local/login', null, async (req, res) => {
    const cred = readCredential(req);
    if (!cred) throw missingCredential(req);
    if (cred.transport === 'malformed-authorization') throw errors.malformedAuthorization();
    if (cred.transport !== 'basic') {
      const kind = kindOfToken(cred.token);
      throw kind ? kindNotAccepted(kind, ['basic']) : errors.invalidToken();
    }
    const body = parseBody(req, loginBody);
    const meta = requestMeta(ctx, req);
    const known = knownClientNonce(
      ctx,
      req,
      cred.email,
      findUserByEmail(ctx.db, cred.email)?.password_hash ?? '',
    );
    const user = await limited(ctx, signInKeys(cred.email, meta.ip, known), async () => {
      const u = findUserByEmail(ctx.db, cred.email);
      if (!(await checkPassword(ctx, u, cred.password)) || !u)
        throw errors.unauthorized('wrong username or password');
      return u;
    });
    if (user.verified !== 1) throw errors.notVerified();
    const device = { name: body.name ?? DEFAULT_LOGIN_DEVICE_NAME, platform: body.platform ?? '' };
    if (mfaEnabled(ctx, user.id))
      throw errors.secondFactorRequired({ mfa: loginChallenge(ctx, user.id, meta, device) });
    return signIn(ctx, req, res, user, device, 'login');
  });
  // 200 whatever the credential: a valid device token is rotated, the cookie always cleared.
  t.post('/auth/logout', null, (req, res) => {
    const cred = readCredential(req);
    // Another site cannot sign the user out with the cookie either.
    checkCookieOrigin(ctx, req, cred);
    if (cred && 'token' in cred) {
      try {
        const meta = requestMeta(ctx, req);
        const p = resolveToken(ctx, cred.token, meta);
        if (p.kind === 'device' && p.deviceId !== undefined)
          rotateDevice(ctx, p.userId, p.deviceId, meta, 'logout');
      } catch {
        // invalid or expired: nothing to sign out
      }
    }
    clearSessionCookie(ctx, req, res);
    return {};
  });
  t.post('/auth/mfa/verify', null, async (req, res) => {
    const body = parseBody(req, verifyBody);
    const meta = requestMeta(ctx, req);
    // Counted per account (across its challenges: a right password opens a new one) and address.
    const account = challengeUser(ctx, body.challenge) ?? 'unknown';
    const done = await limited(ctx, [['mfa', `${account}\n${meta.ip}`]], () =>
      verifyChallenge(ctx, {
        challenge: body.challenge,
        method: body.method,
        ...(body.code === undefined ? {} : { code: body.code }),
      }),
    );
    const user = findUserById(ctx.db, done.userId);
    if (!user) throw errors.unauthorized();
    if (user.verified !== 1) throw errors.notVerified();
    const device = {
      name: body.name ?? (done.name || DEFAULT_LOGIN_DEVICE_NAME),
      platform: body.platform ?? done.platform,
    };
    return signIn(ctx, req, res, user, device, 'mfa');
  });
  t.post('/auth/mfa/challenge', null, (req) => pollChallenge(ctx, parseBody(req, pollBody).challenge));
  return t;
}
