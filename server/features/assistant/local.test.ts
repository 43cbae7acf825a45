import { describe, expect, it } from 'vitest';
import type { UserFacts } from './data';
import { LOCAL_FIRST_LINE, langOf, localReply, topicsOf } from './local';

const facts = (over: Partial<UserFacts> = {}): UserFacts => ({
  now: Date.UTC(2026, 10, 27, 12),
  channels: [],
  totals: { channels: 21, messages: 5, unread: 2 },
  quota: { plan: 'free', used: 12, limit: 1000 },
  sources: [],
  failing: [],
  failedDeliveries: [],
  busiest: [],
  ...over,
});

describe('topicsOf', () => {
  it.each([
    ['what is down?', ['failing']],
    ['any failures today', ['failing']],
    ['which channel is noisiest', ['busy', 'counts']],
    ['how much quota is left', ['quota']],
    ['how many unread', ['counts']],
    ['hello', []],
    ['business hours', []],
  ])('%s → %j', (q, topics) => expect(topicsOf(q)).toEqual(topics));

  it('matches Russian word forms by stem', () => {
    for (const q of [
      'что упало?',
      'сервер упал',
      'сайты упали',
      'есть ошибки?',
      'много ошибок',
      'был сбой',
      'сервис недоступен',
    ])
      expect(topicsOf(q), q).toContain('failing');
    for (const q of ['какой канал шумный', 'где шумят', 'самый активный канал'])
      expect(topicsOf(q), q).toContain('busy');
    for (const q of ['квота', 'сколько осталось квоты', 'по квоте', 'лимиты'])
      expect(topicsOf(q), q).toContain('quota');
  });

  it('does not take words that merely contain an English keyword', () => {
    expect(topicsOf('download the report')).toEqual([]);
    expect(topicsOf('unplanned')).toEqual([]);
  });
});

describe('langOf and localReply', () => {
  it('lang wins; otherwise Cyrillic means Russian', () => {
    expect(langOf('привет', undefined)).toBe('ru');
    expect(langOf('hello', undefined)).toBe('en');
    expect(langOf('привет', 'en')).toBe('en');
  });

  it('Russian plurals follow 1 / 2-4 / 5+ with 11-14 as many', () => {
    const r = localReply('сколько каналов', facts(), 'ru');
    expect(r.split('\n')[0]).toBe(LOCAL_FIRST_LINE.ru);
    expect(r).toContain('У вас 21 канал, в них 5 сообщений; непрочитанных: 2.');
    expect(
      localReply('сколько', facts({ totals: { channels: 12, messages: 3, unread: 0 } }), 'ru'),
    ).toContain('У вас 12 каналов, в них 3 сообщения');
  });

  it('the summary has every part; a keyword only its part', () => {
    const all = localReply('hi', facts(), 'en');
    expect(all).toContain('You have 21 channels with 5 messages; 2 unread.');
    expect(all).toContain('Nothing is failing');
    expect(all).toContain('No channel received a message in the last 24 h.');
    expect(all).toContain("Today's event quota: 12 of 1000 used (1 %, 988 left) on the free plan.");
    expect(localReply('quota', facts(), 'en').split('\n\n')).toHaveLength(2);
  });
});
