import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentSecurityPolicy, isApiPath, staticRenderer } from './static';

describe('the web UI at /', () => {
  let dir: string;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'belfry-renderer-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>UI</title>');
    writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
    const app = express();
    app.use(staticRenderer(dir));
    app.use((_req, res) => void res.status(404).json({ error: 'api' }));
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const html = { headers: { Accept: 'text/html,application/xhtml+xml' } };

  it('GET / and UI paths answer index.html with the CSP when the browser asks for HTML', async () => {
    for (const path of ['/', '/inbox', '/devices', '/pair']) {
      const res = await fetch(base + path, html);
      expect(res.status, path).toBe(200);
      expect(await res.text()).toContain('<title>UI</title>');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    }
  });
  it('assets are files; API paths and non-HTML requests never fall back', async () => {
    expect(await (await fetch(`${base}/assets/app.js`)).text()).toBe('console.log(1)');
    expect((await fetch(`${base}/message`, html)).status).toBe(404);
    expect((await fetch(`${base}/application/1/token`, html)).status).toBe(404);
    expect((await fetch(`${base}/inbox`, { headers: { Accept: 'application/json' } })).status).toBe(404);
    expect((await fetch(`${base}/inbox`, { ...html, method: 'POST' })).status).toBe(404);
  });
  it('GET / answers the page to curl (Accept: */*) and to no Accept; JSON clients and other paths still 404', async () => {
    const variants: Record<string, string>[] = [{ Accept: '*/*' }, { Accept: 'text/plain, */*;q=0.8' }, {}];
    for (const headers of variants) {
      const res = await fetch(`${base}/`, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('<title>UI</title>');
    }
    expect((await fetch(`${base}/`, { headers: { Accept: 'application/json' } })).status).toBe(404);
    expect((await fetch(`${base}/inbox`, { headers: { Accept: '*/*' } })).status).toBe(404);
    expect((await fetch(`${base}/`, { method: 'POST', headers: { Accept: '*/*' } })).status).toBe(404);
  });
  it('GET / says how to build the UI when dist/renderer has no index.html', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'belfry-renderer-empty-'));
    const app = express();
    app.use(staticRenderer(empty));
    const other = app.listen(0, '127.0.0.1');
    await new Promise((r) => other.once('listening', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('npm run build:renderer');
    } finally {
      other.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
  it('isApiPath knows the API nouns; the CSP allows sockets only to the same host', () => {
    expect(isApiPath('/ws')).toBe(true);
    expect(isApiPath('/current/user')).toBe(true);
    expect(isApiPath('/inbox')).toBe(false);
    expect(isApiPath('/api-tokens')).toBe(false);
    expect(contentSecurityPolicy('127.0.0.1:7878')).toContain(
      "connect-src 'self' ws://127.0.0.1:7878 wss://127.0.0.1:7878",
    );
    expect(contentSecurityPolicy('evil" onload')).toContain("connect-src 'self';");
  });
});
