import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../context';
import { seal } from '../../lib/seal';
import { CALLBACK_SEAL_PURPOSE, type CallbackPayload, openCallback } from './callbacks';

const ctx = { secret: randomBytes(32) } as unknown as AppContext;
const body = '{"id":1,"status":"answered","answer":"yes","answeredAt":null,"clientMessageId":null}';

describe('openCallback', () => {
  it('opens the sealed secret and keeps the body text as stored', () => {
    const payload: CallbackPayload = {
      url: 'https://example.com/cb',
      secret: seal(ctx.secret, CALLBACK_SEAL_PURPOSE, 's3cret'),
      body,
    };
    expect(openCallback(ctx, JSON.stringify(payload))).toEqual({
      url: 'https://example.com/cb',
      secret: 's3cret',
      body,
    });
    expect(openCallback(ctx, JSON.stringify({ ...payload, secret: null }))).toEqual({
      url: 'https://example.com/cb',
      secret: null,
      body,
    });
  });

  it('throws for a payload that is not a callback’s or a secret sealed for another purpose', () => {
    expect(() => openCallback(ctx, null)).toThrow('not a callback payload');
    expect(() => openCallback(ctx, '{broken')).toThrow();
    expect(() => openCallback(ctx, JSON.stringify({ title: 'a digest', message: 'x' }))).toThrow(
      'not a callback payload',
    );
    const other = seal(ctx.secret, 'delivery-secret', 's3cret');
    expect(() =>
      openCallback(ctx, JSON.stringify({ url: 'https://example.com/cb', secret: other, body })),
    ).toThrow();
  });
});
