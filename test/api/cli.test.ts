import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_INFO_FILE, lockDataDir } from '../../server/db/lock';
import { LISTENING_RE, spawnServer } from '../helpers/spawn-server';
import { basicHeader } from '../helpers/test-server';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs server/cli.ts to its end (for starts that must not listen): exit code, stdout, stderr. */
function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/cli.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** Servers an npm test left running (the pid in the data dir's lock file), stopped after each test. */
const npmDataDirs: string[] = [];
function killLeftover(dir: string): void {
  const file = join(dir, LOCK_INFO_FILE);
  if (!existsSync(file)) return;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

async function portIsFree(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** `npm run <script> -- --port 0 --data-dir <dir>` and its listening URL. */
async function npmRun(
  script: string,
  dir: string,
): Promise<{ npm: ChildProcess; url: string; exited: Promise<unknown> }> {
  npmDataDirs.push(dir);
  const npm = spawn('npm', ['run', script, '--', '--port', '0', '--data-dir', dir], {
    cwd: ROOT,
    env: {
      ...process.env,
      BELFRY_BCRYPT_ROUNDS: '4',
      BELFRY_SKIP_UI_BUILD: '1',
      DISPLAY: '',
      WAYLAND_DISPLAY: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => npm.on('exit', resolve));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm run ${script} did not listen:\n${out}`)), 60_000);
    npm.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = LISTENING_RE.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    npm.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  });
  return { npm, url, exited };
}

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'belfry-cli-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of npmDataDirs.splice(0)) killLeftover(d);
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

  it('--help prints every flag with its environment variable and exits 0 without starting', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    for (const flag of [
      '--host',
      '--port',
      '--data-dir',
      '--public-url',
      '--smtp-url',
      '--lan',
      '--trust-proxy',
    ])
      expect(r.stdout).toContain(flag);
    expect(r.stdout).toContain('BELFRY_DATA_DIR');
    expect(r.stdout).toContain('BELFRY_ADMIN_PASSWORD');
    expect(r.stdout).not.toMatch(/undefined|listening/);
  });

  it('refuses a data dir that is a file in one line, exit 1, no stack trace', async () => {
    const file = join(tempDir(), 'not-a-dir');
    writeFileSync(file, 'x');
    const r = await runCli(['--port', '0', '--data-dir', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `belfry: the data dir ${file} is a file, not a directory: pass --data-dir (BELFRY_DATA_DIR) a directory, or move the file away\n`,
    );
    const below = await runCli(['--port', '0', '--data-dir', join(file, 'sub')]);
    expect(below.code).toBe(1);
    expect(below.stderr).toMatch(/^belfry: cannot use \S+sub: ENOTDIR[^\n]*\n$/);
  });

  it('refuses a data dir under /proc in one line, exit 1 (recursive mkdir there used to spin forever)', async () => {
    if (process.platform !== 'linux') return;
    const r = await runCli(['--port', '0', '--data-dir', '/proc/belfry-nope']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^belfry: cannot use \/proc\/belfry-nope: ENOENT[^\n]*\n$/);
  });

  it('--reset-password gives a locked-out account a new password once, refused while Belfry runs', async () => {
    const dir = tempDir();
    const first = await spawnServer(['--port', '0', '--data-dir', dir]);
    const [, email, old] = /administrator (\S+) with the password (\S+)/.exec(first.stdout())!;
    // While the server holds the data dir, the reset is refused by its lock.
    const busy = await runCli(['--data-dir', dir, '--reset-password', email!]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(/^belfry: \S+ is in use by another Belfry/);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const unknown = await runCli(['--data-dir', dir, '--reset-password', 'nobody@example.com']);
    expect(unknown).toMatchObject({
      code: 1,
      stderr: 'belfry: no account with the email address nobody@example.com\n',
    });
    const r = await runCli(['--data-dir', dir, '--reset-password', email!]);
    expect(r.code).toBe(0);
    const password = /^New password for \S+: (\S+)\n/.exec(r.stdout)?.[1];
    expect(password).toMatch(/^[A-Za-z0-9_-]{16}$/);

    const second = await spawnServer(['--port', '0', '--data-dir', dir]);
    const signIn = (p: string) =>
      fetch(`${second.url}/client`, { headers: { Authorization: basicHeader(email!, p) } });
    expect((await signIn(password!)).status).toBe(200);
    expect((await signIn(old!)).status).toBe(401);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('refuses BELFRY_ADMIN_PASSWORD shorter than the password rule in one line', async () => {
    const r = await runCli(['--port', '0', '--data-dir', tempDir()], { BELFRY_ADMIN_PASSWORD: 'short' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'belfry: invalid configuration: adminPassword: must be at least 8 characters, like every account password (set by BELFRY_ADMIN_PASSWORD)\n',
    );
  });

  it('GET / answers the web page to curl (Accept: */*), not a JSON 404', async () => {
    const s = await spawnServer(['--port', '0', '--data-dir', tempDir()]);
    try {
      const res = await fetch(`${s.url}/`, { headers: { Accept: '*/*' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const built = join(ROOT, 'dist', 'renderer', 'index.html');
      const body = await res.text();
      if (existsSync(built)) expect(body).toBe(readFileSync(built, 'utf8'));
      else expect(body).toContain('npm run build:renderer');
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  });

  // `npm start` runs the headless server when there is no display (DISPLAY unset): Linux only, since
  // macOS and Windows always have one and would open the desktop app.
  for (const script of process.platform === 'linux' ? ['serve', 'start'] : ['serve']) {
    it(`SIGTERM to the npm process of \`npm run ${script}\` stops the server: port free, lock free`, async () => {
      const dir = tempDir();
      const { npm, url, exited } = await npmRun(script, dir);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      const port = Number(new URL(url).port);
      npm.kill('SIGTERM');
      await exited;
      await expect.poll(() => portIsFree(port), { timeout: 10_000 }).toBe(true);
      await expect.poll(() => existsSync(join(dir, LOCK_INFO_FILE)), { timeout: 10_000 }).toBe(false);
      const unlock = await lockDataDir(dir);
      unlock();
    });
  }
});
