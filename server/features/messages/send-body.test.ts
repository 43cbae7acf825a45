import { describe, expect, it } from 'vitest';
import { MESSAGE_MAX_CHARS, PRIORITY_MAX, PRIORITY_MIN, TITLE_MAX_CHARS } from '../../lib/limits';
import { quickSendBody, sendBody } from './routes';

// POST /message checks the common bodies by hand (quickSendBody) and the rest with zod (sendBody): for
// every body the hand check accepts, its output must be zod's, key for key; and it must accept nothing
// zod refuses.
const bodies: unknown[] = [
  { message: 'x' },
  { message: 'x', title: 'T', priority: 5, extras: { 'client::display': { contentType: 'text/markdown' } } },
  { message: 'x', title: null, priority: null, extras: null },
  { message: 'x', id: 5, date: 'x', appid: 1 },
  { message: 'x', title: '' },
  { message: 'x', priority: PRIORITY_MIN },
  { message: 'x', priority: PRIORITY_MAX },
  { message: 'x', priority: PRIORITY_MAX + 1 },
  { message: 'x', priority: PRIORITY_MIN - 1 },
  { message: 'x', priority: 2.5 },
  { message: 'x', priority: '5' },
  { message: 'x', priority: -0 },
  { message: 'x', title: 5 },
  { message: 'x', title: 't'.repeat(TITLE_MAX_CHARS) },
  { message: 'x', title: 't'.repeat(TITLE_MAX_CHARS + 1) },
  { message: 'm'.repeat(MESSAGE_MAX_CHARS) },
  { message: 'm'.repeat(MESSAGE_MAX_CHARS + 1) },
  { message: '' },
  { message: null },
  { message: 5 },
  {},
  [],
  [{ message: 'x' }],
  null,
  'x',
  { message: 'x', extras: [] },
  { message: 'x', extras: 'x' },
  { message: 'x', extras: {} },
  { message: 'x', extras: JSON.parse('{"__proto__": {"polluted": true}, "b": 2}') },
  { message: 'x', extras: { nested: { deep: [1, 2, { x: null }] } } },
  { message: 'x', title: undefined, priority: undefined, extras: undefined },
  JSON.parse('{"message": "x", "__proto__": {"title": "inherited"}}'),
];

describe('quickSendBody', () => {
  it.each(bodies.map((b, i) => [i, b]))('body %i: the same answer as zod, or none', (_i, body) => {
    const zod = sendBody.safeParse(body);
    const quick = quickSendBody(body);
    if (quick === null) return; // zod decides
    expect(zod.success).toBe(true);
    expect(quick).toStrictEqual(zod.data);
    expect(Object.keys(quick)).toEqual(Object.keys(zod.data!));
  });

  it('takes the bodies clients send every day', () => {
    expect(quickSendBody({ message: 'x', title: 'T', priority: 5, extras: { a: 1 } })).not.toBeNull();
    expect(quickSendBody({ message: 'x', title: null, priority: null, extras: null })).not.toBeNull();
  });
});
