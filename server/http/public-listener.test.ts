import { describe, expect, it } from 'vitest';
import { isPublicPath } from './public-listener';

describe('isPublicPath', () => {
  it('takes the public prefixes with something after them, and the exact public paths', () => {
    for (const p of [
      '/webhook/Wabc',
      '/heartbeat/ping/Habc/fail',
      '/router/Rabc/github/push',
      '/metric/Mabc',
      '/script/Tabc',
      '/status/my-page/summary',
      '/status-subscribe/verify',
      '/a/answer',
      '/m/read',
      '/image/avatar/x.png',
      '/health',
    ])
      expect(isPublicPath(p), p).toBe(true);
  });

  it('refuses everything else: bare prefixes, other case, dot segments, encoded separators, lookalikes', () => {
    for (const p of [
      '/',
      '/webhook',
      '/webhook/',
      '/Webhook/x',
      '/heartbeat',
      '/heartbeat/1',
      '/heartbeat/ping',
      '/webhook-router',
      '/metric-source',
      '/status-page',
      '/statusx/a',
      '/health/',
      '/healthz',
      '/a/answer/x',
      '/m/read/',
      '/webhook/../client',
      '/webhook/x/..',
      '/router/x/./y',
      '/webhook/%2e%2e/client',
      '/webhook/x%2Fy',
      '/webhook/x%5cy',
      '/webhook/x\\..\\client',
      '/ws',
      '/stream',
    ])
      expect(isPublicPath(p), p).toBe(false);
  });
});
