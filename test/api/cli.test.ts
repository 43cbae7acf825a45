import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnServer } from '../helpers/spawn-server';
import { basicHeader } from '../helpers/test-server';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'belfry-cli-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('npm run serve', () => {
  it('prints exactly the listening line, serves a green /health, and exits 0 on SIGTERM', async () => {
    const dir = tempDir();
    const s = await spawnServer(['--port', '0', '--data-dir', dir], {
      BELFRY_ADMIN_EMAIL: 'root@example.com',
      BELFRY_ADMIN_PASSWORD: 'a-long-password',
    });
    expect(s.stdout()).toMatch(/^Belfry listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    const health = await fetch(`${s.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ health: 'green', database: 'green' });
    const me = await fetch(`${s.url}/client`, {
      headers: { Authorization: basicHeader('root@example.com', 'a-long-password') },
    });
    expect(me.status).toBe(200);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('generates and prints the admin password once when none is configured', async () => {
    const dir = tempDir();
    const first = await spawnServer(['--port', '0', '--data-dir', dir]);
    const m = /administrator (\S+) with the password (\S+)/.exec(first.stdout());
    expect(m).not.toBeNull();
    const [, email, password] = m!;
    const ok = await fetch(`${first.url}/client`, {
      headers: { Authorization: basicHeader(email!, password!) },
    });
    expect(ok.status).toBe(200);
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);
    const second = await spawnServer(['--port', '0', '--data-dir', dir]);
    expect(second.stdout()).not.toMatch(/password/);
    const again = await fetch(`${second.url}/client`, {
      headers: { Authorization: basicHeader(email!, password!) },
    });
    expect(again.status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('refuses to start on a corrupt snapshot with a clear message', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'belfry.db'), 'this is not a database at all'.repeat(200));
    await expect(spawnServer(['--port', '0', '--data-dir', dir])).rejects.toThrow(
      /stderr: belfry: .*belfry\.db/,
    );
  });

  it('refuses a data dir another running Belfry holds, and takes over the lock of a killed one', async () => {
    const dir = tempDir();
    const first = await spawnServer(['--port', '0', '--data-dir', dir]);
    await expect(spawnServer(['--port', '0', '--data-dir', dir])).rejects.toThrow(
      /stderr: belfry: \/\S+ is in use by another Belfry \(pid \d+\)/,
    );
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await spawnServer(['--port', '0', '--data-dir', dir]);
    expect((await fetch(`${second.url}/health`)).status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('refuses an unknown flag with a readable message', async () => {
    await expect(spawnServer(['--bogus', '1'])).rejects.toThrow(/unknown flag --bogus/);
  });
});
