import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import type { RouteTable } from '../../http/routes';
import { apiTokenRoutes } from '../api-tokens/routes';
import { avatarRoutes } from '../avatars/routes';
import { currentUserRoutes } from '../current-user/routes';
import { pruneActivity } from '../devices/service';
import type { Feature } from '../index';
import { mailRoutes } from '../mail/routes';
import { closeMail, mailDueSource, pruneOutbox } from '../mail/service';
import { mfaRoutes } from '../mfa/routes';
import { mfaEnabled } from '../mfa/service';
import { deleteDeadChallenges } from '../mfa/store';
import { quotaRoutes } from '../quota/routes';
import { pruneQuotaMinutes } from '../quota/service';
import { userRoutes } from '../users/routes';
import { basicChecks } from '../users/service';
import type { UserRow } from '../users/store';
import { limited, signInKeys } from './rate-limit';
import { authRoutes } from './routes';
import { deleteExpiredSudo } from './store';
import { sudoGuard } from './sudo';

/** Spec "Authentication", point 5: a 2FA account cannot pass with a Basic pair. */
function secondFactorCheck(ctx: AppContext, user: UserRow): void {
  if (mfaEnabled(ctx, user.id)) throw errors.secondFactorRequired();
}

function initAccounts(ctx: AppContext, hooks: Parameters<NonNullable<Feature['init']>>[1]): void {
  ctx.auth.sudo = sudoGuard(ctx);
  basicChecks.add(secondFactorCheck);
  // Every Basic pair is a sign-in attempt: counted with the login's (point 4; see signInKeys).
  const basic = ctx.auth.basic;
  if (basic)
    ctx.auth.basic = (email, password, meta) =>
      limited(ctx, signInKeys(email, meta.ip), () => basic(email, password, meta));
  hooks.retention.register('quota-minutes', pruneQuotaMinutes);
  hooks.retention.register('device-activity', pruneActivity);
  hooks.retention.register('mfa-challenges', (c) => deleteDeadChallenges(c.db, c.clock.now() - 86_400_000));
  hooks.retention.register('mail-outbox', pruneOutbox);
  // Queued SMTP mail is retried by the one due timer (issue 20), never by polling.
  ctx.due.register(mailDueSource);
  hooks.retention.register('sudo-windows', (c) => deleteExpiredSudo(c.db, c.clock.now()));
}

function accountRoutes(ctx: AppContext): RouteTable[] {
  return [
    authRoutes(ctx),
    currentUserRoutes(ctx),
    mfaRoutes(ctx),
    avatarRoutes(ctx),
    userRoutes(ctx),
    quotaRoutes(ctx),
    mailRoutes(ctx),
    apiTokenRoutes(ctx),
  ];
}

/** Accounts and sign-in (issue 3): sudo, 2FA on Basic, rate limits, quota, mail, users, devices, tokens. */
export const accountsFeature: Feature = {
  name: 'accounts',
  init: initAccounts,
  routes: accountRoutes,
  stop: (ctx) => closeMail(ctx),
};
