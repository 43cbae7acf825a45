import { afterEach, describe, expect, it } from 'vitest';
import { PLAIN_HTTP_LAN_WARNING } from '../../server/config';
import { startTestServer, type TestServer } from '../helpers/test-server';

/**
 * LAN mode (`--lan`): the server says it is reachable over plain HTTP, so the UI can warn. Tests listen
 * on loopback only, so LAN mode is switched on with the host kept at 127.0.0.1.
 */
describe('LAN mode over plain HTTP', () => {
  let t: TestServer | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('GET /serverinfo and /gotifyinfo add plainHttpLan: true when the server runs in LAN mode', async () => {
    t = await startTestServer({ config: { lan: true } });
    for (const path of ['/serverinfo', '/gotifyinfo']) {
      const res = await t.request('GET', path);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        version: expect.any(String),
        register: false,
        oidc: false,
        plainHttpLan: true,
      });
    }
    expect(t.log.lines.filter((l) => l.includes(PLAIN_HTTP_LAN_WARNING))).toEqual([
      expect.stringMatching(/ WARN LAN mode: Belfry is reachable from the network over plain HTTP/),
    ]);
  });

  it('GET /serverinfo has no plainHttpLan field and nothing is warned when the server is loopback only', async () => {
    t = await startTestServer();
    const res = await t.request('GET', '/serverinfo');
    expect(res.body).toEqual({ version: expect.any(String), register: false, oidc: false });
    expect(t.log.lines.some((l) => l.includes('LAN mode'))).toBe(false);
  });
});
