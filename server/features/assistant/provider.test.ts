import { describe, expect, it } from 'vitest';
import { extractJson } from './provider';

describe('extractJson', () => {
  it('reads bare JSON, fenced JSON and JSON inside prose', () => {
    expect(extractJson('{"a":1}')).toEqual({ a: 1 });
    expect(extractJson('Sure!\n```json\n{"items": [1, 2]}\n```\nDone.')).toEqual({ items: [1, 2] });
    expect(extractJson('Here: {"step": {"action": "click"}} hope it helps')).toEqual({
      step: { action: 'click' },
    });
    expect(extractJson('[1,2]')).toEqual([1, 2]);
  });

  it('undefined for no JSON at all', () => {
    expect(extractJson('I would rather not.')).toBeUndefined();
    expect(extractJson('{broken')).toBeUndefined();
  });
});
