import { describe, expect, test } from 'vitest';
import type { QuestionField } from '../../api/types';
import {
  answerRows,
  answerText,
  countdown,
  fieldErrorOf,
  formAnswer,
  goneStatus,
  initialValues,
  questionOf,
  textAnswerProblem,
} from './question';

/** The pure side of the inbox's question card (wire-families §7). */
const FIELDS: QuestionField[] = [
  { name: 'name', label: 'Name', type: 'text', required: true },
  { name: 'notes', type: 'textarea' },
  { name: 'count', label: 'Count', type: 'number', required: true, default: 3 },
  { name: 'urgent', type: 'boolean', default: true },
  { name: 'env', type: 'select', options: ['prod', 'staging'], default: 'prod' },
  { name: 'tags', type: 'multiselect', options: ['a', 'b', 'c'], required: true, default: ['b'] },
  { name: 'day', type: 'date' },
  { name: 'mail', type: 'email' },
];

describe('questionOf', () => {
  test('reads a form question and drops fields of unknown type', () => {
    const q = questionOf({
      'service::question': {
        id: 7,
        type: 'form',
        options: [],
        defaultOption: null,
        multiSelect: false,
        fields: [
          { name: 'a', type: 'text', required: true, placeholder: 'p' },
          { name: 'b', type: 'color' },
          5,
        ],
        format: 'text',
        expiresAt: '2026-01-15T13:00:00.000Z',
      },
    });
    expect(q).toEqual({
      id: 7,
      type: 'form',
      options: [],
      defaultOption: null,
      multiSelect: false,
      fields: [{ name: 'a', type: 'text', required: true, options: [], placeholder: 'p' }],
      format: 'text',
      expiresAt: '2026-01-15T13:00:00.000Z',
    });
  });
  test('is null for a message without a question or with a malformed one', () => {
    expect(questionOf(undefined)).toBeNull();
    expect(questionOf({ 'client::display': { contentType: 'text/markdown' } })).toBeNull();
    expect(questionOf({ 'service::question': { id: 1, type: 'poll', expiresAt: 'x' } })).toBeNull();
    expect(questionOf({ 'service::question': { id: '1', type: 'text', expiresAt: 'x' } })).toBeNull();
  });
});

describe('formAnswer', () => {
  test('starts from the defaults and answers with typed values, leaving empty optional fields out', () => {
    const values = initialValues(FIELDS);
    expect(values).toEqual({
      name: '',
      notes: '',
      count: '3',
      urgent: true,
      env: 'prod',
      tags: ['b'],
      day: '',
      mail: '',
    });
    expect(formAnswer(FIELDS, { ...values, name: 'Ada', count: ' 2.5 ' })).toEqual({
      answer: { name: 'Ada', count: 2.5, urgent: true, env: 'prod', tags: ['b'] },
      errors: {},
    });
  });
  test('names each field that is required and empty, or not a number, in the server words', () => {
    const values = { ...initialValues(FIELDS), count: 'many', tags: [], mail: 'nope', env: 'dev' };
    expect(formAnswer(FIELDS, values).errors).toEqual({
      name: 'required',
      count: 'must be a number',
      tags: 'required',
      mail: 'must be an email address',
      env: 'must be one of the options',
    });
  });
});

test('fieldErrorOf finds the field of a server 400 text', () => {
  expect(fieldErrorOf('answer.count: must be a number')).toEqual({
    field: 'count',
    text: 'must be a number',
  });
  expect(fieldErrorOf('answer: not valid JSON')).toBeNull();
});

test('textAnswerProblem checks presence, length and, for JSON questions, that the text parses', () => {
  expect(textAnswerProblem('  ', 'text')).toBe('answer: required');
  expect(textAnswerProblem('x'.repeat(10_001), 'text')).toBe('answer: at most 10000 characters');
  expect(textAnswerProblem('{"a": 1', 'json')).toBe('answer: not valid JSON');
  expect(textAnswerProblem('{"a": 1}', 'json')).toBeNull();
  expect(textAnswerProblem('{"a": 1', 'text')).toBeNull();
});

test('countdown shows minutes, hours and days left, rounding up, and "expired" at zero', () => {
  const at = Date.UTC(2026, 0, 15, 12, 0, 0);
  const iso = (ms: number) => new Date(at + ms).toISOString();
  expect(countdown(iso(65_000), at)).toBe('1:05');
  expect(countdown(iso(500), at)).toBe('0:01');
  expect(countdown(iso(3_600_000 + 62_000), at)).toBe('1:01:02');
  expect(countdown(iso(2 * 86_400_000 + 3_723_000), at)).toBe('2 d 01:02:03');
  expect(countdown(iso(0), at)).toBe('expired');
  expect(countdown(iso(-5_000), at)).toBe('expired');
});

test('answers read as text; form answers as rows in field order', () => {
  expect(answerText('yes')).toBe('yes');
  expect(answerText(['a', 'b'])).toBe('a, b');
  expect(answerText({ ok: true })).toBe('{"ok":true}');
  expect(answerRows(FIELDS, { extra: 1, count: 2, name: 'Ada', urgent: false })).toEqual([
    { label: 'Name', value: 'Ada' },
    { label: 'Count', value: '2' },
    { label: 'urgent', value: 'no' },
    { label: 'extra', value: '1' },
  ]);
});

test('goneStatus reads the 410 text', () => {
  expect(goneStatus('question cancelled')).toBe('cancelled');
  expect(goneStatus('question expired')).toBe('expired');
});
