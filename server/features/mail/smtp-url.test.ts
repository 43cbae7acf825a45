import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config';
import { smtpUrlProblem } from './smtp-url';

describe('smtpUrlProblem', () => {
  it('accepts smtp: and smtps: URLs with a host', () => {
    expect(smtpUrlProblem('smtp://127.0.0.1:2525')).toBeNull();
    expect(smtpUrlProblem('smtps://user:p%40ss@mail.example.com:465')).toBeNull();
  });

  it('names a wrong scheme, an unparsable value and a missing host, never echoing the password', () => {
    expect(smtpUrlProblem('https://user:hunter2@mail.example.com')).toMatch(
      /^must start with smtp:\/\/ or smtps:\/\/, not https:\/\/; e\.g\. smtp:\/\//,
    );
    expect(smtpUrlProblem('mail.example.com hunter2')).toMatch(
      /^not a URL; e\.g\./,
    );
    expect(smtpUrlProblem('smtp://')).toMatch(/names no host/);
    for (const v of ['https://user:hunter2@x', 'mail hunter2'])
      expect(smtpUrlProblem(v)).not.toContain('hunter2');
  });

  it('loadConfig refuses a bad --smtp-url at start with one clear line', () => {
    const load = () =>
      loadConfig({
        env: {},
        argv: ['--smtp-url', 'http://mail.example.com'],
        overrides: { dataDir: '/tmp/belfry-x' },
      });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(
      /^invalid configuration: smtpUrl: must start with smtp:\/\/ or smtps:\/\/, not http:\/\/; e\.g\. [^(]+ \(set by --smtp-url or BELFRY_SMTP_URL\)$/,
    );
  });
});
