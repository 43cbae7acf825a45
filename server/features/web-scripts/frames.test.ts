import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { culpritOf, fingerprint, normaliseMessage, parseStack, titleOf, topFrameKey } from './frames';

const REACT_CHROME = `TypeError: Cannot read properties of undefined (reading 'map')
    at ProductList (https://shop.example/static/js/main.3f9a2b1c.js:2:10452)
    at renderWithHooks (https://shop.example/static/js/vendor.8d7e6f5a.js:1:83421)
    at async Promise.all (index 0)
    at new Cart (https://shop.example/static/js/main.3f9a2b1c.js?v=2#x:2:99)
    at https://shop.example/static/js/main.3f9a2b1c.js:2:500
    at Object.<anonymous> [as onClick] (https://shop.example/app.js:3:4)
    at <anonymous>`;

const FIREFOX = `ProductList@https://shop.example/static/js/main.3f9a2b1c.js:2:10452
renderWithHooks/<@https://shop.example/static/js/vendor.8d7e6f5a.js:1:83421
@https://shop.example/static/js/main.3f9a2b1c.js:2:500
async*loadCart@https://shop.example/cart.js:10:5`;

describe('parseStack', () => {
  it('parses Chrome frames with and without a function, skipping positionless ones', () => {
    expect(parseStack(REACT_CHROME)).toEqual([
      { fn: 'ProductList', file: 'https://shop.example/static/js/main.3f9a2b1c.js', line: 2, col: 10452 },
      {
        fn: 'renderWithHooks',
        file: 'https://shop.example/static/js/vendor.8d7e6f5a.js',
        line: 1,
        col: 83421,
      },
      { fn: 'new Cart', file: 'https://shop.example/static/js/main.3f9a2b1c.js?v=2#x', line: 2, col: 99 },
      { fn: undefined, file: 'https://shop.example/static/js/main.3f9a2b1c.js', line: 2, col: 500 },
      { fn: 'Object.<anonymous>', file: 'https://shop.example/app.js', line: 3, col: 4 },
    ]);
  });

  it('parses Firefox frames, anonymous ones and async markers', () => {
    expect(parseStack(FIREFOX)).toEqual([
      { fn: 'ProductList', file: 'https://shop.example/static/js/main.3f9a2b1c.js', line: 2, col: 10452 },
      {
        fn: 'renderWithHooks',
        file: 'https://shop.example/static/js/vendor.8d7e6f5a.js',
        line: 1,
        col: 83421,
      },
      { fn: undefined, file: 'https://shop.example/static/js/main.3f9a2b1c.js', line: 2, col: 500 },
      { fn: 'async*loadCart', file: 'https://shop.example/cart.js', line: 10, col: 5 },
    ]);
  });

  it('gives no frame for an empty stack or one without positions', () => {
    expect(parseStack(undefined)).toEqual([]);
    expect(parseStack('Error: boom\n    at <anonymous>')).toEqual([]);
  });
});

describe('normaliseMessage', () => {
  it('drops Uncaught and replaces urls, ids, numbers and quoted strings', () => {
    expect(
      normaliseMessage(
        `Uncaught Error: GET https://api.shop.example/items/42?x=1 failed for 3f2a9c1e-1b2c-4d5e-8f90-123456789abc and 0xdeadbeef00 after 1500 ms: "out of stock" 'sku'`,
      ),
    ).toBe('Error: GET <url> failed for <id> and <id> after <n> ms: <str> <str>');
    expect(normaliseMessage("Cannot read properties of undefined (reading 'map')")).toBe(
      'Cannot read properties of undefined (reading <str>)',
    );
    expect(normaliseMessage('Loading chunk 7a9f3c21 failed')).toBe('Loading chunk <id> failed');
  });
});

describe('fingerprint', () => {
  it('is the first 32 hex of SHA-256 of type, normalised message and top frame (path:function, hashes dropped)', () => {
    const frame = {
      fn: 'ProductList',
      file: 'https://shop.example/static/js/main.3f9a2b1c.js?v=9',
      line: 2,
      col: 1,
    };
    expect(topFrameKey(frame)).toBe('/static/js/main.js:ProductList');
    expect(topFrameKey({ ...frame, fn: undefined, file: 'https://cdn.example/app-0a1b2c3d4e.js' })).toBe(
      '/app.js:?',
    );
    const want = createHash('sha256')
      .update(
        'error\nTypeError: Cannot read properties of undefined (reading <str>)\n/static/js/main.js:ProductList',
      )
      .digest('hex')
      .slice(0, 32);
    expect(
      fingerprint('error', "Uncaught TypeError: Cannot read properties of undefined (reading 'map')", frame),
    ).toBe(want);
    // Another build (hash), line and column: the same issue.
    expect(
      fingerprint('error', "TypeError: Cannot read properties of undefined (reading 'id')", {
        ...frame,
        file: 'https://shop.example/static/js/main.77aa88bb.js',
        line: 9,
        col: 99,
      }),
    ).toBe(want);
    expect(
      fingerprint('rejection', "TypeError: Cannot read properties of undefined (reading 'map')", frame),
    ).not.toBe(want);
  });

  it('culprit and title', () => {
    expect(culpritOf({ fn: undefined, file: 'https://a.example/app.js?x=1', line: 3, col: 7 })).toBe(
      '? (https://a.example/app.js:3:7)',
    );
    expect(culpritOf(undefined)).toBe('');
    expect(titleOf(`Error: first line\nsecond`)).toBe('Error: first line');
    expect(titleOf('x'.repeat(300))).toHaveLength(200);
  });
});
