import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deviceToken, makeChannel, makeUser } from '../helpers/factories';
import type { ApiResponse, TestServer } from '../helpers/test-server';

/** A recorded webhook delivery of test/fixtures/router: the sender's real headers and body. */
export interface Fixture {
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export function fixture(name: string): Fixture {
  return JSON.parse(readFileSync(join(__dirname, '../fixtures/router', `${name}.json`), 'utf8')) as Fixture;
}

export function ok<T = any>(res: ApiResponse, what: string): T {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body as T;
}

/** A user with a device, a channel and a router; `token` is the router's full R token. */
export async function routerUser(t: TestServer) {
  const user = makeUser(t);
  const device = await deviceToken(t, user, 'router test');
  const channel = await makeChannel(t, device.token, { name: 'deploys', defaultPriority: 6 });
  const router = ok<{ token: string; url: string }>(
    await t.request('GET', '/webhook-router', { token: device.token }),
    'router',
  );
  return { user, device, channel, token: router.token, router };
}

export async function addRule(t: TestServer, deviceTok: string, rule: Record<string, unknown>) {
  return ok<{ id: number; position: number; [k: string]: unknown }>(
    await t.request('POST', '/webhook-router/rule', { token: deviceTok, json: rule }),
    'rule',
  );
}

/** Sends a fixture to `/router/{token}{path}` with its own headers. */
export function deliver(t: TestServer, token: string, path: string, f: Fixture, method = 'POST') {
  return t.request(method, `/router/${token}${path}`, { headers: f.headers, body: JSON.stringify(f.body) });
}

export async function messageById(t: TestServer, deviceTok: string, id: number) {
  const list = ok<{ messages: { id: number; [k: string]: unknown }[] }>(
    await t.request('GET', '/message?limit=200', { token: deviceTok }),
    'messages',
  );
  return list.messages.find((m) => m.id === id);
}
