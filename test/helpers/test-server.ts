import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ConfigInput, loadConfig } from '../../server/config';
import type { StoreIo } from '../../server/db/store';
import type { Feature } from '../../server/features/index';
import { FEATURES } from '../../server/features/index';
import { type BelfryServer, createServer } from '../../server/index';
import { ManualClock } from '../../server/lib/clock';
import { memoryLogger } from '../../server/lib/log';

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'correct-horse-battery';

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  token?: string;
  /** How to send `token`: the spec's five transports (default: X-Service-Key... no: bearer). */
  via?: 'service-key' | 'legacy-key' | 'gotify-key' | 'bearer' | 'query' | 'cookie';
  basic?: { email: string; password: string };
  json?: unknown;
  form?: Record<string, string>;
  body?: string | Uint8Array | FormData;
  headers?: Record<string, string>;
}

export interface TestServer {
  server: BelfryServer;
  url: string;
  clock: ManualClock;
  log: ReturnType<typeof memoryLogger>;
  dataDir: string;
  admin: { email: string; password: string };
  request<T = any>(method: string, path: string, opts?: RequestOptions): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

/** Starts the real createServer on 127.0.0.1:0 with a temp data dir and a ManualClock. */
export async function startTestServer(
  opts: {
    config?: Partial<ConfigInput>;
    clock?: ManualClock;
    dataDir?: string;
    extraFeatures?: Feature[];
    /** Features left out by name (the 501 of a spec route no family mounts). */
    withoutFeatures?: string[];
    storeIo?: StoreIo;
  } = {},
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'belfry-test-'));
  const clock = opts.clock ?? new ManualClock();
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir,
      port: 0,
      host: '127.0.0.1',
      adminEmail: ADMIN_EMAIL,
      adminPassword: ADMIN_PASSWORD,
      bcryptRounds: 4,
      logLevel: 'debug',
      ...opts.config,
    },
  });
  const log = memoryLogger();
  const features =
    opts.extraFeatures || opts.withoutFeatures
      ? [...FEATURES, ...(opts.extraFeatures ?? [])].filter((f) => !opts.withoutFeatures?.includes(f.name))
      : undefined;
  const server = await createServer(config, {
    clock,
    log,
    schedulerTickMs: 3_600_000,
    ...(features ? { features } : {}),
    ...(opts.storeIo ? { storeIo: opts.storeIo } : {}),
  });
  const { url } = await server.start();
  let closed = false;
  return {
    server,
    url,
    clock,
    log,
    dataDir,
    admin: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    request: (method, path, ro) => request(url, method, path, ro),
    close: async () => {
      if (closed) return;
      closed = true;
      await server.stop();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function basicHeader(email: string, password: string): string {
  return `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`;
}

export async function request<T = any>(
  base: string,
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  let url = base + path;
  if (opts.token !== undefined) {
    switch (opts.via ?? 'bearer') {
      case 'service-key':
        headers['X-Service-Key'] = opts.token;
        break;
      case 'legacy-key':
        headers['X-Legacy-Key'] = opts.token;
        break;
      case 'gotify-key':
        headers['X-Gotify-Key'] = opts.token;
        break;
      case 'bearer':
        headers.Authorization = `Bearer ${opts.token}`;
        break;
      case 'query':
        url += `${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(opts.token)}`;
        break;
      case 'cookie':
        headers.Cookie = `service-client-token=${opts.token}`;
        break;
    }
  }
  if (opts.basic) headers.Authorization = basicHeader(opts.basic.email, opts.basic.password);
  let body: string | Uint8Array | FormData | undefined = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['Content-Type'] ??= 'application/json';
  } else if (opts.form) {
    body = new URLSearchParams(opts.form).toString();
    headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
  }
  const res = await fetch(url, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}
