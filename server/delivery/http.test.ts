import { describe, expect, it } from 'vitest';
import { testIo } from '../../test/helpers/delivery-io';
import { reasonOf, retryAfterOf } from './http';
import { adapterNames } from './registry';

describe('error reasons of the services', () => {
  it('takes the service’s own field: Telegram description, JSON message (+code, errors), Azure error, Slack text', () => {
    expect(reasonOf('{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}')).toBe(
      'Bad Request: chat not found',
    );
    expect(reasonOf('{"message":"Unknown Webhook","code":10015}')).toBe('Unknown Webhook (10015)');
    expect(
      reasonOf('{"status":"invalid event","message":"Event object is invalid","errors":["a","b"]}'),
    ).toBe('Event object is invalid: a; b');
    expect(reasonOf('{"error":{"code":"X","message":"gone"}}')).toBe('gone (X)');
    expect(reasonOf('no_service\n')).toBe('no_service');
    expect(reasonOf('')).toBe('');
  });

  it('is one line of at most 200 characters', () => {
    const r = reasonOf(JSON.stringify({ message: `a\nb\t${'x'.repeat(500)}` }));
    expect([...r].length).toBe(200);
    expect(r).not.toMatch(/[\n\t]/);
  });
});

describe('Retry-After', () => {
  const io = testIo();
  const res = (headers: Record<string, string>, body = '') => ({ status: 429, headers, body });
  it('reads seconds, an HTTP-date against the server clock, and the services’ body fields', () => {
    expect(retryAfterOf(io, res({ 'retry-after': '30' }))).toBe(30);
    expect(retryAfterOf(io, res({ 'retry-after': '1.2' }))).toBe(2);
    const at = new Date(io.ctx.clock.now() + 90_000).toUTCString();
    expect(retryAfterOf(io, res({ 'retry-after': at }))).toBe(90);
    expect(retryAfterOf(io, res({ 'retry-after': new Date(0).toUTCString() }))).toBe(0);
    expect(retryAfterOf(io, res({}, '{"ok":false,"parameters":{"retry_after":17}}'))).toBe(17);
    expect(retryAfterOf(io, res({}, '{"message":"You are being rate limited.","retry_after":0.4}'))).toBe(1);
    expect(retryAfterOf(io, res({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterOf(io, res({}))).toBeUndefined();
  });
});

describe('registry', () => {
  it('lists the eleven adapters in the docs order', () => {
    expect(adapterNames()).toEqual([
      'email',
      'sms',
      'call',
      'slack',
      'discord',
      'teams',
      'mattermost',
      'telegram',
      'webhook',
      'pagerduty',
      'opsgenie',
    ]);
  });
});
