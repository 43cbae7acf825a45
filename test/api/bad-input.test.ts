import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiToken, deviceToken, makeChannel, makeUser, sudo } from '../helpers/factories';
import { fakeMonitorKind } from '../helpers/fake-monitor-kind';
import { mountedRoutes } from '../helpers/routes';
import { startTestServer, type TestServer } from '../helpers/test-server';

/**
 * "Bad input gets a clear 4xx with the error body, never a 500": every route a family mounts gets
 * malformed ids, bodies and queries from a signed-in admin with sudo open (so the request gets past
 * authentication to the validation it is meant to test). Each route gets a fresh user, so a route that
 * deletes its caller cannot weaken the checks of the next one.
 */
let t: TestServer;
beforeAll(async () => {
  // A monitor kind whose routes are the engine's (the built-in kinds add theirs when they land).
  t = await startTestServer({ extraFeatures: [fakeMonitorKind().feature] });
});
afterAll(async () => {
  await t?.close();
});

/** Path parameter values that are not a usable id. */
const BAD_IDS = ['abc', '-1', '0', '1.5', '1e3', '99999999999999999999999', '%20', '%E2%82%AC'];

/** JSON bodies of the wrong shape, plus fields every family uses, with the wrong types. */
const BAD_JSON: unknown[] = [
  null,
  [],
  'text',
  42,
  {},
  {
    name: 42,
    title: [],
    message: { nested: true },
    priority: 'high',
    ids: 'all',
    id: 'x',
    appId: -3,
    parentId: 'root',
    tags: 'ops',
    sortKey: {},
    defaultPriority: 99,
    email: 7,
    password: [],
    pass: null,
    code: 123456,
    token: {},
    method: 'telepathy',
    enabled: 'yes',
    canRead: 'no',
    canWrite: 2,
    expiresAt: 'soon',
    access: 'everything',
    plan: 'platinum',
    permission: 'root',
    mode: 'loud',
    deliveryConfig: 'email',
    extras: 'x',
    url: 'javascript:alert(1)',
    // Verified hosts and port scans (issue 13).
    host: 42,
    ports: { from: 1 },
    concurrency: 'many',
    timeoutMs: -1,
    notes: [],
    port: '22',
    httpPort: 'eighty',
    intervalSec: 'often',
    // The webhook router (issue 17).
    pathPattern: 42,
    match: [{ path: 7, op: 'equals' }, 'x'],
    defaultAppid: 'inbox',
    position: -1,
    save: 'yes',
    // Email inboxes (issue 18).
    localPart: 42,
    paused: 'no',
    action: 'forward',
    inboxId: 'x',
  },
  { message: 'x'.repeat(70_000), title: 'y'.repeat(10_000), name: 'z'.repeat(10_000) },
  // Email inbox rules: patterns that do not compile, or of the wrong type (issue 18).
  { match: { from: '/(/', subject: 7, body: { re: 'x' } }, localPart: '-x@y', appid: 1 },
];

/** Objects nested far deeper than any recursive walk (JSON.stringify, zod) survives. */
const DEEP = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;

/**
 * Raw bodies that are not JSON at all, claim a type the route does not take, nest too deep, or claim a
 * Content-Encoding their bytes do not have (each of the last two answered 500 before issue 21).
 */
const RAW: { body: string; type: string; encoding?: string }[] = [
  { body: '{"message": ', type: 'application/json' },
  { body: '\u0000\u0001\u0002', type: 'application/json' },
  { body: 'message=hi&priority=high', type: 'application/x-www-form-urlencoded' },
  { body: '--x\r\nbroken multipart', type: 'multipart/form-data; boundary=x' },
  { body: '<xml/>', type: 'text/xml' },
  { body: '{"message": "x", "priority": 1e309, "expiresAt": -1e309, "id": 1e400}', type: 'application/json' },
  {
    body: '{"__proto__": {"admin": true}, "constructor": {"prototype": {"admin": true}}}',
    type: 'application/json',
  },
  { body: `${'['.repeat(5000)}${']'.repeat(5000)}`, type: 'application/json' },
  { body: '{"message": "x"}', type: 'application/json; charset=utf-16' },
  {
    body: `{"message": "x", "name": "n", "extras": ${DEEP}, "deliveryConfig": ${DEEP}}`,
    type: 'application/json',
  },
  { body: '{"message": "x"}', type: 'application/json', encoding: 'gzip' },
  { body: '{"message": "x"}', type: 'application/json', encoding: 'deflate' },
  { body: '{"message": "x"}', type: 'application/json', encoding: 'bogus' },
  { body: 'message=x', type: 'application/x-www-form-urlencoded', encoding: 'br' },
];

const BAD_QUERY =
  '?limit=abc&limit=5&since=-1&recursive=maybe&q=&before=x&after=%ZZ&page=-2&appId=foo&appId=1e999&tags=&token=x&inboxId=-1&appid=x';

/** Public pages that answer HTML (the subscribe route only to a form post). */
const HTML_PAGES = new Set([
  'GET /status/:slug',
  'POST /status/:slug/subscribe',
  'GET /status-subscribe/verify',
  'GET /status-subscribe/unsub',
  // The signed answer link of questions (issue 16): its 400/409/410 are pages unless JSON is asked for.
  'GET /a/answer',
]);

interface Sent {
  status: number;
  text: string;
  type: string;
}

/** One request; a streaming answer (SSE) is cut off after its status line and headers. */
async function send(
  method: string,
  path: string,
  token: string | undefined,
  body?: { body: string; type: string; encoding?: string },
) {
  const res = await fetch(t.url + path, {
    method,
    headers: {
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
      ...(body ? { 'Content-Type': body.type } : {}),
      ...(body?.encoding ? { 'Content-Encoding': body.encoding } : {}),
    },
    body: body?.body,
    signal: AbortSignal.timeout(10_000),
  });
  const type = res.headers.get('content-type') ?? '';
  if (type.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, text: '', type };
  }
  return { status: res.status, text: await res.text(), type } satisfies Sent;
}

function problems(route: string, what: string, r: Sent): string[] {
  if (r.status === 501) return []; // a spec endpoint no family builds yet: said so with the error body
  if (r.status >= 500) return [`${route} ${what}: ${r.status} ${r.text.slice(0, 200)}`];
  if (r.status < 400) return [];
  // The public pages the spec answers in HTML, their errors included (docs/api.md, "Status pages").
  if (HTML_PAGES.has(route) && r.type.startsWith('text/html')) return [];
  if (!r.type.startsWith('application/json'))
    return [`${route} ${what}: ${r.status} answered ${r.type || 'no type'}, not the JSON error body`];
  const b = JSON.parse(r.text) as { error?: unknown; errorCode?: unknown; errorDescription?: unknown };
  if (typeof b.error !== 'string' || b.errorCode !== r.status || typeof b.errorDescription !== 'string')
    return [`${route} ${what}: ${r.status} with a body that is not the error body: ${r.text.slice(0, 200)}`];
  return [];
}

it('every mounted route answers malformed ids, bodies and queries with a 4xx error body, never a 5xx', async () => {
  const found: string[] = [];
  let requests = 0;
  const routes = mountedRoutes(t);
  expect(routes.length).toBeGreaterThan(50);
  for (const { route, method, takesParams, fill: fillWith } of routes) {
    const u = makeUser(t, { admin: true });
    const device = await deviceToken(t, u, 'fuzz');
    await sudo(t, device, u.password);
    const channel = await makeChannel(t, device.token);
    // A real public webhook, so /webhook/:token gets past the token to reading its input.
    const hook = await t.request('POST', `/application/${channel.id}/webhook`, {
      token: device.token,
      json: { name: 'fuzz' },
    });
    const hookToken = String((hook.body as { url: string }).url.split('/').pop());
    // And a real webhook router, so /router/:token/... gets past the token to reading its body.
    const router = await t.request('GET', '/webhook-router', { token: device.token });
    const routerToken = String((router.body as { token: string }).token);
    const token = route.includes(' /router/') ? routerToken : hookToken;
    const fill = (id: string) => fillWith((p) => (p === ':token' ? token : id));
    const hasBody = method !== 'GET' && method !== 'HEAD';
    const check = async (what: string, path: string, body?: (typeof RAW)[number], token = device.token) => {
      requests++;
      found.push(...problems(route, what, await send(method, path, token, body)));
    };
    const json = (v: unknown) => ({ body: JSON.stringify(v), type: 'application/json' });

    if (takesParams)
      for (const id of BAD_IDS) await check(`id ${id}`, fill(id), hasBody ? json({}) : undefined);
    const own = fill(String(channel.id));
    await check('bad query', own + BAD_QUERY, hasBody ? json({}) : undefined);
    if (hasBody) {
      for (const v of BAD_JSON) await check(`json ${JSON.stringify(v).slice(0, 40)}`, own, json(v));
      for (const raw of RAW) await check(`raw ${raw.type} ${raw.encoding ?? ''}`, own, raw);
      // The channel key's routes (POST /message) see the raw bodies too: they got past a device token's 403.
      for (const raw of RAW)
        await check(`key: raw ${raw.type} ${raw.encoding ?? ''}`, own, raw, channel.token);
    }
  }
  expect(found).toEqual([]);
  expect(requests).toBeGreaterThan(1000);
}, 180_000);

it('every mounted route answers missing, garbage and wrong-kind credentials with a 4xx error body; only the public ones answer without', async () => {
  const owner = makeUser(t);
  const device = await deviceToken(t, owner, 'owner');
  const channel = await makeChannel(t, device.token);
  const readOnly = await apiToken(t, device, { access: 'read' });
  const plain = await deviceToken(t, makeUser(t), 'no sudo, not admin');
  const credentials: [string, string | undefined][] = [
    ['no credentials', undefined],
    ['a garbage token', 'not-a-token'],
    ['a well-formed unknown device token', `C${'x'.repeat(22)}`],
    ['a channel key', channel.token],
    ['a read-only API token', readOnly.token],
    ['a plain user without sudo', plain.token],
  ];
  const found: string[] = [];
  const accepted: Record<string, string[]> = Object.fromEntries(credentials.map(([what]) => [what, []]));
  for (const { route, method, fill } of mountedRoutes(t)) {
    const path = fill(() => String(channel.id));
    const body = method === 'GET' ? undefined : { body: '{}', type: 'application/json' };
    for (const [what, token] of credentials) {
      const r = await send(method, path, token, body);
      found.push(...problems(route, what, r));
      if (r.status < 400) accepted[what]!.push(route);
    }
  }
  expect(found).toEqual([]);
  // The spec's public routes that need no input (sign-in, reset and /webhook/{token} need a body or a
  // real token, so they answer 4xx here). Logout answers 200 even without a token (spec).
  const open = ['GET /gotifyinfo', 'GET /health', 'GET /serverinfo', 'GET /version', 'POST /auth/logout'];
  expect(accepted['no credentials']).toEqual(open);
  expect(accepted['a garbage token']).toEqual(open);
  expect(accepted['a well-formed unknown device token']).toEqual(open);
  // A channel key sends (with a body this one lacks), reads its own channel and its questions' answers:
  // nothing else.
  expect(accepted['a channel key']).toEqual([...open, 'GET /ask/pending-answers'].sort());
  // A read-only API token changes nothing.
  const writes = accepted['a read-only API token']!.filter((r) => !r.startsWith('GET ') && !open.includes(r));
  expect(writes).toEqual([]);
}, 180_000);
