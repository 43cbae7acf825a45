import { SourceMapGenerator } from 'source-map';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiToken, deviceToken, insertChannelKeyRow, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer;
let dev: string;

const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  t = await startTestServer();
  dev = (await deviceToken(t)).token;
});
afterAll(async () => {
  await t.close();
});

type Script = Record<string, any> & { id: number; token: string; appid: number };

async function script(): Promise<Script> {
  const appid = (await makeChannel(t, dev)).id;
  const res = await t.request('POST', '/web-script', { token: dev, json: { name: 'shop', appid } });
  if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as Script;
}

/**
 * A minified bundle's map: generated column `minCol` (0-based) of line 1 is `CartTotal` at line 12, column 7
 * (0-based) of src/components/Cart.tsx, and `fetchCart` is at line 40, column 2.
 */
function bundleMap(file: string, minCol: number, origLine = 12): string {
  const g = new SourceMapGenerator({ file, sourceRoot: '' });
  g.addMapping({
    generated: { line: 1, column: minCol },
    original: { line: origLine, column: 7 },
    source: 'webpack://shop/src/components/Cart.tsx',
    name: 'CartTotal',
  });
  g.addMapping({
    generated: { line: 1, column: minCol + 500 },
    original: { line: 40, column: 2 },
    source: 'webpack://shop/src/api/cart.ts',
    name: 'fetchCart',
  });
  g.setSourceContent('webpack://shop/src/components/Cart.tsx', 'export function CartTotal() {}');
  return g.toString();
}

function upload(
  s: Script,
  fields: Record<string, string>,
  content: string | null,
  auth: Record<string, unknown> = { token: dev },
) {
  const form = new FormData();
  if (content !== null) form.set('file', new Blob([content], { type: 'application/json' }), 'main.js.map');
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return t.request('POST', `/web-script/${s.id}/sourcemaps`, { ...auth, body: form });
}

async function send(s: Script, events: unknown[]) {
  const res = await t.request('POST', `/script/${s.token}`, {
    body: JSON.stringify({ events, flushReason: 'error' }),
    headers: { 'Content-Type': 'text/plain' },
  });
  if (res.status !== 200) throw new Error(`batch: ${res.status} ${res.text}`);
}

async function issues(s: Script) {
  return (await t.request('GET', `/web-script/${s.id}/issues`, { token: dev })).body as Record<string, any>[];
}

/** A TypeError thrown in a minified bundle (Chrome): `n` is CartTotal, 1-based column in the stack. */
const minified = (file: string, fn: string, col: number, release?: string) => ({
  type: 'error',
  message: "Uncaught TypeError: Cannot read properties of null (reading 'total')",
  stack: `TypeError: Cannot read properties of null (reading 'total')\n    at ${fn} (${file}:1:${col})\n    at ${file}:1:${col + 500}`,
  url: 'https://shop.example/cart',
  ...(release ? { release } : {}),
});

describe('source map records', () => {
  it('POST …/sourcemaps stores a map by device token and lists it; same url and release replaces', async () => {
    const s = await script();
    const url = 'https://shop.example/static/js/main.3f9a2b1c.js';
    const content = bundleMap('main.js', 1233);
    const res = await upload(s, { url: `${url}?v=1`, release: '1.4.0' }, content);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: res.body.id,
      scriptId: s.id,
      url,
      release: '1.4.0',
      size: Buffer.byteLength(content),
      sources: ['webpack://shop/src/components/Cart.tsx', 'webpack://shop/src/api/cart.ts'],
      createdAt: iso(t.clock.now()),
    });
    const again = await upload(s, { url, release: '1.4.0' }, bundleMap('main.js', 1233, 13));
    expect(again.body.id).not.toBe(res.body.id);
    const other = await upload(s, { url: '~/static/js/main.3f9a2b1c.js' }, content);
    expect(other.body).toMatchObject({ url: '~/static/js/main.3f9a2b1c.js', release: null });
    const list = await t.request('GET', `/web-script/${s.id}/sourcemaps`, { token: dev });
    expect(list.body.map((m: { id: number }) => m.id)).toEqual([again.body.id, other.body.id]);
    expect(
      (await t.request('DELETE', `/web-script/${s.id}/sourcemaps/${other.body.id}`, { token: dev })).body,
    ).toEqual({});
    const gone = await t.request('DELETE', `/web-script/${s.id}/sourcemaps/${other.body.id}`, { token: dev });
    expect(gone.status).toBe(404);
    expect(gone.body.errorDescription).toBe('source map not found');
  });

  it('POST …/sourcemaps accepts Basic authentication', async () => {
    const s = await script();
    const res = await upload(s, { url: 'https://shop.example/app.js' }, bundleMap('app.js', 10), {
      basic: t.admin,
    });
    expect(res.status).toBe(200);
  });

  it('POST …/sourcemaps answers 400 file: not a source map, url: required, and refuses read tokens and keys', async () => {
    const s = await script();
    const bad = await upload(s, { url: 'https://shop.example/app.js' }, '{"version": 2, "mappings": ""}');
    expect(bad.status).toBe(400);
    expect(bad.body.errorDescription).toBe('file: not a source map');
    expect((await upload(s, { url: 'https://shop.example/app.js' }, 'not json')).body.errorDescription).toBe(
      'file: not a source map',
    );
    const noFile = await upload(s, { url: 'https://shop.example/app.js' }, null);
    expect(noFile.status).toBe(400);
    expect(noFile.body.errorDescription.startsWith('file: not a source map')).toBe(true);
    const noUrl = await upload(s, {}, bundleMap('a.js', 1));
    expect(noUrl.body.errorDescription).toBe('url: required');
    const relative = await upload(s, { url: 'static/app.js' }, bundleMap('a.js', 1));
    expect(relative.body.errorDescription.startsWith('url:')).toBe(true);
    const read = await apiToken(t, { token: dev }, { access: 'read' });
    expect(
      (await upload(s, { url: 'https://shop.example/a.js' }, bundleMap('a.js', 1), { token: read.token }))
        .status,
    ).toBe(403);
    const key = insertChannelKeyRow(t, s.appid);
    expect(
      (await upload(s, { url: 'https://shop.example/a.js' }, bundleMap('a.js', 1), { token: key })).status,
    ).toBe(403);
  });
});

describe('frames through source maps', () => {
  it('frames are resolved before fingerprinting: two minified builds of the same code make one issue', async () => {
    const s = await script();
    await upload(
      s,
      { url: 'https://shop.example/static/js/main.aaaa1111.js', release: '1.0' },
      bundleMap('main.js', 1233),
    );
    await upload(
      s,
      { url: 'https://shop.example/static/js/main.bbbb2222.js', release: '1.1' },
      bundleMap('main.js', 877),
    );
    await send(s, [minified('https://shop.example/static/js/main.aaaa1111.js', 'n', 1234, '1.0')]);
    await send(s, [minified('https://shop.example/static/js/main.bbbb2222.js', 'Xe', 878, '1.1')]);
    const list = await issues(s);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      count: 2,
      culprit: 'CartTotal (webpack://shop/src/components/Cart.tsx:12:8)',
      lastRelease: '1.1',
    });
  });

  it('the map of the event release wins over another release of the same url; ~/path matches any host', async () => {
    const s = await script();
    const file = 'https://cdn.shop.example/static/js/main.js';
    await upload(s, { url: file, release: '2.0' }, bundleMap('main.js', 99, 20));
    await upload(s, { url: file, release: '1.0' }, bundleMap('main.js', 99, 10));
    await send(s, [minified(`${file}?cache=1`, 'a', 100, '1.0')]);
    expect((await issues(s))[0]!.culprit).toBe('CartTotal (webpack://shop/src/components/Cart.tsx:10:8)');

    const other = await script();
    await upload(other, { url: '~/static/js/main.js' }, bundleMap('main.js', 99, 33));
    await send(other, [minified('https://staging.shop.example/static/js/main.js', 'a', 100, '9.9')]);
    expect((await issues(other))[0]!.culprit).toBe('CartTotal (webpack://shop/src/components/Cart.tsx:33:8)');
  });

  it('frames without a map stay as they are, and a deleted map stops resolving', async () => {
    const s = await script();
    const file = 'https://shop.example/static/js/main.cccc3333.js';
    const m = await upload(s, { url: file }, bundleMap('main.js', 1233));
    await t.request('DELETE', `/web-script/${s.id}/sourcemaps/${m.body.id}`, { token: dev });
    await send(s, [minified(file, 'n', 1234)]);
    expect((await issues(s))[0]!.culprit).toBe(`n (${file}:1:1234)`);
  });
});

describe('the stack of the issue view', () => {
  it('…/breadcrumbs answers every frame: original positions where a map covers them, libraries marked', async () => {
    const s = await script();
    const file = 'https://shop.example/static/js/main.dddd4444.js';
    await upload(s, { url: file, release: '3.0' }, bundleMap('main.js', 1233));
    await send(s, [
      {
        ...minified(file, 'n', 1234, '3.0'),
        stack: [
          "TypeError: Cannot read properties of null (reading 'total')",
          `    at n (${file}:1:1234)`,
          `    at ${file}:1:1734`,
          '    at Ki (https://cdn.example/react-dom.production.min.js:2:64231)',
          '    at x (chrome-extension://abcdef/inject.js:1:10)',
        ].join('\n'),
      },
    ]);
    const [issue] = await issues(s);
    const res = await t.request('GET', `/web-script/${s.id}/issues/${issue!.id}/breadcrumbs`, { token: dev });
    expect(res.status).toBe(200);
    expect(res.body.frames).toEqual([
      {
        fn: 'n',
        file,
        line: 1,
        col: 1234,
        inApp: true,
        resolved: true,
        original: { file: 'webpack://shop/src/components/Cart.tsx', line: 12, col: 8, name: 'CartTotal' },
      },
      {
        fn: null,
        file,
        line: 1,
        col: 1734,
        inApp: true,
        resolved: true,
        original: { file: 'webpack://shop/src/api/cart.ts', line: 40, col: 3, name: 'fetchCart' },
      },
      // Another host's script without a map, and a browser extension: not the page's code.
      {
        fn: 'Ki',
        file: 'https://cdn.example/react-dom.production.min.js',
        line: 2,
        col: 64231,
        inApp: false,
        resolved: false,
      },
      {
        fn: 'x',
        file: 'chrome-extension://abcdef/inject.js',
        line: 1,
        col: 10,
        inApp: false,
        resolved: false,
      },
    ]);
    // The culprit is the resolved top frame, as the list says.
    expect(issue!.culprit).toBe('CartTotal (webpack://shop/src/components/Cart.tsx:12:8)');
  });

  it('a map uploaded after the event resolves the view; a frame mapped into node_modules is a library', async () => {
    const s = await script();
    const file = 'https://shop.example/static/js/vendor.eeee5555.js';
    await send(s, [minified(file, 'n', 100)]);
    const [issue] = await issues(s);
    const url = `/web-script/${s.id}/issues/${issue!.id}/breadcrumbs`;
    expect((await t.request('GET', url, { token: dev })).body.frames[0]).toMatchObject({
      resolved: false,
      inApp: true,
    });
    const g = new SourceMapGenerator({ file: 'vendor.js' });
    g.addMapping({
      generated: { line: 1, column: 99 },
      original: { line: 5, column: 0 },
      source: 'webpack://shop/node_modules/lodash/get.js',
      name: 'get',
    });
    await upload(s, { url: file }, g.toString());
    expect((await t.request('GET', url, { token: dev })).body.frames[0]).toEqual({
      fn: 'n',
      file,
      line: 1,
      col: 100,
      inApp: false,
      resolved: true,
      original: { file: 'webpack://shop/node_modules/lodash/get.js', line: 5, col: 1, name: 'get' },
    });
  });
});
