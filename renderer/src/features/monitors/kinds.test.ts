import { describe, expect, it } from 'vitest';
import { responsePoints, responseSummary } from './Charts';
import {
  assertionValueText,
  byAttention,
  draftOf,
  draftToStep,
  emptyStep,
  fromAssertionDrafts,
  kindBody,
  maskProblems,
  moveItem,
  parseAssertionValue,
  parseStatusList,
  SECRET_MASK,
  stepToDraft,
  targetOf,
} from './kinds';
import type { Monitor, WorkflowStep } from './types';

describe('monitor form drafts', () => {
  it('round-trips an http monitor’s kind fields through the draft unchanged', () => {
    const fields = {
      method: 'POST',
      url: 'https://api.example.com/health',
      headers: { Authorization: SECRET_MASK, Accept: 'application/json' },
      body: '{"ping":1}',
      basicAuth: { username: 'ops', password: SECRET_MASK },
      expectedStatus: ['200-299', '301'],
      followRedirects: false,
      ignoreTlsErrors: true,
      maxResponseMs: 1500,
      bodyContains: 'ok',
      bodyNotContains: null,
      json: [
        { path: '$.status', op: 'eq' as const, value: 'ok' },
        { path: '$.version', op: 'eq' as const, value: '42' },
        { path: '$.load', op: 'lt' as const, value: 0.8 },
        { path: '$.db', op: 'exists' as const },
      ],
      tlsExpiryDays: 14,
    };
    expect(kindBody('http-monitor', draftOf({ kind: 'http-monitor', ...fields }))).toEqual(fields);
  });

  it('sends an empty optional text as null and no username as no basic auth', () => {
    const body = kindBody('http-monitor', { ...draftOf(), url: ' https://x.test/ ' });
    expect(body).toMatchObject({
      url: 'https://x.test/',
      basicAuth: null,
      maxResponseMs: null,
      bodyContains: null,
      expectedStatus: ['200-299'],
      json: [],
      tlsExpiryDays: 0,
    });
  });

  it('gives each kind only its own fields', () => {
    const d = { ...draftOf(), url: 'https://x.test', host: 'db.test', port: '5432', selector: '#price' };
    expect(kindBody('monitor', d)).toEqual({ url: 'https://x.test' });
    expect(kindBody('port-monitor', d)).toEqual({
      host: 'db.test',
      port: 5432,
      tls: false,
      ignoreTlsErrors: false,
    });
    expect(kindBody('content-monitor', { ...d, rule: 'numberBelow', value: '19.5' })).toEqual({
      url: 'https://x.test',
      selector: '#price',
      rule: 'numberBelow',
      value: 19.5,
      render: 'html',
    });
    expect(kindBody('content-monitor', { ...d, rule: 'changed', value: 'left over' }).value).toBeNull();
  });

  it('reads assertion values: numbers for comparisons, JSON for eq/ne, text otherwise', () => {
    expect(parseAssertionValue('gt', '3')).toBe(3);
    expect(parseAssertionValue('eq', 'true')).toBe(true);
    expect(parseAssertionValue('eq', '"42"')).toBe('42');
    expect(parseAssertionValue('eq', 'ok')).toBe('ok');
    expect(parseAssertionValue('contains', '42')).toBe('42');
    expect(parseAssertionValue('exists', 'x')).toBeUndefined();
    // A string that reads as JSON keeps its quotes in the form, so it stays a string.
    expect(assertionValueText('eq', '42')).toBe('"42"');
    expect(assertionValueText('eq', 'ok')).toBe('ok');
    expect(assertionValueText('ne', null)).toBe('null');
    expect(fromAssertionDrafts([{ path: ' ', op: 'eq', value: '1' }])).toEqual([]);
  });

  it('splits expected statuses on commas and spaces', () => {
    expect(parseStatusList(' 200-299, 301 302,,')).toEqual(['200-299', '301', '302']);
  });
});

describe('workflow steps', () => {
  const step: WorkflowStep = {
    name: 'login',
    method: 'POST',
    url: 'https://api.test/login',
    headers: { 'Content-Type': 'application/json' },
    body: '{"user":"{{user}}"}',
    basicAuth: null,
    expectedStatus: ['200'],
    followRedirects: true,
    assert: { maxResponseMs: null, bodyContains: null, bodyNotContains: null, json: [] },
    extract: [{ var: 'token', from: 'json', path: '$.token' }],
  };

  it('round-trips a step through the editor’s draft', () => {
    expect(draftToStep(stepToDraft(step, 0))).toEqual(step);
  });

  it('a new step is a GET expecting 2xx with a default name', () => {
    const s = draftToStep({ ...emptyStep(), url: 'https://api.test/' });
    expect(s).toMatchObject({
      method: 'GET',
      url: 'https://api.test/',
      expectedStatus: ['200-299'],
      extract: [],
    });
    expect(s).not.toHaveProperty('name');
  });

  it('moves a step and ignores moves past either end', () => {
    expect(moveItem(['a', 'b', 'c'], 2, 1)).toEqual(['a', 'c', 'b']);
    expect(moveItem(['a', 'b'], 0, -1)).toEqual(['a', 'b']);
    expect(moveItem(['a', 'b'], 1, 2)).toEqual(['a', 'b']);
  });
});

describe('masked secrets', () => {
  const stored: Partial<Monitor> = {
    kind: 'workflow-monitor',
    variables: { apiToken: SECRET_MASK, user: 'ops' },
    steps: [
      { method: 'GET', url: 'https://a.test/', headers: { Authorization: SECRET_MASK } },
      { method: 'GET', url: 'https://b.test/' },
    ],
  };

  it('keeps masked values in place without complaint', () => {
    expect(maskProblems('workflow-monitor', draftOf(stored), stored)).toEqual([]);
  });

  it('asks to retype the hidden values of a step that moved', () => {
    const d = draftOf(stored);
    d.steps = moveItem(d.steps, 0, 1);
    expect(maskProblems('workflow-monitor', d, stored)).toEqual([
      'step 2: it moved, so its hidden values cannot be kept; type them again',
    ]);
    // Typed again: fine.
    d.steps[1]!.headers[0]!.value = 'Bearer new';
    expect(maskProblems('workflow-monitor', d, stored)).toEqual([]);
  });

  it('asks to retype a renamed secret variable or header', () => {
    const d = draftOf(stored);
    d.variables[0]!.name = 'apiKey';
    expect(maskProblems('workflow-monitor', d, stored)).toEqual([
      'variable "apiKey": type the hidden value again',
    ]);
    const http: Partial<Monitor> = { kind: 'http-monitor', headers: { 'X-Api-Key': SECRET_MASK } };
    const h = draftOf(http);
    h.headers[0]!.name = 'X-Token';
    expect(maskProblems('http-monitor', h, http)).toEqual(['header "X-Token": type the hidden value again']);
  });
});

describe('list helpers', () => {
  const m = (name: string, status: Monitor['status']) => ({ name, status }) as Monitor;

  it('orders what needs attention first, then by name', () => {
    const list = [m('b', 'up'), m('a', 'paused'), m('c', 'down'), m('a', 'up'), m('d', 'pending')];
    expect(list.sort(byAttention).map((x) => `${x.status}:${x.name}`)).toEqual([
      'down:c',
      'pending:d',
      'up:a',
      'up:b',
      'paused:a',
    ]);
  });

  it('names the target as the messages do', () => {
    expect(targetOf({ kind: 'port-monitor', host: 'db.test', port: 5432 })).toBe('db.test:5432');
    expect(targetOf({ kind: 'workflow-monitor', steps: [{ method: 'GET', url: 'https://a.test/1' }] })).toBe(
      'https://a.test/1',
    );
    expect(targetOf({ kind: 'http-monitor', url: 'https://x.test/' })).toBe('https://x.test/');
  });

  it('charts the log oldest first, failed checks as gaps, and says so in words', () => {
    const checks = [
      { id: 3, at: '2026-01-01T00:02:00.000Z', ok: true, status: 'up', responseTimeMs: 30 },
      { id: 2, at: '2026-01-01T00:01:00.000Z', ok: false, status: 'down', responseTimeMs: 5, error: 'x' },
      { id: 1, at: '2026-01-01T00:00:00.000Z', ok: true, status: 'up', responseTimeMs: 10 },
    ];
    const points = responsePoints(checks);
    expect(points.map((p) => p.ms)).toEqual([10, null, 30]);
    expect(responseSummary(points)).toBe(
      'Response time over the last 3 checks: average 20 ms, latest 30 ms, 1 failed',
    );
    expect(responseSummary([])).toBe('Response time: no checks yet');
  });
});
