import { z } from 'zod';
import type { AppContext } from '../../context';
import { DEV, principalOf, requestMeta } from '../../http/auth';
import { RouteTable } from '../../http/routes';
import { idParam, parseBody } from '../../http/validate';
import { currentUserRow } from '../current-user/service';
import {
  approve,
  confirmMobileLink,
  confirmSetup,
  disableMfa,
  disableMobile,
  mfaStatus,
  pendingApprovals,
  regenerateRecoveryCodes,
  removeApproverDevice,
  startMobileLink,
  startSetup,
} from './service';

const DEV_SUDO = { ...DEV, sudo: true };
const codeBody = z.object({ code: z.string().trim().min(1, 'code is required').max(64) });
const challengeBody = z.object({ challenge: z.string().min(1, 'challenge is required').max(200) });

/** Spec "Current user ... 2FA" settings and the device side of "Mobile flow" (pending, approve). */
export function mfaRoutes(ctx: AppContext): RouteTable {
  const t = new RouteTable(ctx, 'mfa');
  t.get('/current/user/mfa', DEV, (req) => mfaStatus(ctx, principalOf(req).userId));
  t.post('/current/user/mfa/setup', DEV_SUDO, (req) =>
    startSetup(ctx, currentUserRow(ctx, principalOf(req).userId)),
  );
  t.post('/current/user/mfa/confirm', DEV_SUDO, (req) =>
    confirmSetup(ctx, principalOf(req).userId, parseBody(req, codeBody).code),
  );
  t.post('/current/user/mfa/disable', DEV_SUDO, (req) => {
    disableMfa(ctx, principalOf(req).userId);
    return mfaStatus(ctx, principalOf(req).userId);
  });
  t.post('/current/user/mfa/recovery-codes', DEV_SUDO, (req) =>
    regenerateRecoveryCodes(ctx, principalOf(req).userId),
  );
  t.post('/current/user/mfa/mobile/start', DEV_SUDO, (req) =>
    startMobileLink(ctx, principalOf(req).userId, requestMeta(ctx, req)),
  );
  t.post('/current/user/mfa/mobile/confirm', DEV, (req) =>
    confirmMobileLink(ctx, principalOf(req).userId, parseBody(req, challengeBody).challenge),
  );
  t.post('/current/user/mfa/mobile/disable', DEV_SUDO, (req) => disableMobile(ctx, principalOf(req).userId));
  t.delete('/current/user/mfa/mobile/devices/:id', DEV_SUDO, (req) =>
    removeApproverDevice(ctx, principalOf(req).userId, idParam(req)),
  );
  t.get('/auth/mfa/pending', DEV, (req) => pendingApprovals(ctx, principalOf(req).userId));
  t.post('/auth/mfa/approve', DEV, (req) => {
    const p = principalOf(req);
    return approve(ctx, p.userId, p.deviceId!, parseBody(req, codeBody).code);
  });
  return t;
}
