import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../http/errors';
import { CONTENT_TEXT_MAX_CHARS, extract, firstNumber, validateSelector } from './extract';

function badRequest(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
    return (e as ApiError).description;
  }
  throw new Error('expected a 400');
}

describe('content extraction', () => {
  it('joins the textContent of every match by newlines, whitespace collapsed and trimmed', () => {
    const html = `<ul><li class="x">  Alpha
      <b>one</b>&nbsp;&nbsp;two </li><li>skip</li><li class="x">
      Beta\t</li></ul>`;
    expect(extract(html, 'li.x')).toEqual({ text: 'Alpha one two\nBeta', number: null, matched: 2 });
  });

  it('counts no match as matched 0 with empty text', () => {
    expect(extract('<p>hi</p>', '#missing')).toEqual({ text: '', number: null, matched: 0 });
  });

  it('caps the text at 10,000 characters', () => {
    const html = `<div>${'<p>abcdefghij</p>'.repeat(2_000)}</div>`;
    const ex = extract(html, 'p');
    expect(ex.matched).toBe(2_000);
    expect(ex.text.length).toBe(CONTENT_TEXT_MAX_CHARS);
  });

  it('reads the first number after removing spaces, NBSP and thousands commas', () => {
    expect(firstNumber('Price: € 1,299.50 incl. VAT')).toBe(1299.5);
    expect(firstNumber('12\u00a0345 visitors')).toBe(12345);
    expect(firstNumber('1,234,567 users')).toBe(1234567);
    expect(firstNumber('delta - 3.5 %')).toBe(-3.5);
    expect(firstNumber('v2 of 3')).toBe(2);
    expect(firstNumber('1,5 kg')).toBe(1); // a decimal comma is not a thousands separator
    expect(firstNumber('no digits')).toBeNull();
    expect(extract('<span id="n">Stock: 1 024 left</span>', '#n').number).toBe(1024);
  });

  it('refuses an invalid CSS selector with a 400 naming the field', () => {
    expect(badRequest(() => validateSelector('div[')).startsWith('selector: invalid CSS selector')).toBe(
      true,
    );
    expect(badRequest(() => validateSelector('p:frobnicate'))).toMatch(
      /^selector: invalid CSS selector .*frobnicate/,
    );
    expect(badRequest(() => validateSelector('div >'))).toMatch(/^selector: invalid CSS selector/);
    expect(badRequest(() => validateSelector('   '))).toBe('selector: required');
    expect(badRequest(() => validateSelector('p'.repeat(501)))).toBe('selector: at most 500 characters');
    expect(validateSelector(' #price > span:nth-of-type(2) ')).toBe('#price > span:nth-of-type(2)');
  });
});
