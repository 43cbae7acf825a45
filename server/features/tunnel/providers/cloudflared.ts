import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { z } from 'zod';
import type { RunningTunnel, TunnelProvider } from '../provider';
import { targetAddr } from './ngrok';
import { hostName, optionalText, parseSettings, scrubSecrets } from './settings';

/** `cloudflared` settings: none (a quick tunnel), or a named tunnel's token and the hostname routed to it. */
export type CloudflaredSettings = { token?: string | undefined; hostname?: string | undefined };

const schema = z
  .object({
    token: optionalText(4_000),
    hostname: optionalText(253).pipe(hostName().optional()),
  })
  .superRefine((v, c) => {
    if (v.token && !v.hostname)
      c.addIssue({ code: 'custom', path: ['hostname'], message: 'required with a token' });
  });

/** A quick tunnel's URL in cloudflared's output (api.trycloudflare.com is the service it asks, not a URL). */
const QUICK_URL = /https:\/\/(?!api\.)[a-z0-9-]+\.trycloudflare\.com/i;
/** A named tunnel is up once cloudflared has registered a connection with Cloudflare's edge. */
const REGISTERED = /Registered tunnel connection|Connection [0-9a-f-]+ registered/i;
const STOP_GRACE_MS = 5_000;

export interface CloudflaredDeps {
  /** The PATH cloudflared is looked up in (default: the server's). Tests put a fake one first. */
  path?: string;
  /** How long cloudflared has to print its quick-tunnel URL or register a named tunnel (default 30 s). */
  startTimeoutMs?: number;
}

/** The executable `name` in `path`, or null (on Windows also `name.exe`). */
export function findInPath(name: string, path: string | undefined): string | null {
  const names = process.platform === 'win32' ? [`${name}.exe`, name] : [name];
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const n of names) {
      const file = join(dir, n);
      try {
        if (!statSync(file).isFile()) continue;
        accessSync(file, constants.X_OK);
        return file;
      } catch {}
    }
  }
  return null;
}

/**
 * Cloudflare Tunnel through the `cloudflared` program on PATH (docs/public-access.md). Without a token a
 * quick tunnel: `cloudflared tunnel --no-autoupdate --url http://{target}`, its random
 * `https://….trycloudflare.com` URL read from its output. With a token the named tunnel it belongs to:
 * `cloudflared tunnel --no-autoupdate run`, the token in TUNNEL_TOKEN (cloudflared's own variable for
 * `--token`: an argument would be readable by every local user in the process list); its public URL is
 * `https://{hostname}`, the hostname routed to it in Cloudflare's dashboard.
 */
export function cloudflaredProvider(deps: CloudflaredDeps = {}): TunnelProvider<CloudflaredSettings> {
  return {
    name: 'cloudflared',
    secretFields: ['token'],
    parse: (body) => parseSettings('cloudflared', schema, body),
    start(settings, target, signal) {
      const binary = findInPath('cloudflared', deps.path ?? process.env.PATH);
      if (!binary) return Promise.reject(new Error('cloudflared not found in PATH'));
      const named = settings.token !== undefined;
      const args = named
        ? ['tunnel', '--no-autoupdate', 'run']
        : ['tunnel', '--no-autoupdate', '--url', `http://${targetAddr(target)}`];
      const env: NodeJS.ProcessEnv = { ...process.env, ...(deps.path ? { PATH: deps.path } : {}) };
      delete env.TUNNEL_TOKEN;
      if (named) env.TUNNEL_TOKEN = settings.token;
      const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env, windowsHide: true });
      return watch(child, {
        scrub: (text) => scrubSecrets(text, [settings.token]),
        ready: (line) => {
          if (named) return REGISTERED.test(line) ? `https://${settings.hostname}` : null;
          return QUICK_URL.exec(line)?.[0].toLowerCase() ?? null;
        },
        timeoutMs: deps.startTimeoutMs ?? 30_000,
        signal,
      });
    },
  };
}

interface WatchOptions {
  scrub(text: string): string;
  /** The public URL once a line of output says the tunnel is up, else null. */
  ready(line: string): string | null;
  timeoutMs: number;
  signal: AbortSignal;
}

/** Resolves when cloudflared's output says it is up; rejects when it exits, times out or is aborted first. */
function watch(child: ChildProcess, o: WatchOptions): Promise<RunningTunnel> {
  return new Promise<RunningTunnel>((resolve, reject) => {
    const tail: string[] = [];
    let url: string | null = null;
    let exitListener: ((reason: string) => void) | null = null;
    let stopping = false;
    let exitCode: number | null | undefined;
    const exited = new Promise<void>((done) => child.once('close', () => done()));
    const lastLine = () => (tail.length > 0 ? `: ${o.scrub(tail[tail.length - 1]!)}` : '');
    const kill = async () => {
      if (exitCode !== undefined) return;
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(force);
    };
    // The first reason wins; rejects once the child is gone, so a stopping server leaves no cloudflared behind.
    let failure: string | null = null;
    const fail = (reason: string) => {
      if (failure !== null || url !== null) return;
      failure = reason;
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      void kill().then(() => reject(new Error(reason)));
    };
    const onAbort = () => fail('cloudflared: start cancelled');
    const timer = setTimeout(
      () =>
        fail(`cloudflared did not report a tunnel within ${Math.round(o.timeoutMs / 1000)} s${lastLine()}`),
      o.timeoutMs,
    );
    o.signal.addEventListener('abort', onAbort, { once: true });
    const onLine = (line: string) => {
      if (line.trim() === '') return;
      tail.push(line.slice(0, 500));
      if (tail.length > 20) tail.shift();
      if (url !== null) return;
      // Only the first URL counts (cloudflared repeats it in its banner).
      const found = o.ready(line);
      if (found === null) return;
      url = found;
      // From here on an exit reports what cloudflared said since it was up.
      tail.length = 0;
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      resolve({
        publicUrl: url,
        onExit: (l) => {
          exitListener = l;
        },
        stop: async () => {
          stopping = true;
          await kill();
        },
      });
    };
    for (const stream of [child.stdout, child.stderr]) {
      let buffered = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split(/\r?\n/);
        buffered = lines.pop()!.slice(-4_000);
        for (const l of lines) onLine(l);
      });
    }
    child.once('error', (err: NodeJS.ErrnoException) => {
      exitCode = null;
      if (url === null) fail(`cloudflared could not be started: ${err.code ?? err.message}`);
    });
    child.once('close', (code, sig) => {
      exitCode = code;
      const how = code !== null ? `code ${code}` : `signal ${sig}`;
      if (url === null) fail(`cloudflared exited (${how})${lastLine()}`);
      else if (!stopping) exitListener?.(`cloudflared exited (${how})${lastLine()}`);
    });
  });
}
