import { describe, expect, it } from 'vitest';
import { compileUserRegex } from '../../lib/safe-regex';
import { localPartOf } from './listener';
import { renderTitle } from './receive';
import { subjectPattern } from './service';

describe('email inbox helpers', () => {
  it('subjectPattern keeps a subject without digits and turns digit runs into \\d+ with the rest escaped', () => {
    expect(subjectPattern('Daily report')).toBe('Daily report');
    const cases = [
      'Backup 2026-11-27 done',
      'Invoice #42 ($19.99) [paid] {ok} a|b ^x* /path/7?',
      '[acme/api] Run failed: deploy - main (4f2a91c)',
    ];
    for (const subject of cases) {
      const re = compileUserRegex(subjectPattern(subject));
      expect(re.flags).toBe('i');
      expect(re.test(subject)).toBe(true);
      expect(re.test(subject.replace(/\d+/g, '123456'))).toBe(true);
      expect(re.test(`x${subject}`)).toBe(false);
    }
    expect(subjectPattern('Backup 2026-11-27 done')).toBe('/^Backup \\d+-\\d+-\\d+ done$/i');
  });

  it('renderTitle fills {{subject}}, {{from}}, {{to}} (spaces allowed) and leaves anything else as written', () => {
    const v = { subject: 'Disk full', from: 'a@b.example', to: 'ops@localhost' };
    expect(renderTitle('{{ subject }} from {{from}} to {{to}} {{body}} {{subject', v)).toBe(
      'Disk full from a@b.example to ops@localhost {{body}} {{subject',
    );
    // A replacement text with $ patterns is inserted as it is.
    expect(renderTitle('{{subject}}', { ...v, subject: "$& $' $1" })).toBe("$& $' $1");
  });

  it('localPartOf lowercases our local parts and refuses other domains', () => {
    expect(localPartOf('Ops.Alerts@Mail.Example.com', 'mail.example.com')).toBe('ops.alerts');
    expect(localPartOf('ops@example.com', 'mail.example.com')).toBeUndefined();
    expect(localPartOf('ops@sub.mail.example.com', 'mail.example.com')).toBeUndefined();
    expect(localPartOf('@mail.example.com', 'mail.example.com')).toBeUndefined();
    expect(localPartOf('no-at-sign', 'mail.example.com')).toBeUndefined();
  });
});
