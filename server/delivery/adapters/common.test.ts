import { describe, expect, it } from 'vitest';
import { sampleItem } from '../../../test/helpers/delivery-io';
import { answerLink, questionItem } from '../../../test/helpers/delivery-question';
import { markdownLink, QUESTION_EXTRA, questionParts } from './common';

const NOW = Date.UTC(2026, 0, 15, 12, 0);
const INBOX = 'https://belfry.example.test/inbox?channel=7#message-42';
const IN_APP = { label: 'Answer in Belfry', url: INBOX, primary: true };

describe('questionParts (answer buttons of a delivered question)', () => {
  it('is null for a message without a question, or with a malformed one', () => {
    expect(questionParts(sampleItem(), NOW)).toBeNull();
    for (const q of [null, 'x', [1], { type: 'poll' }, {}])
      expect(questionParts(sampleItem({ extras: { [QUESTION_EXTRA]: q } }), NOW)).toBeNull();
  });

  it('a choice question: one button per option with its signed link, the default one primary, and the deadline', () => {
    expect(questionParts(questionItem({ defaultOption: 'no' }), NOW)).toEqual({
      buttons: [
        { label: 'yes', url: answerLink('yes'), primary: false },
        { label: 'no', url: answerLink('no'), primary: true },
        { label: 'later', url: answerLink('later'), primary: false },
      ],
      perOption: true,
      lines: ['Answer by 2026-01-15 12:59 UTC'],
    });
  });

  it('a choice question whose links are not all this server’s own answer links: one "Answer in Belfry" and the options', () => {
    const foreign = {
      yes: 'https://evil.example/a/answer?token=x',
      no: answerLink('no'),
      later: answerLink('later'),
    };
    const missing = { yes: answerLink('yes'), no: answerLink('no') };
    const spaced = { ...missing, later: `${answerLink('later')} x` };
    for (const links of [foreign, missing, spaced, null])
      expect(questionParts(questionItem({ links }), NOW)).toEqual({
        buttons: [IN_APP],
        perOption: false,
        lines: ['Options: yes · no · later', 'Answer by 2026-01-15 12:59 UTC'],
      });
  });

  it('a public URL with a path: the answer links under that path are this server’s own, those beside it not', () => {
    const base = 'https://example.test/belfry';
    const own = (o: string) => answerLink(o).replace('https://belfry.example.test', base);
    const links = (at: (o: string) => string) => ({ yes: at('yes'), no: at('no'), later: at('later') });
    const item = (at: (o: string) => string) =>
      questionItem(
        { links: links(at) },
        { links: { message: `${base}/inbox?channel=7#message-42`, read: null } },
      );
    expect(questionParts(item(own), NOW)!.buttons.map((b) => b.url)).toEqual(Object.values(links(own)));
    const beside = (o: string) => own(o).replace('/belfry/', '/');
    expect(questionParts(item(beside), NOW)!.perOption).toBe(false);
  });

  it('when the service cannot carry every option link: one "Answer in Belfry" (never some options only)', () => {
    const seen: number[] = [];
    const parts = questionParts(questionItem(), NOW, (b) => {
      seen.push(b.length);
      return false;
    });
    expect(seen).toEqual([3]);
    expect(parts).toMatchObject({ buttons: [IN_APP], perOption: false });
    expect(parts!.lines[0]).toBe('Options: yes · no · later');
  });

  it('multi-select, form and free-text questions: "Answer in Belfry" with what the answer takes', () => {
    const multi = questionParts(questionItem({ type: 'multi', options: ['a', 'b'] }), NOW);
    expect(multi).toEqual({
      buttons: [IN_APP],
      perOption: false,
      lines: ['Options: a · b (one or more)', 'Answer by 2026-01-15 12:59 UTC'],
    });
    const fields = [
      { name: 'host', label: 'Host name', type: 'text', required: true },
      { name: 'count', type: 'number' },
    ];
    const form = questionParts(questionItem({ type: 'form', options: [], fields }), NOW);
    expect(form!.lines).toEqual(['Form: Host name*, count', 'Answer by 2026-01-15 12:59 UTC']);
    const json = questionParts(questionItem({ type: 'text', options: [], format: 'json' }), NOW);
    expect(json).toEqual({
      buttons: [IN_APP],
      perOption: false,
      lines: ['Answer with JSON', 'Answer by 2026-01-15 12:59 UTC'],
    });
    expect(questionParts(questionItem({ type: 'text', options: [] }), NOW)!.lines[0]).toBe(
      'Answer with text',
    );
  });

  it('once expiresAt has passed at send time: no buttons and "Closed at"', () => {
    const at = Date.parse('2026-01-15T12:59:00.000Z');
    expect(questionParts(questionItem(), at - 1)!.buttons).toHaveLength(3);
    expect(questionParts(questionItem(), at)).toEqual({
      buttons: [],
      perOption: false,
      lines: ['Options: yes · no · later', 'Closed at 2026-01-15 12:59 UTC'],
    });
  });

  it('markdownLink escapes what would close or format the label and the parentheses of the URL', () => {
    expect(markdownLink('a]b [*c*]_\\', 'https://x.example/a?t=(1)')).toBe(
      '[a\\]b \\[\\*c\\*\\]\\_\\\\](https://x.example/a?t=%281%29)',
    );
  });
});
