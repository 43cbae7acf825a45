import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel, makeUser, sudo } from '../helpers/factories';
import {
  type FakeSshServer,
  freePort,
  generateClientKey,
  startFakeSshServer,
} from '../helpers/fake-ssh-server';
import { startTestServer, type TestServer } from '../helpers/test-server';

/**
 * The `ssh` tunnel end to end (docs/public-access.md): a real server, a loopback sshd standing in for the
 * user's VPS. `PUT /tunnel` starts it, the forwarded port reaches the public listener (public routes
 * only), the reachability check sees this very server, the public URL is the one links are made with,
 * the key never comes back, and the sshd dropping the connection turns the status to `error`.
 */

interface TunnelRecord {
  provider: string;
  ssh?: Record<string, unknown>;
  status: 'off' | 'starting' | 'up' | 'error';
  publicUrl: string | null;
  target: unknown;
  lastCheck: {
    at: string;
    ok: boolean;
    status: number | null;
    latencyMs: number | null;
    error?: string;
  } | null;
  error: string | null;
}

let t: TestServer;
let ssh: FakeSshServer;
let dev: string;
let remotePort: number;
let tunnelUrl: string;

beforeAll(async () => {
  t = await startTestServer();
  ssh = await startFakeSshServer();
  dev = (await deviceToken(t)).token;
  await sudo(t, { token: dev });
  remotePort = await freePort();
  tunnelUrl = `http://127.0.0.1:${remotePort}`;
});
afterAll(async () => {
  await t.request('PUT', '/tunnel', { token: dev, json: { provider: 'none' } });
  await ssh.close();
  await t.close();
});

function sshBody(over: Record<string, unknown> = {}) {
  return {
    provider: 'ssh',
    ssh: {
      host: ssh.host,
      port: ssh.port,
      user: ssh.user,
      privateKey: ssh.clientKey.private,
      remotePort,
      publicUrl: tunnelUrl,
      hostFingerprint: ssh.hostFingerprint,
      ...over,
    },
  };
}

async function tunnel(): Promise<TunnelRecord> {
  const res = await t.request<TunnelRecord>('GET', '/tunnel', { token: dev });
  expect(res.status).toBe(200);
  return res.body;
}

async function put(body: unknown): Promise<TunnelRecord> {
  const res = await t.request<TunnelRecord>('PUT', '/tunnel', { token: dev, json: body });
  if (res.status !== 200) throw new Error(`PUT /tunnel: ${res.status} ${res.text}`);
  return res.body;
}

/**
 * The record once its status is `status`: the service announces each change on the bus
 * ('tunnel:changed'), so this waits for that event (or finds the status already reached).
 */
async function until(status: TunnelRecord['status']): Promise<TunnelRecord> {
  await new Promise<void>((resolve) => {
    const off = t.server.ctx.bus.on('tunnel:changed', (e) => {
      if (e.status !== status) return;
      off();
      resolve();
    });
    void tunnel().then((r) => {
      if (r.status !== status) return;
      off();
      resolve();
    });
  });
  return tunnel();
}

describe('ssh tunnel', () => {
  it('bad settings are named, and the key is never echoed', async () => {
    const bad = async (over: Record<string, unknown>) =>
      (await t.request('PUT', '/tunnel', { token: dev, json: sshBody(over) })).body
        .errorDescription as string;
    expect(await bad({ host: undefined })).toBe('ssh.host: required');
    expect(await bad({ remotePort: 70_000 })).toMatch(/^ssh\.remotePort: /);
    expect(await bad({ privateKey: ssh.clientKey.public })).toBe('ssh.privateKey: not a private key');
    expect(await bad({ publicUrl: 'not a url' })).toMatch(/^ssh\.publicUrl: /);
    expect((await tunnel()).status).toBe('off');
  });

  it('a non-admin cannot see or set it', async () => {
    const other = (await deviceToken(t, makeUser(t))).token;
    const res = await t.request('PUT', '/tunnel', { token: other, json: sshBody() });
    expect(res.status).toBe(403);
    expect(res.body.errorDescription).toBe('administrator only');
    expect(ssh.stats.connections).toBe(0);
  });

  it('PUT answers starting, then the tunnel comes up with the public URL and a passing check', async () => {
    const saved = await put(sshBody());
    expect(saved.status).toBe('starting');
    expect(saved.provider).toBe('ssh');
    expect(saved.ssh?.privateKey).toBe('********');
    const up = await until('up');
    expect(up.publicUrl).toBe(tunnelUrl);
    expect(up.error).toBeNull();
    expect(ssh.listeningPorts()).toContain(remotePort);
    expect(JSON.stringify(up)).not.toContain('PRIVATE KEY');
  });

  it('the forwarded port reaches the public listener: /health with our instance id, nothing else', async () => {
    const health = await fetch(`${tunnelUrl}/health`);
    expect(health.status).toBe(200);
    const local = await fetch(`${t.url}/health`);
    expect(health.headers.get('x-belfry-instance')).toBeTruthy();
    expect(health.headers.get('x-belfry-instance')).toBe(local.headers.get('x-belfry-instance'));
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/user'],
      ['GET', '/current/user'],
      ['POST', '/message'],
      ['GET', '/tunnel'],
    ] as const) {
      const res = await fetch(`${tunnelUrl}${path}`, { method, headers: { 'X-Service-Key': dev } });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(((await res.json()) as { errorDescription: string }).errorDescription).toBe(
        `no route for ${method} ${path}`,
      );
    }
  });

  it('POST /tunnel/check asks {publicUrl}/health through the tunnel and is ok', async () => {
    const before = ssh.stats.bytesIn;
    const res = await t.request<TunnelRecord>('POST', '/tunnel/check', { token: dev });
    expect(res.status).toBe(200);
    expect(res.body.lastCheck).toMatchObject({ ok: true, status: 200 });
    expect(res.body.lastCheck?.latencyMs).toBeGreaterThanOrEqual(0);
    // The check's request went through the forwarded port (the connection may be a kept-alive one).
    expect(ssh.stats.bytesIn).toBeGreaterThan(before);
  });

  it('while up, ping URLs are built on the public URL', async () => {
    const appid = (await makeChannel(t, dev)).id;
    const res = await t.request('POST', '/heartbeat', {
      token: dev,
      json: { appid, name: 'backup', intervalSec: 3600 },
    });
    expect(res.status).toBe(200);
    expect(res.body.pingUrl).toBe(`${tunnelUrl}/heartbeat/ping/${res.body.token}`);
    // …and the ping URL works through the tunnel.
    const ping = await fetch(res.body.pingUrl as string);
    expect(ping.status).toBe(200);
  });

  it('"********" sent back keeps the stored key (the tunnel restarts and comes up again)', async () => {
    const saved = await put(sshBody({ privateKey: '********' }));
    expect(saved.ssh?.privateKey).toBe('********');
    const up = await until('up');
    expect(up.ssh?.privateKey).toBe('********');
    expect(ssh.stats.authFailures).toBe(0);
  });

  it('the sshd dropping every client turns the status to error, and links fall back', async () => {
    ssh.dropClients();
    const down = await until('error');
    expect(down.error).toMatch(/^ssh: connection to 127\.0\.0\.1:\d+ (closed|reset)/);
    const appid = (await makeChannel(t, dev)).id;
    const hb = await t.request('POST', '/heartbeat', {
      token: dev,
      json: { appid, name: 'after', intervalSec: 3600 },
    });
    expect(hb.body.pingUrl.startsWith(`${t.url}/heartbeat/ping/`)).toBe(true);
  });

  it('a wrong key ends in error with the authentication message', async () => {
    await put(sshBody({ privateKey: generateClientKey().private }));
    const failed = await until('error');
    expect(failed.error).toMatch(/^ssh: authentication failed/);
  });

  it('provider none stops the tunnel and closes the remote port', async () => {
    await put(sshBody());
    await until('up');
    const off = await put({ provider: 'none' });
    expect(off.status).toBe('off');
    await ssh.waitForUnforward(remotePort);
  });
});
