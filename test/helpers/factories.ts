import { createUser } from '../../server/features/users/service';
import type { PlanName } from '../../server/lib/limits';
import { issueToken } from '../../server/lib/tokens';
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

/** Opens a sudo window (900 s) for a device with its user's password (accounts family). */
export async function sudo(
  t: TestServer,
  device: { token: string },
  password = t.admin.password,
): Promise<void> {
  const res = await t.request('POST', '/current/user/sudo', {
    token: device.token,
    json: { method: 'password', pass: password },
  });
  if (res.status !== 200) throw new Error(`sudo: POST /current/user/sudo answered ${res.status} ${res.text}`);
}

/** An API token (M) through `POST /api-token` with a device token, as the UI does. */
export async function apiToken(
  t: TestServer,
  device: { token: string },
  body: {
    name?: string;
    access?: 'read' | 'write';
    appIds?: number[];
    appTags?: string[];
    expiresAt?: string;
  } = {},
): Promise<{ id: number; token: string }> {
  const res = await t.request<{ id: number; token: string }>('POST', '/api-token', {
    token: device.token,
    json: { name: 'test token', access: 'write', ...body },
  });
  if (res.status !== 200) throw new Error(`apiToken: POST /api-token answered ${res.status} ${res.text}`);
  return { id: res.body.id, token: res.body.token };
}

/** A bare channel row, for account tests that only need a channel id (mutes, API-token scope). */
export function insertChannelRow(t: TestServer, userId: number, name = 'channel'): number {
  const ctx = t.server.ctx;
  return ctx.db.transaction(
    () =>
      ctx.db.run('INSERT INTO channels (user_id, name, created_at) VALUES (?, ?, ?)', [
        userId,
        name,
        ctx.clock.now(),
      ]).lastInsertRowid,
  );
}

/** A bare channel key (A token) row for a channel, for "channel key gets 403" tests. */
export function insertChannelKeyRow(
  t: TestServer,
  channelId: number,
  opts: { canRead?: boolean } = {},
): string {
  const ctx = t.server.ctx;
  const { token, digest, hint } = issueToken('A');
  ctx.db.transaction(() =>
    ctx.db.run(
      'INSERT INTO channel_keys (channel_id, can_read, can_write, token_digest, token_hint, created_at) VALUES (?, ?, 1, ?, ?, ?)',
      [channelId, opts.canRead ? 1 : 0, digest, hint, ctx.clock.now()],
    ),
  );
  return token;
}

/** A channel through `POST /application`; `token` is its primary key (A), shown only here. */
export async function makeChannel(
  t: TestServer,
  deviceTok: string,
  body: Record<string, unknown> = {},
): Promise<{ id: number; token: string; [k: string]: unknown }> {
  seq++;
  const res = await t.request('POST', '/application', {
    token: deviceTok,
    json: { name: `channel ${seq}`, ...body },
  });
  if (res.status !== 200)
    throw new Error(`makeChannel: POST /application answered ${res.status} ${res.text}`);
  return res.body;
}

/** A message through `POST /message` with a channel key. */
export async function sendMessage(
  t: TestServer,
  appToken: string,
  body: Record<string, unknown> = {},
): Promise<{ id: number; [k: string]: unknown }> {
  const res = await t.request('POST', '/message', { token: appToken, json: { message: 'hello', ...body } });
  if (res.status !== 200) throw new Error(`sendMessage: POST /message answered ${res.status} ${res.text}`);
  return res.body;
}

/**
 * Gives every AUTOINCREMENT table's next ids a range of its own (`base` + 1000 × its rank), so that an id
 * names one thing only: a device id equal to a channel id would blur what a 2xx means in the sweeps.
 */
export function separateIdRanges(t: TestServer, base = 0): void {
  const db = t.server.ctx.db;
  db.transaction(() => {
    const tables = db.all<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%AUTOINCREMENT%' ORDER BY name",
    );
    tables.forEach(({ name }, i) => {
      db.run('DELETE FROM sqlite_sequence WHERE name = ?', [name]);
      db.run('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)', [name, base + (i + 1) * 1000]);
    });
  });
}
