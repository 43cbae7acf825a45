import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, type FakeTarget, startTarget } from '../../../../test/helpers/fake-targets';
import type { AppContext } from '../../../context';
import type { ApiError } from '../../../http/errors';
import { closeChromium, NO_CHROMIUM, SYSTEM_CHROMIUM } from '../../../lib/chromium';
import { ManualClock } from '../../../lib/clock';
import { memoryLogger } from '../../../lib/log';
import type { CheckIo } from '../kind';
import { type ContentSettings, type ContentState, contentMonitor as kind } from './content';

/** The kind reads config (Chromium, private targets), the logger and the monitorNet hooks of its context. */
function fakeCtx(config: Record<string, unknown> = {}): AppContext {
  return {
    config: { blockPrivateTargets: false, ...config },
    log: memoryLogger(),
    clock: new ManualClock(),
    due: { poke() {} },
  } as unknown as AppContext;
}

const ctx = fakeCtx();
let page = '<p id="price">€ 10</p>';
let site: FakeTarget;
beforeAll(async () => {
  site = await startTarget((req, res) => {
    if (req.url === '/page') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<html><body>${page}</body></html>`);
    } else if (req.url === '/scripted') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(
        '<html><body><div id="out">loading</div><script>document.getElementById("out").textContent = "rendered " + (6 * 7)</script></body></html>',
      );
    } else {
      res.writeHead(503);
      res.end('<p id="price">maintenance</p>');
    }
  });
});
afterAll(async () => {
  await site.close();
  await closeChromium(ctx);
});

function io(over: Partial<CheckIo> = {}): CheckIo {
  return {
    ctx,
    name: 'Lamp price',
    signal: AbortSignal.timeout(10_000),
    timeoutSec: 10,
    startedAt: 1_000_000,
    allowPrivate: true,
    test: false,
    ...over,
  };
}

function settings(over: Record<string, unknown> = {}): ContentSettings {
  return kind.parse({ url: `${site.url}/page`, selector: '#price', ...over }, undefined, ctx);
}

function error400(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect((e as ApiError).status).toBe(400);
    return (e as ApiError).description;
  }
  throw new Error('expected a 400');
}

describe('content-monitor kind', () => {
  it('parse fills defaults, requires url and selector, and checks rule, value and render', () => {
    expect(settings()).toEqual({
      url: `${site.url}/page`,
      selector: '#price',
      rule: 'changed',
      value: null,
      render: 'html',
    });
    expect(error400(() => kind.parse({ selector: 'p' }, undefined, ctx))).toBe('url: required');
    expect(error400(() => kind.parse({ url: 'ftp://x/', selector: 'p' }, undefined, ctx))).toBe(
      'url: must be an http or https URL',
    );
    expect(error400(() => kind.parse({ url: 'http://x/' }, undefined, ctx))).toBe('selector: required');
    expect(error400(() => settings({ selector: 'div[' }))).toMatch(/^selector: invalid CSS selector/);
    expect(error400(() => settings({ rule: 'equals' }))).toBe(
      'rule: must be one of changed, contains, notContains, matches, numberAbove, numberBelow',
    );
    expect(error400(() => settings({ rule: 'contains' }))).toBe('value: required for rule contains');
    expect(error400(() => settings({ rule: 'matches', value: '/(/' }))).toMatch(
      /^value: invalid regular expression/,
    );
    expect(error400(() => settings({ render: 'pdf' }))).toBe('render: must be html or browser');
  });

  it('parse of an update keeps absent fields and validates value against the new rule', () => {
    const prev = settings({ rule: 'contains', value: 'in stock' });
    expect(kind.parse({ selector: '.stock' }, prev, ctx)).toEqual({ ...prev, selector: '.stock' });
    expect(error400(() => kind.parse({ rule: 'numberAbove' }, prev, ctx))).toBe('value: must be a number');
    expect(kind.parse({ rule: 'numberAbove', value: 5 }, prev, ctx)).toMatchObject({
      rule: 'numberAbove',
      value: 5,
    });
    // changed takes no value: a stored one does not linger
    expect(kind.parse({ rule: 'changed' }, prev, ctx)).toMatchObject({ rule: 'changed', value: null });
  });

  it('changed: the first check stores a baseline, a different text sends a changed event and stays up', async () => {
    page = '<p id="price">€ 10</p>';
    const s = settings();
    const first = await kind.check(s, null, io());
    expect(first).toEqual({
      ok: true,
      responseTimeMs: expect.any(Number),
      details: { text: '€ 10', number: 10, matched: 1 },
      state: { lastValue: '€ 10', lastChangedAt: null, basis: expect.any(String) },
    });
    const same = await kind.check(s, first.state!, io({ startedAt: 2_000_000 }));
    expect(same.event).toBeUndefined();
    expect(same.state).toEqual(first.state);

    page = '<p id="price">€ 12</p>';
    const changed = await kind.check(s, same.state!, io({ startedAt: 3_000_000 }));
    expect(changed.ok).toBe(true);
    expect(changed.event).toEqual({
      event: 'changed',
      title: 'Lamp price changed',
      message: '€ 10\n→\n€ 12',
    });
    expect(changed.state).toMatchObject({ lastValue: '€ 12', lastChangedAt: 3_000_000 });
    expect(kind.present(s, changed.state!)).toMatchObject({
      lastValue: '€ 12',
      lastChangedAt: '1970-01-01T00:50:00.000Z',
    });
  });

  it('changed: a new selector or URL starts a new baseline instead of reporting a change', async () => {
    page = '<p id="price">€ 10</p><p id="old">€ 99</p>';
    const before = await kind.check(settings({ selector: '#old' }), null, io());
    const after = await kind.check(settings(), before.state as ContentState, io());
    expect(after.event).toBeUndefined();
    expect(after.state).toMatchObject({ lastValue: '€ 10', lastChangedAt: null });
  });

  it('fails with the §2.3 texts: no match, rule failures, status and fetch errors', async () => {
    page = '<p id="price">Sold out</p>';
    const state = (await kind.check(settings(), null, io())).state!;
    const none = await kind.check(settings({ selector: '#nope' }), state, io());
    expect(none).toMatchObject({
      ok: false,
      error: 'selector matched nothing',
      details: { text: '', matched: 0 },
    });
    expect(none.state).toBeUndefined(); // the baseline is kept
    expect((await kind.check(settings({ rule: 'contains', value: 'In stock' }), null, io())).error).toBe(
      'text does not contain "In stock"',
    );
    expect((await kind.check(settings({ rule: 'numberBelow', value: 20 }), null, io())).error).toBe(
      'no number in "Sold out"',
    );
    const down = await kind.check(settings({ url: `${site.url}/down` }), null, io());
    expect(down).toMatchObject({ ok: false, error: 'status 503 not in 200-299' });
    const refused = await kind.check(
      settings({ url: `http://127.0.0.1:${await closedPort()}/` }),
      null,
      io(),
    );
    expect(refused).toMatchObject({ ok: false, error: 'connection refused' });
  });

  it('render browser: cannot run without Chromium (unknown, not down)', async () => {
    const noChromium = fakeCtx({ chromiumPath: '/nonexistent/chromium' });
    const out = await kind.check(settings({ render: 'browser' }), null, io({ ctx: noChromium }));
    expect(out).toEqual({
      ok: false,
      error: NO_CHROMIUM,
      cannotRun: true,
      responseTimeMs: null,
      details: { text: '', matched: 0 },
    });
  });

  it.skipIf(!existsSync(SYSTEM_CHROMIUM))(
    'render browser: extracts the text a script wrote, which a static fetch never sees',
    async () => {
      const s = settings({
        url: `${site.url}/scripted`,
        selector: '#out',
        rule: 'contains',
        value: 'rendered 42',
      });
      expect(await kind.check(s, null, io())).toMatchObject({
        ok: false,
        error: 'text does not contain "rendered 42"',
      });
      const rendered = await kind.check({ ...s, render: 'browser' }, null, io());
      expect(rendered).toMatchObject({ ok: true, details: { text: 'rendered 42', number: 42, matched: 1 } });
      const refused = await kind.check(
        { ...s, render: 'browser', url: `http://127.0.0.1:${await closedPort()}/` },
        null,
        io(),
      );
      expect(refused).toMatchObject({ ok: false, error: 'connection refused' });
      const blocked = await kind.check({ ...s, render: 'browser' }, null, io({ allowPrivate: false }));
      expect(blocked).toMatchObject({ ok: false, error: 'private address refused' });
    },
    60_000,
  );
});
