import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Request, type RequestHandler, Router } from 'express';

/**
 * The built renderer (Vite, `npm run build:renderer` → dist/renderer) served at `/`, with a history
 * fallback: a GET that accepts text/html and matches no file gets index.html, so `/inbox` or `/pair`
 * can be reloaded. API paths never fall back; they reach the 501 router and the 404 handler as before.
 * Both this module and the Electron bundle (dist/electron/main.js) sit two levels below the root.
 */
export function defaultRendererDir(): string {
  return fileURLToPath(new URL('../../dist/renderer', import.meta.url));
}

/** First path segments the UI never owns: everything of the API (spec paths, legacy nouns, streams). */
export const API_PREFIXES: readonly string[] = [
  'a',
  'api-token',
  'application',
  'ask',
  'ask-question',
  'assistant',
  'auth',
  'browser-shot',
  'client',
  'content-monitor',
  'current',
  'device',
  'email-inbox',
  'gotifyinfo',
  'health',
  'heartbeat',
  'http-monitor',
  'integrations',
  'm',
  'maintenance-window',
  'message',
  'metric',
  'metric-source',
  'monitor',
  'monitor-history',
  'pairing',
  'plugin',
  'port-monitor',
  'port-scan',
  'router',
  'script',
  'serverinfo',
  'share',
  'status',
  'status-page',
  'status-subscribe',
  'stream',
  'token',
  'tunnel',
  'user',
  'verified-host',
  'version',
  'web-script',
  'webhook',
  'webhook-router',
  'workflow-monitor',
  'browser-workflow',
  'ws',
];
const API_PREFIX_SET = new Set(API_PREFIXES);

export function isApiPath(path: string): boolean {
  const first = path.split('/')[1] ?? '';
  return API_PREFIX_SET.has(first.toLowerCase());
}

/**
 * The Content-Security-Policy of the UI: only our own scripts, no inline script, no plugins, no
 * framing; sockets only back to the same host. Electron applies the same policy to its window.
 */
export function contentSecurityPolicy(host: string | undefined): string {
  const ws = host && /^[A-Za-z0-9.\-[\]:]+$/.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    // React and recharts set style attributes; no inline <script> is ever allowed.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self'${ws}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const NOT_BUILT_PAGE = `<!doctype html><meta charset="utf-8"><title>Belfry</title>
<body style="font-family:system-ui;max-width:40rem;margin:3rem auto;padding:0 1rem">
<h1>Belfry is running</h1><p>The web interface is not built yet. <code>npm run serve</code> and
<code>npm start</code> build it when they start (unless <code>BELFRY_SKIP_UI_BUILD=1</code>); or run
<code>npm run build:renderer</code> and reload this page. The API works without it: see docs/reference.md.</p></body>`;

/**
 * A browser asks for HTML. `/` itself answers the page to anyone who does not prefer JSON (`curl /`
 * sends an Accept of any type): the first thing a new user tries gets the UI, or the page saying how to build it.
 */
function wantsHtml(req: Request): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if ((req.get('accept') ?? '').includes('text/html')) return true;
  return (req.path === '/' || req.path === '/index.html') && req.accepts(['html', 'json']) === 'html';
}

export function staticRenderer(dir: string = defaultRendererDir()): RequestHandler {
  const router = Router();
  const indexFile = join(dir, 'index.html');
  router.use((req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (isApiPath(req.path)) return next();
    res.setHeader('Content-Security-Policy', contentSecurityPolicy(req.get('host')));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  router.use(
    '/assets',
    express.static(join(dir, 'assets'), { immutable: true, maxAge: '1y', index: false, fallthrough: true }),
  );
  const files = express.static(dir, { index: false, maxAge: 0 });
  router.use((req, res, next) => (isApiPath(req.path) ? next() : files(req, res, next)));
  router.use((req, res, next) => {
    if (!wantsHtml(req) || isApiPath(req.path)) return next();
    res.setHeader('Cache-Control', 'no-cache');
    if (!existsSync(indexFile)) {
      res.status(200).type('html').send(NOT_BUILT_PAGE);
      return;
    }
    res.status(200).type('html').send(readFileSync(indexFile));
  });
  return router;
}
