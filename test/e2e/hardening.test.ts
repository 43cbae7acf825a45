import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceToken, makeChannel, sendMessage } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  type BrowserHandle,
  ensureRendererBuilt,
  hasChromium,
  launchBrowser,
  signInToInbox,
} from './browser';

/**
 * Two things the UI must hold on its own, without the server's Content-Security-Policy: the standing
 * warning of LAN mode (plain HTTP on the network), and the Markdown sanitiser against images that would
 * be fetched, links that browsers read as another host, and attributes that clobber the DOM.
 */
const banner = (page: Page) => page.getByRole('complementary', { name: 'Security warning' });

describe.skipIf(!hasChromium)('LAN mode and Markdown hardening in Chromium', () => {
  let lan: TestServer;
  let local: TestServer;
  let b: BrowserHandle;

  beforeAll(async () => {
    ensureRendererBuilt();
    // Tests listen on loopback only: LAN mode is switched on with the host kept at 127.0.0.1.
    lan = await startTestServer({ config: { lan: true } });
    local = await startTestServer();
    b = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await b?.close();
    await lan?.close();
    await local?.close();
  });

  it('shows the plain-HTTP warning banner on every screen when the server runs in LAN mode', async () => {
    const { context, page } = await b.newPage();
    await page.goto(lan.url);
    await expect.poll(() => banner(page).textContent()).toMatch(/^Not encrypted: .*plain HTTP \(LAN mode\)/);
    await signInToInbox(page, lan.url, lan.admin);
    await expect.poll(() => banner(page).isVisible()).toBe(true);
    await page.getByRole('link', { name: 'Channels', exact: true }).click();
    await page.getByRole('heading', { name: 'Channels' }).first().waitFor();
    expect(await banner(page).isVisible()).toBe(true);
    await page.goto(`${lan.url}/pair#code=${'x'.repeat(22)}`);
    await expect.poll(() => banner(page).isVisible()).toBe(true);
    await context.close();
  });

  it('shows no banner when the server listens on loopback only', async () => {
    const { context, page } = await b.newPage();
    // The banner depends on /serverinfo: wait for its answer before saying it is absent.
    const asked = page.waitForResponse((r) => r.url().endsWith('/serverinfo'));
    await page.goto(local.url);
    expect(await (await asked).json()).not.toHaveProperty('plainHttpLan');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await banner(page).count()).toBe(0);
    await signInToInbox(page, local.url, local.admin);
    expect(await banner(page).count()).toBe(0);
    await context.close();
  });

  /** [text, href] of each link; null for a link whose href was dropped. */
  type Links = [string, string | null][];
  const PAYLOADS: { name: string; md: string; links: Links; text?: RegExp }[] = [
    {
      name: 'markdown image',
      md: '![logo](https://evil.example/x.png)',
      links: [['external image: logo', 'https://evil.example/x.png']],
    },
    {
      name: 'html image with a handler',
      md: '<img src="https://evil.example/y.png" alt="y" onerror="window.pwned=1">',
      links: [['external image: y', 'https://evil.example/y.png']],
    },
    {
      name: 'protocol-relative image',
      md: '<img src="//evil.example/p.png" alt="p">',
      links: [],
      text: /^\[image removed: p\]$/,
    },
    {
      name: 'data: png image',
      md: '![dot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==)',
      links: [],
      text: /^\[image removed: dot\]$/,
    },
    {
      name: 'data: svg image',
      md: '<img src="data:image/svg+xml,%3Csvg%20xmlns=%22http://www.w3.org/2000/svg%22/%3E">',
      links: [],
      text: /^\[image removed\]$/,
    },
    {
      name: 'picture with srcset',
      md: '<picture><source srcset="https://evil.example/s.png"><img src="https://evil.example/s2.png" alt="pic"></picture>',
      links: [['external image: pic', 'https://evil.example/s2.png']],
    },
    { name: 'svg image', md: '<svg><image href="https://evil.example/v.png"/></svg>svg gone', links: [] },
    {
      name: 'video poster',
      md: '<video poster="https://evil.example/poster.png"></video>video gone',
      links: [],
    },
    {
      name: 'table background',
      md: '<table background="https://evil.example/t.png"><tr><td>cell</td></tr></table>',
      links: [],
    },
    { name: 'backslash link', md: '<a href="/\\evil.example/b">b</a>', links: [['b', null]] },
    { name: 'protocol-relative link', md: '<a href="//evil.example/c">c</a>', links: [['c', null]] },
    {
      name: 'tab-hidden protocol-relative link',
      md: '<a href="/&#9;/evil.example/d">d</a>',
      links: [['d', null]],
    },
    { name: 'double backslash link', md: '<a href="\\\\evil.example/e">e</a>', links: [['e', null]] },
    {
      name: 'backslash in a markdown link',
      md: '[m](/\\evil.example/m)',
      links: [['m', '/%5Cevil.example/m']],
    },
    { name: 'javascript link', md: '[f](javascript:alert(1))', links: [['f', null]] },
    {
      name: 'clobbering attributes',
      md:
        '<p id="getElementById" class="lan-warning" style="color:red" name="x" data-x="1" aria-hidden="true">g</p>' +
        '<a id="location" name="cookie" class="x" href="https://example.com/ok">ok</a>',
      links: [['ok', 'https://example.com/ok']],
    },
    {
      name: 'form clobbering',
      md: '<form name="cookie"><input name="attributes"></form>form gone',
      links: [],
    },
    {
      name: 'links that stay',
      md: '[in](/inbox) [web](https://example.com/w) [mail](mailto:a@example.com) [top](#top)',
      links: [
        ['in', '/inbox'],
        ['web', 'https://example.com/w'],
        ['mail', 'mailto:a@example.com'],
        ['top', '#top'],
      ],
    },
  ];
  const ALLOWED_ATTRS = ['href', 'title', 'target', 'rel', 'align', 'start', 'colspan', 'rowspan', 'open'];

  it('Markdown drops images, other-host links and id/class/style attributes for every payload', async () => {
    const device = await deviceToken(local, local.admin, 'sender');
    const channel = await makeChannel(local, device.token, { name: 'Payloads' });
    const ids: number[] = [];
    for (const [i, p] of PAYLOADS.entries()) {
      const m = await sendMessage(local, channel.token, {
        title: `payload ${i}: ${p.name}`,
        message: p.md,
        extras: { 'client::display': { contentType: 'text/markdown' } },
      });
      ids.push(m.id);
    }
    const { context, page } = await b.newPage();
    const hosts = new Set<string>();
    page.on('request', (r) => hosts.add(new URL(r.url()).hostname));
    await signInToInbox(page, local.url, local.admin);
    await page.getByRole('heading', { name: `payload ${PAYLOADS.length - 1}: links that stay` }).waitFor();
    await page.getByRole('heading', { name: 'payload 0: markdown image' }).waitFor();
    const rendered = await page.evaluate(
      (list) =>
        list.map((id) => {
          const md = document.querySelector(`#message-${id} .markdown`)!;
          const all = [...md.querySelectorAll('*')];
          return {
            html: md.innerHTML,
            text: (md.textContent ?? '').trim(),
            tags: [...new Set(all.map((e) => e.tagName.toLowerCase()))],
            attrs: [...new Set(all.flatMap((e) => [...e.attributes].map((a) => a.name)))],
            links: [...md.querySelectorAll('a')].map((a) => [a.textContent, a.getAttribute('href')]),
            rels: [...md.querySelectorAll('a')].map((a) => `${a.target} ${a.rel}`),
          };
        }),
      ids,
    );
    for (const [i, p] of PAYLOADS.entries()) {
      const r = rendered[i]!;
      const where = `${p.name}: ${r.html}`;
      expect(r.links, where).toEqual(p.links);
      for (const tag of ['img', 'picture', 'source', 'svg', 'image', 'video', 'form', 'input'])
        expect(r.tags, where).not.toContain(tag);
      expect(
        r.attrs.filter((a) => !ALLOWED_ATTRS.includes(a)),
        where,
      ).toEqual([]);
      expect(new Set(r.rels), where).toEqual(
        new Set(r.links.length ? ['_blank noopener noreferrer nofollow'] : []),
      );
      if (p.text) expect(r.text, where).toMatch(p.text);
    }
    expect(rendered[PAYLOADS.findIndex((p) => p.name === 'table background')]!.text).toBe('cell');
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect([...hosts].filter((h) => h !== '127.0.0.1')).toEqual([]);
    await context.close();
  });
});
