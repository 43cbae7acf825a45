import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel } from '../helpers/factories';
import { type FakeTarget, startTarget } from '../helpers/fake-targets';
import { startTestServer, type TestServer } from '../helpers/test-server';

/**
 * Monitor checks against hostile input: a catastrophic user regex must not stall the event loop (each match
 * runs with a 50 ms limit), and a secret substituted into a request never comes back in an error text.
 */
let t: TestServer;
let dev: string;
let site: FakeTarget;
/** Unbounded, `/(a+)+$/` backtracks for seconds on this text (minutes at 30 a's). */
const EVIL_TEXT = `${'a'.repeat(28)}b`;
const EVIL = '/(a+)+$/';
const TIMED_OUT = 'pattern /(a+)+$/ took longer than 50 ms';

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
  site = await startTarget((req, res) => {
    if (req.url === '/evil') res.end(EVIL_TEXT);
    else if (req.url === '/evil.json') res.end(JSON.stringify({ s: EVIL_TEXT }));
    else if (req.url === '/echo') res.end(`you sent ${req.headers['x-api-key'] ?? ''}`);
    else res.end('ok');
  });
});
afterAll(async () => {
  await t.close();
  await site.close();
});

/** The longest the event loop went without running a 5 ms interval while `work` ran. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const iv = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 5);
  try {
    const result = await work();
    stallMs = Math.max(stallMs, performance.now() - last);
    return { result, stallMs };
  } finally {
    clearInterval(iv);
  }
}

describe('user regexes run with a time limit', () => {
  it('content-monitor test-rule: a catastrophic `matches` fails with the limit text, the loop keeps running', async () => {
    const { result: res, stallMs } = await longestStall(() =>
      t.request('POST', '/content-monitor/test-rule', {
        token: dev,
        json: { html: `<p id="x">${EVIL_TEXT}</p>`, selector: '#x', rule: 'matches', value: EVIL },
      }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: false, text: EVIL_TEXT, matched: 1, error: TIMED_OUT });
    expect(stallMs).toBeLessThan(400);
  });

  it('workflow-monitor: a regex extract over a real response fails the step, the loop keeps running', async () => {
    const { result: res, stallMs } = await longestStall(() =>
      t.request('POST', '/workflow-monitor/test', {
        token: dev,
        json: {
          steps: [
            { name: 'Grab', url: `${site.url}/evil`, extract: [{ var: 'x', from: 'regex', pattern: EVIL }] },
          ],
        },
      }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ok: false,
      status: 'down',
      error: `step 1 "Grab": extract x: ${TIMED_OUT}`,
    });
    expect(stallMs).toBeLessThan(400);
  });

  it('http-monitor: 20 catastrophic json `matches` share one limit and fail with its text', async () => {
    const json = Array.from({ length: 20 }, () => ({ path: '$.s', op: 'matches', value: EVIL }));
    const { result: res, stallMs } = await longestStall(() =>
      t.request('POST', '/http-monitor/test', { token: dev, json: { url: `${site.url}/evil.json`, json } }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: false, error: `json $.s: ${TIMED_OUT}` });
    const details = res.body.details.assertions.filter((a: { name: string }) => a.name === 'json $.s');
    expect(details).toHaveLength(20);
    for (const a of details)
      expect(a).toEqual({ name: 'json $.s', ok: false, detail: `json $.s: ${TIMED_OUT}` });
    expect(stallMs).toBeLessThan(400);
  });
});

describe('secrets never reach error texts', () => {
  const SECRET = 's3cr3t-Token/value';

  it('workflow: a secret variable substituted into a bad URL is masked in the error, lastError and the down message', async () => {
    const steps = [{ name: 'Call', url: 'http://bad host/?key={{apiToken}}' }];
    const expected = 'step 1 "Call": ERR_INVALID_URL: invalid URL http://bad host/?key=********';
    const test = await t.request('POST', '/workflow-monitor/test', {
      token: dev,
      json: { variables: { apiToken: SECRET }, steps },
    });
    expect(test.body).toMatchObject({ ok: false, error: expected });
    expect(test.body.details.steps[0].error).toBe(expected.replace('step 1 "Call": ', ''));
    expect(JSON.stringify(test.body)).not.toContain('s3cr3t');

    const c = await makeChannel(t, dev);
    const m = await t.request('POST', '/workflow-monitor', {
      token: dev,
      json: { appid: c.id, name: 'Flow', variables: { apiToken: SECRET }, steps },
    });
    expect(m.status).toBe(200);
    t.clock.advance(0);
    await t.server.scheduler.tick();
    const got = await t.request('GET', `/workflow-monitor/${m.body.id}`, { token: dev });
    expect(got.body).toMatchObject({ status: 'down', lastError: expected });
    const sent = t.server.ctx.db.all<{ title: string; message: string }>(
      'SELECT title, message FROM messages WHERE channel_id = ?',
      [c.id],
    );
    expect(sent.length).toBe(1);
    expect(JSON.stringify(sent)).not.toContain('s3cr3t');
  });

  it('workflow: an extracted secret-named value is masked in later steps\u2019 errors', async () => {
    const res = await t.request('POST', '/workflow-monitor/test', {
      token: dev,
      json: {
        steps: [
          {
            name: 'Login',
            url: `${site.url}/evil`,
            extract: [{ var: 'sessionToken', from: 'regex', pattern: '/a{5}/' }],
          },
          { name: 'Use', url: 'http://bad host/{{sessionToken}}' },
        ],
      },
    });
    expect(res.body.error).toBe('step 2 "Use": ERR_INVALID_URL: invalid URL http://bad host/********');
  });

  it('http-monitor: a secret header value echoed by the target is masked in the details and the error', async () => {
    const res = await t.request('POST', '/http-monitor/test', {
      token: dev,
      json: { url: `${site.url}/echo`, headers: { 'X-Api-Key': SECRET }, bodyContains: 'nothing like it' },
    });
    expect(res.body).toMatchObject({ ok: false, details: { bodyExcerpt: 'you sent ********' } });
    expect(JSON.stringify(res.body)).not.toContain('s3cr3t');
  });
});
