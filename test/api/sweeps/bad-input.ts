import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiToken, deviceToken, makeChannel, makeUser, sudo } from '../../helpers/factories';
import { fakeMonitorKind } from '../../helpers/fake-monitor-kind';
import { type MountedRoute, mountedRoutes } from '../../helpers/routes';
import { startTestServer, type TestServer } from '../../helpers/test-server';
import { eachBounded, expectShardsCoverEveryRoute, shardFromFile, shardRoutes } from './shards';

/**
 * "Bad input gets a clear 4xx with the error body, never a 500": every route a family mounts gets
 * malformed ids, bodies and queries from a signed-in admin with sudo open (so the request gets past
 * authentication to the validation it is meant to test). A route that can change anything (any method
 * but GET, and any route that takes a token: a webhook or router GET sends) gets a fresh user, so a
 * route that deletes its caller, its channel or its tokens cannot weaken the checks of the next one; the
 * reads share one, checked unchanged in the store before every use.
 *
 * Split into shards (./shards.ts): `test/api/bad-input.shard-<n>.test.ts` each call `badInputSweep`.
 */

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
    // The assistant (issue 19).
    threadId: 'x',
    lang: 'klingon',
  },
  { message: 'x'.repeat(70_000), title: 'y'.repeat(10_000), name: 'z'.repeat(10_000) },
  // Email inbox rules: patterns that do not compile, or of the wrong type (issue 18).
  { match: { from: '/(/', subject: 7, body: { re: 'x' } }, localPart: '-x@y', appid: 1 },
];

/** Objects nested far deeper than any recursive walk (JSON.stringify, zod) survives. */
const DEEP = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;

interface Body {
  body: string;
  type: string;
  encoding?: string;
}

/**
 * Raw bodies that are not JSON at all, claim a type the route does not take, nest too deep, or claim a
 * Content-Encoding their bytes do not have (each of the last two answered 500 before issue 21).
 */
const RAW: Body[] = [
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

/**
 * The spec's public routes that need no input (sign-in, reset and /webhook/{token} need a body or a real
 * token, so they answer 4xx here). Logout answers 200 even without a token (spec).
 */
const OPEN = ['GET /gotifyinfo', 'GET /health', 'GET /serverinfo', 'GET /version', 'POST /auth/logout'];
/** A channel key sends (with a body the credentials sweep lacks), reads its own channel and its answers. */
const CHANNEL_KEY_READS = ['GET /ask/pending-answers'];

/** How many requests of one route may be in flight at once (a 2-core machine shared with other files). */
const IN_FLIGHT = 4;
/** A route's requests all answer within this, or the route is reported (no request may hang). */
const ROUTE_TIMEOUT_MS = 60_000;

interface Sent {
  status: number;
  text: string;
  type: string;
}

/** One request; a streaming answer (SSE) is cut off after its status line and headers. */
async function send(
  url: string,
  method: string,
  token: string | undefined,
  body: Body | undefined,
  signal: AbortSignal,
): Promise<Sent> {
  const res = await fetch(url, {
    method,
    headers: {
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
      ...(body ? { 'Content-Type': body.type } : {}),
      ...(body?.encoding ? { 'Content-Encoding': body.encoding } : {}),
    },
    body: body?.body,
    signal,
  });
  const type = res.headers.get('content-type') ?? '';
  if (type.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, text: '', type };
  }
  return { status: res.status, text: await res.text(), type };
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

interface Probe {
  what: string;
  path: string;
  body?: Body;
  token: string;
}

/** Sends one route's probes, at most IN_FLIGHT at once; the problems in the order of the probes. */
async function probeRoute(t: TestServer, route: MountedRoute, probes: Probe[]): Promise<string[]> {
  const signal = AbortSignal.timeout(ROUTE_TIMEOUT_MS);
  const found = await eachBounded(probes, IN_FLIGHT, async (p) => {
    try {
      return problems(route.route, p.what, await send(t.url + p.path, route.method, p.token, p.body, signal));
    } catch (err) {
      return [`${route.route} ${p.what}: no answer (${(err as Error).message})`];
    }
  });
  return found.flat();
}

/** Who calls a route: an admin with sudo open, a channel, a real webhook and a real router. */
interface Caller {
  userId: number;
  device: { id: number; token: string };
  channel: { id: number; token: string };
  hookToken: string;
  routerToken: string;
}

async function newCaller(t: TestServer): Promise<Caller> {
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
  return { userId: u.id, device, channel, hookToken, routerToken };
}

/**
 * Everything of the caller's that the sweep relies on, as stored (bookkeeping such as `last_used` left
 * out): a shared caller is used again only while this is unchanged.
 */
function callerState(t: TestServer, c: Caller): string {
  const db = t.server.ctx.db;
  const rows = (sql: string, id: number) =>
    db
      .all<Record<string, unknown>>(sql, [id])
      .map((r) => Object.entries(r).filter(([k]) => !k.startsWith('last_')));
  return JSON.stringify([
    rows('SELECT * FROM users WHERE id = ?', c.userId),
    rows('SELECT * FROM user_mfa WHERE user_id = ?', c.userId),
    rows('SELECT * FROM devices WHERE id = ?', c.device.id),
    rows('SELECT * FROM sudo_windows WHERE device_id = ?', c.device.id),
    rows('SELECT * FROM channels WHERE id = ?', c.channel.id),
    rows('SELECT * FROM channel_keys WHERE channel_id = ?', c.channel.id),
    rows('SELECT * FROM webhooks WHERE channel_id = ?', c.channel.id),
    rows('SELECT * FROM webhook_routers WHERE user_id = ?', c.userId),
  ]);
}

/** A read: GET (or HEAD) without a token in its path (a webhook or router GET sends a message). */
function isRead(r: MountedRoute): boolean {
  return (r.method === 'GET' || r.method === 'HEAD') && !r.path.includes(':token');
}

/** The probes of one route, for one caller. */
function probesFor(r: MountedRoute, c: Caller): Probe[] {
  const token = r.route.includes(' /router/') ? c.routerToken : c.hookToken;
  const fill = (id: string) => r.fill((p) => (p === ':token' ? token : id));
  const hasBody = r.method !== 'GET' && r.method !== 'HEAD';
  const json = (v: unknown): Body => ({ body: JSON.stringify(v), type: 'application/json' });
  const empty = hasBody ? json({}) : undefined;
  const dev = c.device.token;
  const probes: Probe[] = [];
  if (r.takesParams)
    for (const id of BAD_IDS) probes.push({ what: `id ${id}`, path: fill(id), body: empty, token: dev });
  const own = fill(String(c.channel.id));
  probes.push({ what: 'bad query', path: own + BAD_QUERY, body: empty, token: dev });
  if (hasBody) {
    for (const v of BAD_JSON)
      probes.push({ what: `json ${JSON.stringify(v).slice(0, 40)}`, path: own, body: json(v), token: dev });
    for (const raw of RAW)
      probes.push({ what: `raw ${raw.type} ${raw.encoding ?? ''}`, path: own, body: raw, token: dev });
    // The channel key's routes (POST /message) see the raw bodies too: they got past a device token's 403.
    for (const raw of RAW)
      probes.push({
        what: `key: raw ${raw.type} ${raw.encoding ?? ''}`,
        path: own,
        body: raw,
        token: c.channel.token,
      });
  }
  return probes;
}

/** How many requests a route gets: the sweep asserts it sent every one. */
function expectedProbes(r: MountedRoute): number {
  const hasBody = r.method !== 'GET' && r.method !== 'HEAD';
  return (r.takesParams ? BAD_IDS.length : 0) + 1 + (hasBody ? BAD_JSON.length + 2 * RAW.length : 0);
}

/** Registers the bad-input sweep of the shard named by the calling file (`bad-input.shard-<n>.test.ts`). */
export function badInputSweep(fileUrl: string): void {
  const shard = shardFromFile('bad-input', fileUrl);
  let t: TestServer;
  beforeAll(async () => {
    // A monitor kind whose routes are the engine's (the built-in kinds add theirs when they land).
    t = await startTestServer({ extraFeatures: [fakeMonitorKind().feature] });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('every mounted route is in exactly one bad-input shard, and every route the sweep names is mounted', () => {
    const routes = mountedRoutes(t);
    expect(routes.length).toBeGreaterThan(50);
    expectShardsCoverEveryRoute('bad-input', routes);
    // The credentials sweep compares each shard's answers with these lists cut to the shard: a route
    // that left them unmounted would otherwise go unnoticed.
    const mounted = new Set(routes.map((r) => r.route));
    expect([...OPEN, ...CHANNEL_KEY_READS].filter((r) => !mounted.has(r))).toEqual([]);
  });

  it('every mounted route answers malformed ids, bodies and queries with a 4xx error body, never a 5xx', async () => {
    const routes = shardRoutes('bad-input', shard, mountedRoutes(t));
    const found: string[] = [];
    let requests = 0;
    let shared: { caller: Caller; state: string } | undefined;
    for (const route of routes) {
      let caller: Caller;
      if (isRead(route)) {
        if (!shared || callerState(t, shared.caller) !== shared.state) {
          const fresh = await newCaller(t);
          shared = { caller: fresh, state: callerState(t, fresh) };
        }
        caller = shared.caller;
      } else caller = await newCaller(t);
      const probes = probesFor(route, caller);
      requests += probes.length;
      found.push(...(await probeRoute(t, route, probes)));
    }
    expect(found).toEqual([]);
    // Every probe of every route of the shard was sent (the shards together: more than 7000 requests).
    expect(requests).toBe(routes.reduce((n, r) => n + expectedProbes(r), 0));
  }, 120_000);

  it('every mounted route answers missing, garbage and wrong-kind credentials with a 4xx error body; only the public ones answer without', async () => {
    const routes = shardRoutes('bad-input', shard, mountedRoutes(t));
    const inShard = (list: string[]) => list.filter((r) => routes.some((x) => x.route === r));
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
    const signal = AbortSignal.timeout(ROUTE_TIMEOUT_MS * 2);
    for (const { route, method, fill } of routes) {
      const path = fill(() => String(channel.id));
      const body = method === 'GET' ? undefined : { body: '{}', type: 'application/json' };
      const answers = await eachBounded(credentials, IN_FLIGHT, ([, token]) =>
        send(t.url + path, method, token, body, signal),
      );
      for (const [i, r] of answers.entries()) {
        const what = credentials[i]![0];
        found.push(...problems(route, what, r));
        if (r.status < 400) accepted[what]!.push(route);
      }
    }
    expect(found).toEqual([]);
    // Each list cut to this shard: the shards together are every route (checked above).
    const open = inShard(OPEN);
    expect(accepted['no credentials']).toEqual(open);
    expect(accepted['a garbage token']).toEqual(open);
    expect(accepted['a well-formed unknown device token']).toEqual(open);
    // A channel key sends (with a body this one lacks), reads its own channel and its questions' answers:
    // nothing else.
    expect(accepted['a channel key']).toEqual(inShard([...OPEN, ...CHANNEL_KEY_READS].sort()));
    // A read-only API token changes nothing.
    const writes = accepted['a read-only API token']!.filter(
      (r) => !r.startsWith('GET ') && !OPEN.includes(r),
    );
    expect(writes).toEqual([]);
  }, 60_000);
}
