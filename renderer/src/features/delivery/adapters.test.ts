import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/client';
import {
  ADAPTERS,
  type AdapterInfo,
  bodyOf,
  delayText,
  draftOf,
  hasMask,
  isDirty,
  problemOf,
} from './adapters';

const info = (name: string): AdapterInfo => {
  const a = ADAPTERS.find((x) => x.name === name);
  if (!a) throw new Error(name);
  return a;
};

describe('delivery adapters (UI)', () => {
  it('lists the eleven adapters in the order of docs/api.md', () => {
    expect(ADAPTERS.map((a) => a.name)).toEqual([
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
    for (const a of ADAPTERS) for (const f of a.fields) expect(f.hint.length).toBeGreaterThan(10);
  });

  it('sends a new adapter with the common defaults and its fields', () => {
    const email = info('email');
    const d = draftOf(email);
    expect(d).toMatchObject({ enabled: true, minPriority: '0', delaySec: '300' });
    d.values.to = ' me@example.com, ops@example.com ;x@example.com ';
    expect(bodyOf(email, d)).toEqual({
      enabled: true,
      minPriority: 0,
      delaySec: 300,
      to: ['me@example.com', 'ops@example.com', 'x@example.com'],
    });
    const sms = info('sms');
    const s = draftOf(sms);
    Object.assign(s.values, {
      accountSid: 'AC1',
      authToken: 'tok',
      from: '+15551234567',
      to: '+15557654321',
    });
    expect(bodyOf(sms, s)).toEqual({
      enabled: true,
      minPriority: 0,
      delaySec: 300,
      provider: 'twilio',
      accountSid: 'AC1',
      authToken: 'tok',
      from: '+15551234567',
      to: '+15557654321',
    });
  });

  it('sends untouched masked secrets back unchanged, leaves empty optional fields out', () => {
    const webhook = info('webhook');
    const stored = {
      enabled: false,
      minPriority: 5,
      delaySec: 60,
      url: 'https://example.com/hook?token=********',
      secret: '********',
      headers: { 'X-Api-Key': '********' },
    };
    const d = draftOf(webhook, stored);
    expect(d.enabled).toBe(false);
    expect(hasMask(d)).toBe(true);
    expect(isDirty(webhook, d, stored)).toBe(false);
    expect(bodyOf(webhook, d)).toEqual(stored);
    d.delaySec = '120';
    expect(isDirty(webhook, d, stored)).toBe(true);
    expect(bodyOf(webhook, d)).toEqual({ ...stored, delaySec: 120 });
    const bare = draftOf(webhook);
    bare.values.url = 'https://example.com/x';
    bare.headers = [{ name: '', value: '' }];
    expect(bodyOf(webhook, bare)).toEqual({
      enabled: true,
      minPriority: 0,
      delaySec: 300,
      url: 'https://example.com/x',
    });
  });

  it('keeps a typed secret as typed and numeric Telegram chat ids as numbers', () => {
    const telegram = info('telegram');
    const d = draftOf(telegram, { botToken: '********', chatId: -1001234 });
    expect(d.values.chatId).toBe('-1001234');
    expect(bodyOf(telegram, d)).toMatchObject({ botToken: '********', chatId: -1001234 });
    d.values.chatId = '@mychannel';
    d.values.botToken = ' 123:abc ';
    expect(bodyOf(telegram, d)).toMatchObject({ botToken: ' 123:abc ', chatId: '@mychannel' });
    expect(draftOf(info('pagerduty')).values.region).toBe('us');
  });

  it('places a server 400 under the field it names, else on the adapter', () => {
    const webhook = info('webhook');
    const bad = (m: string) => new ApiError(400, { error: 'Bad Request', errorDescription: m }, m);
    expect(problemOf(bad('deliveryConfig.webhook.url: Invalid URL'), webhook)).toEqual({
      field: 'url',
      text: 'deliveryConfig.webhook.url: Invalid URL',
    });
    expect(
      problemOf(bad('deliveryConfig.webhook.headers.X-Api-Key: no stored secret to keep'), webhook)?.field,
    ).toBe('headers');
    expect(problemOf(bad('deliveryConfig.webhook.delaySec: Too big'), webhook)?.field).toBe('delaySec');
    expect(
      problemOf(
        bad('deliveryConfig.webhook: the url changed; enter its secrets again instead of the mask'),
        webhook,
      ),
    ).toEqual({
      field: null,
      text: 'deliveryConfig.webhook: the url changed; enter its secrets again instead of the mask',
    });
    expect(problemOf(bad('deliveryConfig.email.to.0: Invalid email address'), webhook)?.field).toBeNull();
    expect(problemOf(null, webhook)).toBeNull();
  });

  it('says a delay in words', () => {
    expect(delayText(0)).toBe('0 seconds');
    expect(delayText(300)).toBe('5 minutes');
    expect(delayText(5430)).toBe('1 hour 30 minutes 30 seconds');
    expect(delayText(1)).toBe('1 second');
  });
});
