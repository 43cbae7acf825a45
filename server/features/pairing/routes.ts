import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { AppContext } from '../../context';
import { DEV, principalOf, requestMeta } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody } from '../../http/validate';
import { rfc3339 } from '../../lib/clock';
import { setSessionCookie } from '../auth/cookie';
import { limited } from '../auth/rate-limit';
import { presentSignIn } from '../devices/present';
import { PAIRING_CODE_LENGTH, PAIRING_TTL_MS, PairingStore, pairingUrls } from './service';

const claimBody = z.object({
  code: z.string().length(PAIRING_CODE_LENGTH, 'code: not a pairing code'),
  name: z.string().trim().min(1).max(200).default('Paired phone'),
  platform: z.string().max(100).optional(),
});

/**
 * Belfry extension (no spec endpoint): pairing a phone by QR code. A signed-in device asks for a
 * one-time code; the phone's browser claims it and becomes a new device of the same user.
 */
export function pairingRoutes(ctx: AppContext): RouteTable {
  const store = new PairingStore(ctx);
  const t = new RouteTable(ctx, 'pairing');
  t.post('/pairing', DEV, (req) => {
    const p = principalOf(req);
    const created = store.create(p.userId);
    const port = (req.socket.address() as AddressInfo).port;
    return {
      id: created.id,
      code: created.code,
      expiresAt: rfc3339(created.expiresAt),
      expiresIn: PAIRING_TTL_MS / 1000,
      ...pairingUrls(ctx, port),
    };
  });
  t.get('/pairing/:id', DEV, (req) => store.status(principalOf(req).userId, idParam(req)));
  t.post('/pairing/claim', null, async (req, res) => {
    const body = parseBody(req, claimBody);
    const meta = requestMeta(ctx, req);
    // Guessing codes: an unknown, used or expired code counts against the address (10 a minute).
    const created = await limited(
      ctx,
      [['pairing', meta.ip]],
      () =>
        store.claim(
          body.code,
          { name: body.name, ...(body.platform ? { platform: body.platform } : {}) },
          meta,
        ),
      (err) => (err as { status?: unknown }).status === 404,
    );
    setSessionCookie(ctx, req, res, created.token);
    return presentSignIn(created, created.userId);
  });
  return t;
}
