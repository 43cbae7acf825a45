import { load } from 'cheerio';
import { describe, expect, it } from 'vitest';
import { cssIdent, isStableClass, looksGenerated, suggestSelectors } from './suggest';

/** A shop page as frameworks write them: generated ids, CSS-in-JS hashes, utility classes, a table, lists. */
const SHOP = `<!doctype html><html><head><title>Lamp – Shop</title><style>.x{}</style>
<script>window.__STATE__ = {"price": "€ 1,299.00"}</script></head>
<body><div id="__next"><div id=":r3:" class="css-1q2w3e4 flex gap-4">
  <header id="ember1234" class="sc-bdVaJa px-4 md:flex"><h1 class="product-title text-2xl">Desk Lamp Pro</h1></header>
  <section class="Price_box__a1B2c p-2">
    <span class="Price_label__x9Y8z">Price</span>
    <span data-testid="price-total" class="Price_value__k3J4h font-bold">€ 1,299.00</span>
  </section>
  <div id="availability" class="stock">
    <span class="dot green"></span><span>In stock</span>
  </div>
  <table class="specs"><tr><th>Watt</th><td>12 W</td></tr><tr><th>Lumen</th><td>900 lm</td></tr><tr><th>Colour</th><td>Warm white</td></tr></table>
  <ul class="reviews">
    <li class="review"><p>Great lamp</p><span class="stars">5</span></li>
    <li class="review"><p>Too bright for me</p><span class="stars">3</span></li>
  </ul>
  <p class="note">Delivery in 2–3 days</p><p class="note">Free returns</p>
</div></div></body></html>`;

function pick(text: string) {
  return suggestSelectors(SHOP, text);
}

/** Every candidate, run on the page, finds the text it claims. */
function expectVerified(text: string): void {
  const $ = load(SHOP);
  for (const c of pick(text)) {
    expect($(c.selector).length).toBe(c.count);
    expect(c.text.toLowerCase()).toContain(text.toLowerCase());
  }
}

describe('suggest-selector', () => {
  it('prefers a data-testid over hashed CSS-module classes and never offers the hashes', () => {
    const got = pick('1,299.00');
    expect(got[0]).toEqual({ selector: '[data-testid="price-total"]', text: '€ 1,299.00', count: 1 });
    expect(got.every((c) => !c.selector.includes('Price_value__') && !c.selector.includes('font-bold'))).toBe(
      true,
    );
    expectVerified('1,299.00');
  });

  it('uses a stable id as the anchor of the path and skips generated ids', () => {
    const got = pick('in stock');
    expect(got[0]).toEqual({ selector: '#availability > span:nth-of-type(2)', text: 'In stock', count: 1 });
    expect(got.some((c) => c.selector.includes(':r3:') || c.selector.includes('ember1234'))).toBe(false);
    expectVerified('in stock');
  });

  it('takes a stable class when it is unique, skipping hashed and utility classes', () => {
    const got = pick('desk lamp');
    expect(got[0]).toEqual({ selector: 'h1.product-title', text: 'Desk Lamp Pro', count: 1 });
    expectVerified('desk lamp');
  });

  it('reaches a table cell through nth-of-type steps from the nearest unique class', () => {
    const got = pick('900 lm');
    expect(got[0]).toEqual({
      selector: 'table.specs > tbody > tr:nth-of-type(2) > td',
      text: '900 lm',
      count: 1,
    });
    expectVerified('900 lm');
  });

  it('picks the right list item when the class repeats', () => {
    const got = pick('too bright');
    expect(got[0]).toEqual({
      selector: 'ul.reviews > li:nth-of-type(2) > p',
      text: 'Too bright for me',
      count: 1,
    });
    // p.note matches two paragraphs: offered after the unique selectors, with its count
    const notes = pick('free returns');
    expect(notes[0]!.count).toBe(1);
    expect(notes.find((c) => c.selector === 'p.note')).toEqual({
      selector: 'p.note',
      text: 'Delivery in 2–3 days\nFree returns',
      count: 2,
    });
    expectVerified('free returns');
  });

  it('matches whitespace-normalised and case-insensitive, ignores scripts, and answers [] for absent text', () => {
    expect(pick('  DESK\n lamp  pro ')[0]!.selector).toBe('h1.product-title');
    // the price also appears in a <script>: only the rendered span is offered
    expect(pick('€ 1,299.00').every((c) => !c.selector.includes('script'))).toBe(true);
    expect(pick('not on this page')).toEqual([]);
    expect(pick('   ')).toEqual([]);
    expect(pick('lamp').length).toBeLessThanOrEqual(5);
  });

  it('escapes ids that are not plain identifiers', () => {
    const html = '<div id="1st.price"><b>42</b></div>';
    const got = suggestSelectors(html, '42');
    expect(got[0]).toEqual({ selector: '#\\31 st\\.price > b', text: '42', count: 1 });
    expect(cssIdent('a b')).toBe('a\\ b');
  });

  it('tells generated ids and classes from stable ones', () => {
    for (const v of [
      'ember1234',
      ':r3:',
      'react-select-2-input',
      '3f2a9c1e-77aa-4c1e',
      'Price_value__k3J4h',
      'radix-12',
    ])
      expect(looksGenerated(v)).toBe(true);
    for (const v of ['availability', 'price-total', 'main-nav', 'h2', 'col2', 'product__price'])
      expect(looksGenerated(v)).toBe(false);
    for (const c of [
      'css-1q2w3e4',
      'sc-bdVaJa',
      'px-4',
      'md:flex',
      'w-1/2',
      'text-2xl',
      'flex',
      'active',
      '_3xK9a',
    ])
      expect(isStableClass(c)).toBe(false);
    for (const c of ['product-title', 'stock', 'review', 'product__price', 'price'])
      expect(isStableClass(c)).toBe(true);
  });
});
