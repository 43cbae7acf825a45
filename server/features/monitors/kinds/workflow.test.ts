import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  badRequestOf,
  type FakeTarget,
  monitorTestCtx,
  startTarget,
  testIo,
} from '../../../../test/helpers/fake-targets';
import { buildStep, substitute, type WorkflowSettings, workflowMonitor } from './workflow';

const ctx = monitorTestCtx();

const parseError = (body: Record<string, unknown>, prev?: WorkflowSettings) =>
  badRequestOf(() => workflowMonitor.parse(body, prev, ctx));

describe('workflow-monitor parse', () => {
  it('fills step defaults, names steps "step {n}"', () => {
    const s = workflowMonitor.parse(
      { steps: [{ url: 'https://a.test/' }, { name: 'Two', url: '{{base}}/x' }] },
      undefined,
      ctx,
    );
    expect(s.variables).toEqual({});
    expect(s.steps[0]).toEqual({
      name: 'step 1',
      method: 'GET',
      url: 'https://a.test/',
      headers: {},
      body: '',
      basicAuth: null,
      expectedStatus: ['200-299'],
      followRedirects: true,
      ignoreTlsErrors: false,
      assert: { maxResponseMs: null, bodyContains: null, bodyNotContains: null, json: [] },
      extract: [],
    });
    expect(s.steps[1]?.name).toBe('Two');
    expect(s.steps[1]?.url).toBe('{{base}}/x');
  });

  it('answers nested field paths', () => {
    expect(parseError({})).toBe('steps: required');
    expect(parseError({ steps: [] })).toBe('steps: at least one item');
    expect(parseError({ steps: Array.from({ length: 21 }, () => ({ url: 'https://a.test' })) })).toBe(
      'steps: at most 20 items',
    );
    expect(parseError({ steps: [{ url: 'https://a.test' }, { url: 'https://a.test' }, { name: 'x' }] })).toBe(
      'steps[2].url: required',
    );
    expect(parseError({ steps: [{ url: 'mailto:a@b.c' }] })).toBe(
      'steps[0].url: must be an http or https URL',
    );
    expect(parseError({ steps: [{ url: 'https://a.test', assert: { maxResponseMs: -1 } }] })).toBe(
      'steps[0].assert.maxResponseMs: must be between 1 and 120000',
    );
    expect(parseError({ steps: [{ url: 'https://a.test', extract: [{ var: 'x', from: 'json' }] }] })).toBe(
      'steps[0].extract[0].path: required',
    );
    expect(
      parseError({
        steps: [{ url: 'https://a.test', extract: [{ var: '1x', from: 'header', header: 'A' }] }],
      }),
    ).toMatch(/^steps\[0\]\.extract\[0\]\.var: /);
    expect(
      parseError({
        steps: [{ url: 'https://a.test', extract: [{ var: 'x', from: 'regex', pattern: '(' }] }],
      }),
    ).toBe('steps[0].extract[0].pattern: not a valid regular expression');
    expect(parseError({ steps: [{ url: 'https://a.test' }], variables: { 'a-b': '1' } })).toMatch(
      /^variables\.a-b: /,
    );
    expect(parseError({ steps: [{ url: 'https://a.test' }], variables: { a: 1 } })).toBe(
      'variables.a: must be a string',
    );
  });

  it('masks secret variables, headers and passwords; "********" keeps them by name and by step position', () => {
    const prev = workflowMonitor.parse(
      {
        variables: { apiToken: 't-1', user: 'ann' },
        steps: [
          { url: 'https://a.test/login', headers: { Authorization: 'Bearer one' } },
          { url: 'https://a.test/x', basicAuth: { username: 'u', password: 'p2' } },
        ],
      },
      undefined,
      ctx,
    );
    const shown = workflowMonitor.present(prev, null) as {
      variables: Record<string, string>;
      steps: { headers: Record<string, string>; basicAuth: unknown }[];
    };
    expect(shown.variables).toEqual({ apiToken: '********', user: 'ann' });
    expect(shown.steps[0]?.headers).toEqual({ Authorization: '********' });
    expect(shown.steps[1]?.basicAuth).toEqual({ username: 'u', password: '********' });
    // The UI sends back what it was shown, with a step edited: secrets stay.
    const next = workflowMonitor.parse(
      JSON.parse(JSON.stringify({ ...shown, steps: [{ ...shown.steps[0], name: 'Login' }, shown.steps[1]] })),
      prev,
      ctx,
    );
    expect(next.variables).toEqual({ apiToken: 't-1', user: 'ann' });
    expect(next.steps[0]?.headers).toEqual({ Authorization: 'Bearer one' });
    expect(next.steps[0]?.name).toBe('Login');
    expect(next.steps[1]?.basicAuth).toEqual({ username: 'u', password: 'p2' });
    // Positions matter: a secret moved to a step with nothing stored there is refused.
    expect(
      parseError({ steps: [shown.steps[1], shown.steps[0]] as unknown as Record<string, unknown>[] }, prev),
    ).toMatch(/^steps\[0\]\.basicAuth\.password: /);
    // An absent `steps` keeps the stored steps.
    expect(workflowMonitor.parse({ variables: { user: 'bob' } }, prev, ctx).steps).toEqual(prev.steps);
  });

  it('targets the first step URL and lists the hosts it can know', () => {
    const s = workflowMonitor.parse(
      {
        variables: { base: 'http://api.test:8080' },
        steps: [{ url: '{{base}}/login' }, { url: 'https://Other.test/x' }, { url: 'https://{{later}}/y' }],
      },
      undefined,
      ctx,
    );
    expect(workflowMonitor.target(s)).toBe('{{base}}/login');
    expect(workflowMonitor.hosts(s)).toEqual(['api.test', 'other.test', 'https://{{later}}/y']);
  });
});

describe('substitute', () => {
  it('replaces variables and the built-ins', () => {
    const vars = new Map([['id', '42']]);
    expect(substitute('/items/{{id}}?t={{ $timestamp }}', vars, 1_700_000_000_999)).toEqual({
      text: '/items/42?t=1700000000',
    });
    const uuid = substitute('{{$uuid}}', vars, 0);
    expect('text' in uuid && /^[0-9a-f-]{36}$/.test(uuid.text)).toBe(true);
    expect(substitute('{{nope}} {{id}}', vars, 0)).toEqual({ error: 'variable "nope" is not defined' });
  });
});

describe('workflow-monitor check', () => {
  let site: FakeTarget;
  beforeAll(async () => {
    site = await startTarget((req, res, body) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/login') {
        const creds = JSON.parse(body || '{}') as { user?: string };
        res.writeHead(creds.user === 'ann' ? 200 : 403, {
          'Content-Type': 'application/json',
          'X-Session': 's-77',
        });
        res.end(JSON.stringify({ token: 'tok-abc', user: { id: 42, name: 'Ann' } }));
      } else if (url.pathname === '/items') {
        const authed = req.headers.authorization === 'Bearer tok-abc';
        res.writeHead(authed ? 200 : 401, { 'Content-Type': 'text/html' });
        res.end(
          authed ? `<p>item ${url.searchParams.get('id')} total=17 s=${req.headers['x-session']}</p>` : 'no',
        );
      } else if (url.pathname === '/slow') {
        setTimeout(() => res.end('{}'), 40);
      } else res.end(JSON.stringify({ path: req.url }));
    });
  });
  afterAll(() => site.close());

  const login = () => ({
    name: 'Login',
    method: 'POST',
    url: '{{base}}/login',
    headers: { 'Content-Type': 'application/json' },
    body: '{"user":"{{user}}"}',
    extract: [
      { var: 'token', from: 'json', path: '$.token' },
      { var: 'uid', from: 'json', path: '$.user.id' },
      { var: 'session', from: 'header', header: 'x-SESSION' },
    ],
  });
  const items = () => ({
    name: 'Items',
    url: '{{base}}/items?id={{uid}}',
    headers: { Authorization: 'Bearer {{token}}', 'X-Session': '{{session}}' },
    assert: { bodyContains: 'total=', json: [] },
    extract: [{ var: 'total', from: 'regex', pattern: 'total=(\\d+)' }],
  });
  const run = (body: Record<string, unknown>, io = {}) =>
    workflowMonitor.check(workflowMonitor.parse(body, undefined, ctx), null, testIo(ctx, io));

  it('runs the steps in order with variables, extracts (json, header, regex) and a total response time', async () => {
    const out = await run({ variables: { base: site.url, user: 'ann' }, steps: [login(), items()] });
    expect(out.error).toBeUndefined();
    expect(out.ok).toBe(true);
    const steps = out.details.steps as {
      name: string;
      ok: boolean;
      statusCode: number;
      responseTimeMs: number;
      extracted: Record<string, string>;
    }[];
    expect(steps.map((s) => [s.name, s.ok, s.statusCode])).toEqual([
      ['Login', true, 200],
      ['Items', true, 200],
    ]);
    // Secret-named variables are masked in the details, like everywhere else (§0.3).
    expect(steps[0]?.extracted).toEqual({ token: '********', uid: '42', session: 's-77' });
    expect(steps[1]?.extracted).toEqual({ total: '17' });
    expect(out.responseTimeMs).toBe(steps[0]!.responseTimeMs + steps[1]!.responseTimeMs);
    expect(site.seen.at(-1)?.path).toBe('/items?id=42');
  });

  it('fails with `step {n} "{name}": {error}` and stops there', async () => {
    const before = site.seen.length;
    const out = await run({ variables: { base: site.url, user: 'bob' }, steps: [login(), items()] });
    expect(out).toMatchObject({ ok: false, error: 'step 1 "Login": status 403 not in 200-299' });
    expect(site.seen.length).toBe(before + 1);
    expect((out.details.steps as unknown[]).length).toBe(1);
  });

  it('fails on an undefined variable before sending the step', async () => {
    const out = await run({ variables: { base: site.url }, steps: [login()] });
    expect(out.error).toBe('step 1 "Login": variable "user" is not defined');
    expect(out.details.steps).toEqual([
      { name: 'Login', ok: false, responseTimeMs: 0, error: 'variable "user" is not defined', extracted: {} },
    ]);
  });

  it('fails with `extract {var}: no match`', async () => {
    const out = await run({
      variables: { base: site.url },
      steps: [
        {
          url: '{{base}}/x',
          extract: [
            { var: 'authToken', from: 'json', path: '$.path' },
            { var: 'missing', from: 'json', path: '$.nope' },
          ],
        },
      ],
    });
    expect(out.error).toBe('step 1 "step 1": extract missing: no match');
    // What was extracted before the failure is shown, secrets masked.
    expect((out.details.steps as { extracted: unknown }[])[0]?.extracted).toEqual({ authToken: '********' });
    const regex = await run({
      variables: { base: site.url },
      steps: [{ url: '{{base}}/x', extract: [{ var: 'n', from: 'regex', pattern: '/ZZZ(\\d)/i' }] }],
    });
    expect(regex.error).toBe('step 1 "step 1": extract n: no match');
  });

  it('applies step assertions with the http-monitor texts', async () => {
    const out = await run({
      steps: [
        { url: `${site.url}/x` },
        { name: 'slow', url: `${site.url}/slow`, assert: { maxResponseMs: 5 } },
      ],
    });
    expect(out.error).toMatch(/^step 2 "slow": response took \d+ ms \(limit 5 ms\)$/);
    const json = await run({
      steps: [{ url: `${site.url}/x`, assert: { json: [{ path: '$.path', op: 'eq', value: '/y' }] } }],
    });
    expect(json.error).toBe('step 1 "step 1": json $.path: expected eq "/y", got "/x"');
  });

  it('reports request failures per step', async () => {
    const out = await run({
      steps: [{ url: `${site.url}/x` }, { name: 'gone', url: 'http://gone.invalid/' }],
    });
    expect(out).toMatchObject({
      ok: false,
      error: 'step 2 "gone": DNS lookup failed: gone.invalid',
      responseTimeMs: null,
    });
  });
});

describe('build-step', () => {
  it('turns a curl command line into a step', () => {
    const step = buildStep({
      curl: `curl -sS -L -k -X PUT 'https://api.test/v1/items?x=1' \\
        -H 'Authorization: Bearer abc' -H "Content-Type: application/json" \\
        -u ann:s3cret --data-raw '{"name":"a b"}'`,
    });
    expect(step).toEqual({
      name: 'PUT api.test/v1/items',
      method: 'PUT',
      url: 'https://api.test/v1/items?x=1',
      headers: { Authorization: 'Bearer abc', 'Content-Type': 'application/json' },
      body: '{"name":"a b"}',
      basicAuth: { username: 'ann', password: 's3cret' },
      expectedStatus: ['200-299'],
      followRedirects: true,
      ignoreTlsErrors: true,
      assert: { maxResponseMs: null, bodyContains: null, bodyNotContains: null, json: [] },
      extract: [],
    });
  });

  it('takes the first URL of a description as a GET step (no assistant provider is configured)', () => {
    const step = buildStep({ description: 'Check that https://shop.test/cart?id=3, then log in.' });
    expect(step).toMatchObject({ method: 'GET', url: 'https://shop.test/cart?id=3', followRedirects: false });
  });

  it('answers 400 `curl: no URL found` when nothing is usable', () => {
    expect(() => buildStep({ curl: 'curl -s -H "A: b"' })).toThrow('curl: no URL found');
    expect(() => buildStep({ description: 'log in and look at the cart' })).toThrow('curl: no URL found');
    expect(() => buildStep({})).toThrow('curl: no URL found');
    expect(() => buildStep({ curl: 'curl -X BREW https://pot.test' })).toThrow(
      /^curl: -X BREW is not a supported method/,
    );
  });
});
