import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ed25519Pair,
  type FakeSshServer,
  freePort,
  generateClientKey,
  startFakeSshServer,
} from '../../../../test/helpers/fake-ssh-server';
import type { RunningTunnel, TunnelTarget } from '../provider';
import { createSshProvider, parseSshSettings, type SshSettings } from './ssh';

const provider = createSshProvider({ readyTimeoutMs: 5_000 });

let ssh: FakeSshServer;
let target: Server;
let targetAddr: TunnelTarget;
const running: RunningTunnel[] = [];

beforeAll(async () => {
  ssh = await startFakeSshServer();
  // The target stands in for the public listener: it answers with the path it saw.
  target = createServer((req, res) => {
    res.setHeader('X-Target', 'yes');
    res.end(`hello ${req.url}`);
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetAddr = { host: '127.0.0.1', port: (target.address() as AddressInfo).port };
});

afterEach(async () => {
  ssh.refuseForwards = false;
  await Promise.all(running.splice(0).map((t) => t.stop()));
});

afterAll(async () => {
  await ssh.close();
  await new Promise<void>((r) => target.close(() => r()));
});

async function settings(over: Partial<SshSettings> = {}): Promise<SshSettings> {
  const remotePort = over.remotePort ?? (await freePort());
  return parseSshSettings({
    host: ssh.host,
    port: ssh.port,
    user: ssh.user,
    privateKey: ssh.clientKey.private,
    remotePort,
    publicUrl: `http://127.0.0.1:${remotePort}/`,
    ...over,
  });
}

async function start(s: SshSettings): Promise<RunningTunnel> {
  const t = await provider.start(s, targetAddr, new AbortController().signal);
  running.push(t);
  return t;
}

function parseError(body: unknown): string {
  try {
    parseSshSettings(body);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('parse accepted the body');
}

describe('ssh settings', () => {
  const key = generateClientKey();
  const ok = {
    host: 'vps.example.net',
    user: 'tunnel',
    privateKey: key.private,
    remotePort: 8080,
    publicUrl: 'https://belfry.example.net/',
  };

  it('defaults port 22 and bind address localhost, trims the URL, keeps the key', () => {
    const s = parseSshSettings(ok);
    expect(s).toMatchObject({
      host: 'vps.example.net',
      port: 22,
      bindAddress: 'localhost',
      publicUrl: 'https://belfry.example.net',
      hostFingerprint: null,
    });
    expect(s.privateKey.trim()).toBe(key.private.trim());
  });

  it('names the missing or bad field', () => {
    for (const f of ['host', 'user', 'privateKey', 'remotePort', 'publicUrl'] as const) {
      const body: Record<string, unknown> = { ...ok };
      delete body[f];
      expect(parseError(body)).toBe(`ssh.${f}: required`);
    }
    expect(parseError({ ...ok, port: 0 })).toMatch(/^ssh\.port: /);
    expect(parseError({ ...ok, port: 65_536 })).toMatch(/^ssh\.port: /);
    expect(parseError({ ...ok, remotePort: '8080' })).toMatch(/^ssh\.remotePort: /);
    expect(parseError({ ...ok, publicUrl: 'ftp://x' })).toMatch(/^ssh\.publicUrl: /);
    expect(parseError({ ...ok, host: 'not a host' })).toMatch(/^ssh\.host: /);
    expect(parseError({ ...ok, hostFingerprint: 'MD5:aa' })).toMatch(/^ssh\.hostFingerprint: /);
    expect(parseError('x')).toMatch(/^ssh: /);
  });

  it('refuses what is not a private key — a public key, garbage, an encrypted key — without echoing it', () => {
    expect(parseError({ ...ok, privateKey: key.public })).toBe('ssh.privateKey: not a private key');
    expect(parseError({ ...ok, privateKey: 'hunter2' })).toBe('ssh.privateKey: not a private key');
    const enc = generateEncrypted();
    expect(parseError({ ...ok, privateKey: enc })).toMatch(/^ssh\.privateKey: encrypted keys/);
  });

  it('accepts a PEM RSA key and a pasted key with CRLF line ends', () => {
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    expect(parseSshSettings({ ...ok, privateKey }).privateKey).toContain('BEGIN RSA PRIVATE KEY');
    expect(
      parseSshSettings({ ...ok, privateKey: key.private.replace(/\n/g, '\r\n') }).privateKey,
    ).not.toContain('\r');
  });
});

function generateEncrypted(): string {
  return ed25519Pair({ passphrase: 'pw', cipher: 'aes256-ctr', rounds: 4 }).private;
}

describe('ssh tunnel against a loopback sshd', () => {
  it('forwards the remote port to the target: an HTTP request reaches it', async () => {
    const s = await settings();
    const t = await start(s);
    expect(t.publicUrl).toBe(`http://127.0.0.1:${s.remotePort}`);
    expect(ssh.listeningPorts()).toContain(s.remotePort);
    const before = ssh.stats.forwarded;
    const res = await fetch(`http://127.0.0.1:${s.remotePort}/health?x=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-target')).toBe('yes');
    expect(await res.text()).toBe('hello /health?x=1');
    expect(ssh.stats.forwarded).toBe(before + 1);
  });

  it('pins the host key when a fingerprint is given', async () => {
    await start(await settings({ hostFingerprint: ssh.hostFingerprint }));
    const wrong = `SHA256:${'A'.repeat(43)}`;
    const err = await provider
      .start(await settings({ hostFingerprint: wrong }), targetAddr, new AbortController().signal)
      .catch((e: Error) => e);
    expect((err as Error).message).toBe(
      `ssh: host key mismatch: 127.0.0.1 presented ${ssh.hostFingerprint}, expected ${wrong}`,
    );
  });

  it('a key the server does not know: authentication failed, and the key is not in the message', async () => {
    const other = generateClientKey();
    const failures = ssh.stats.authFailures;
    const err = (await provider
      .start(await settings({ privateKey: other.private }), targetAddr, new AbortController().signal)
      .catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(/^ssh: authentication failed/);
    expect(err.message).not.toContain('PRIVATE');
    expect(ssh.stats.authFailures).toBeGreaterThan(failures);
    // the right key for the wrong user fails the same way
    const err2 = (await provider
      .start(await settings({ user: 'root' }), targetAddr, new AbortController().signal)
      .catch((e: Error) => e)) as Error;
    expect(err2.message).toMatch(/^ssh: authentication failed for user "root"/);
  });

  it('a refused forward rejects the start', async () => {
    ssh.refuseForwards = true;
    const s = await settings();
    const err = (await provider
      .start(s, targetAddr, new AbortController().signal)
      .catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(/^ssh: remote port forwarding refused/);
    expect(ssh.listeningPorts()).not.toContain(s.remotePort);
  });

  it('nothing listening on the SSH port: connection refused', async () => {
    const port = await freePort();
    const err = (await provider
      .start(await settings({ port }), targetAddr, new AbortController().signal)
      .catch((e: Error) => e)) as Error;
    expect(err.message).toBe(`ssh: connection refused by 127.0.0.1:${port}`);
  });

  it('a port that accepts but never speaks SSH: the handshake deadline names it', async () => {
    const mute = net.createServer(() => {});
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', () => r()));
    const port = (mute.address() as AddressInfo).port;
    try {
      const err = (await createSshProvider({ readyTimeoutMs: 200 })
        .start(await settings({ port }), targetAddr, new AbortController().signal)
        .catch((e: Error) => e)) as Error;
      expect(err.message).toBe(`ssh: no SSH handshake with 127.0.0.1:${port} within 200 ms`);
    } finally {
      mute.close();
    }
  });

  it('an aborted start rejects and leaves no forward behind', async () => {
    const ac = new AbortController();
    const s = await settings();
    const p = provider.start(s, targetAddr, ac.signal);
    ac.abort();
    await expect(p).rejects.toThrow('ssh: start cancelled');
    await ssh.waitForUnforward(s.remotePort);
  });

  it('the server dropping the connection calls onExit once with a reason', async () => {
    const t = await start(await settings());
    const reasons: string[] = [];
    const exited = new Promise<void>((resolve) =>
      t.onExit((r) => {
        reasons.push(r);
        resolve();
      }),
    );
    ssh.dropClients();
    await exited;
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^ssh: connection to 127\.0\.0\.1:\d+ (closed|reset)/);
  });

  it('a path gone silent is noticed by the keepalives: onExit says so', async () => {
    const quick = createSshProvider({ keepaliveIntervalMs: 50, keepaliveCountMax: 2 });
    const t = await quick.start(await settings(), targetAddr, new AbortController().signal);
    running.push(t);
    const reason = new Promise<string>((resolve) => t.onExit(resolve));
    ssh.freezeClients();
    expect(await reason).toBe(`ssh: connection to 127.0.0.1:${ssh.port} lost (no keepalive answer)`);
  });

  it('stop() closes the remote listener, does not call onExit, and may be called twice', async () => {
    const s = await settings();
    const t = await start(s);
    let exits = 0;
    t.onExit(() => exits++);
    await t.stop();
    await ssh.waitForUnforward(s.remotePort);
    await t.stop();
    await expect(fetch(`http://127.0.0.1:${s.remotePort}/health`)).rejects.toThrow();
    expect(exits).toBe(0);
  });
});
