import { createUser } from '../../server/features/users/service';
import type { PlanName } from '../../server/lib/limits';
import type { TestServer } from './test-server';

let seq = 0;

/** A verified user created through the service (the admin API lives in the accounts family). */
export function makeUser(
  t: TestServer,
  over: { email?: string; password?: string; admin?: boolean; verified?: boolean; plan?: PlanName } = {},
): { id: number; email: string; password: string } {
  seq++;
  const email = over.email ?? `user${seq}-${Date.now()}@example.com`;
  const password = over.password ?? 'password-123';
  const id = t.server.ctx.db.transaction(() =>
    createUser(t.server.ctx, {
      email,
      password,
      admin: over.admin ?? false,
      verified: over.verified ?? true,
      plan: over.plan ?? 'free',
    }),
  );
  return { id, email, password };
}

/** A device (C token) for a user, through `POST /client` with Basic, as a real client does. */
export async function deviceToken(
  t: TestServer,
  who: { email: string; password: string } = t.admin,
  name = 'test device',
): Promise<{ id: number; token: string }> {
  const res = await t.request<{ id: number; token: string }>('POST', '/client', {
    basic: who,
    json: { name },
  });
  if (res.status !== 200) throw new Error(`deviceToken: POST /client answered ${res.status} ${res.text}`);
  return { id: res.body.id, token: res.body.token };
}
