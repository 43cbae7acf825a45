import { describe, expect, it } from 'vitest';
import { asRegExp, failedPatterns, patternMatches, renderTitle } from './match';
import type { MailEvent } from './types';

const mail: MailEvent = {
  id: 1,
  inboxId: 1,
  appid: 1,
  from: 'alerts@ci.example.com',
  to: 'builds@localhost',
  subject: 'Build 42 failed',
  text: 'See the log.',
  attachments: [],
  receivedAt: '2026-01-01T00:00:00Z',
  matchedRuleId: null,
  action: 'message',
  messageId: 3,
  size: 100,
};

describe('inbox rule patterns', () => {
  it('matches a plain pattern as a case-insensitive substring', () => {
    expect(patternMatches('BUILD 42', mail.subject)).toBe(true);
    expect(patternMatches('^Build', mail.subject)).toBe(false);
  });
  it('matches /re/flags as a RegExp and refuses one that does not compile', () => {
    expect(patternMatches('/^build \\d+ failed$/i', mail.subject)).toBe(true);
    expect(patternMatches('/^build/', mail.subject)).toBe(false);
    expect(asRegExp('/(/')).toBe('invalid');
    expect(patternMatches('/(/', mail.subject)).toBe(false);
  });
  it('names every present pattern the mail fails', () => {
    expect(failedPatterns({}, mail)).toEqual([]);
    expect(failedPatterns({ from: 'ci.example', subject: 'passed', body: 'log' }, mail)).toEqual(['subject']);
  });
  it('renders the title template, the subject when empty', () => {
    expect(renderTitle('{{subject}} from {{from}} to {{ to }}', mail)).toBe(
      'Build 42 failed from alerts@ci.example.com to builds@localhost',
    );
    expect(renderTitle('', { ...mail, subject: '' })).toBe('(no subject)');
  });
});
