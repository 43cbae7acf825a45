import { describe, expect, it } from 'vitest';
import { bodyOf, conditionDraft, draftOf, isProblem } from './draft';
import { curlExamples } from './examples';
import { keepFullToken } from './RouterSettings';
import {
  DEFAULT_TITLE,
  missingExpressions,
  pathMatches,
  renderRule,
  renderTemplate,
  whyNot,
} from './template';
import type { RouterEvent } from './types';

const push: RouterEvent = {
  id: 7,
  path: '/github',
  method: 'POST',
  query: { source: 'ci', tag: ['a', 'b'] },
  headers: { 'x-github-event': 'push', 'content-type': 'application/json' },
  body: {
    ref: 'refs/heads/main',
    repository: { full_name: 'octo/repo', owner: { login: 'octo' } },
    commits: [{ id: 'abc', message: 'Fix it' }, { id: 'def' }],
    'odd key': 'yes',
    forced: false,
    size: 2,
    nothing: null,
  },
  receivedAt: '2025-01-01T00:00:00.000Z',
  matchedRuleId: null,
  appid: null,
  messageId: null,
  size: 300,
};

describe('router templates', () => {
  it('read the body by a bare path or body., headers, query, path and method', () => {
    expect(renderTemplate('{{headers.x-github-event}} to {{repository.full_name}}', push)).toBe(
      'push to octo/repo',
    );
    expect(renderTemplate('{{body.repository.owner.login}} {{commits[0].message}}', push)).toBe(
      'octo Fix it',
    );
    expect(renderTemplate('{{ method }} {{path}} from {{query.source}}', push)).toBe('POST /github from ci');
    expect(renderTemplate('{{["odd key"]}} {{body["odd key"]}}', push)).toBe('yes yes');
    expect(renderTemplate('{{headers.X-GitHub-Event}}', push)).toBe('push');
  });

  it('render missing parts as "" and objects, arrays and scalars as compact JSON', () => {
    expect(
      renderTemplate('[{{nope.deeper}}][{{commits[5]}}][{{headers.x-none}}][{{query.none}}]', push),
    ).toBe('[][][][]');
    expect(renderTemplate('{{repository.owner}}', push)).toBe('{"login":"octo"}');
    expect(renderTemplate('{{commits[1]}} {{query.tag}}', push)).toBe('{"id":"def"} ["a","b"]');
    expect(renderTemplate('{{forced}} {{size}} [{{nothing}}]', push)).toBe('false 2 []');
    // A malformed path finds nothing; text without {{ }} stays as it is.
    expect(renderTemplate('a {{commits[x]}} b {single}', push)).toBe('a  b {single}');
  });

  it('fall back to the default title and the indented body, cut at 4,000 characters', () => {
    expect(renderRule({ title: '', message: '' }, push)).toEqual({
      title: 'POST /github',
      message: JSON.stringify(push.body, null, 2),
    });
    expect(renderRule({ title: '{{title}}', message: 'x{{nope}}' }, { ...push, body: 'plain text' })).toEqual(
      {
        title: '',
        message: 'x',
      },
    );
    expect(
      renderRule({ title: DEFAULT_TITLE, message: '{{nope}}' }, { ...push, body: 'plain text' }).message,
    ).toBe('plain text');
    expect(
      renderRule({ title: 'x', message: '' }, { ...push, body: { big: 'x'.repeat(5000) } }).message,
    ).toHaveLength(4000);
    // No body at all: the method and path.
    expect(renderRule({ title: 'x', message: '' }, { ...push, body: null }).message).toBe('POST /github');
  });

  it('name the expressions the event lacks', () => {
    expect(
      missingExpressions('{{a}} {{repository.full_name}} {{headers.x}} {{ a }} {{nothing}}', push),
    ).toEqual(['a', 'headers.x', 'nothing']);
  });
});

describe('router matching (for the preview)', () => {
  it('takes * as one segment and ** as any number', () => {
    expect(pathMatches('**', '/anything/at/all')).toBe(true);
    expect(pathMatches('', '/x')).toBe(true);
    expect(pathMatches('/github/*', '/github/push')).toBe(true);
    expect(pathMatches('/github/*', '/github/a/b')).toBe(false);
    expect(pathMatches('/github/**', '/github/a/b')).toBe(true);
    expect(pathMatches('/github/**', '/github')).toBe(true);
    expect(pathMatches('/github/**', '/gitlab/a')).toBe(false);
    expect(pathMatches('/github', '/github')).toBe(true);
    expect(pathMatches('/git*', '/github')).toBe(true);
    expect(pathMatches('/a.b', '/axb')).toBe(false);
  });

  it('says why a rule would not take an event', () => {
    const rule = { pathPattern: '/github', method: 'POST' as const, match: [] };
    expect(whyNot(rule, push)).toBeNull();
    expect(whyNot({ ...rule, method: 'PUT' }, push)).toBe('the method is POST, not PUT');
    expect(whyNot({ ...rule, pathPattern: '/stripe' }, push)).toBe('the path /github does not fit /stripe');
    expect(
      whyNot({ ...rule, match: [{ path: '$.ref', op: 'equals', value: 'refs/heads/main' }] }, push),
    ).toBeNull();
    expect(whyNot({ ...rule, match: [{ path: '$.size', op: 'equals', value: '2' }] }, push)).toBe(
      'condition 1 ($.size equals "2") does not hold',
    );
    expect(
      whyNot(
        {
          ...rule,
          match: [
            {
              path: '$.repository',
              op: 'equals',
              value: push.body && (push.body as { repository: unknown }).repository,
            },
          ],
        },
        push,
      ),
    ).toBeNull();
    expect(whyNot({ ...rule, match: [{ path: '$.nothing', op: 'exists' }] }, push)).toBeNull();
    expect(whyNot({ ...rule, match: [{ path: '$.gone', op: 'notExists' }] }, push)).toBeNull();
    expect(whyNot({ ...rule, match: [{ path: '$.forced', op: 'notExists' }] }, push)).toBe(
      'condition 1 ($.forced notExists) does not hold',
    );
  });
});

describe('rule drafts', () => {
  it('round-trip a rule, values as JSON text', () => {
    const rule = {
      name: 'Pushes',
      pathPattern: '/github',
      method: 'POST' as const,
      match: [
        { path: '$.ref', op: 'equals' as const, value: 'refs/heads/main' },
        { path: '$.size', op: 'equals' as const, value: 2 },
        { path: '$.forced', op: 'exists' as const },
      ],
      appid: 3,
      title: '{{repository.full_name}}',
      message: null,
      priority: null,
      enabled: true,
    };
    const d = draftOf(rule, null);
    expect(d.match.map((c) => c.value)).toEqual(['"refs/heads/main"', '2', '']);
    expect(bodyOf(d)).toEqual(rule);
    expect(bodyOf({ ...d, priority: '7' })).toMatchObject({ priority: 7 });
  });

  it('start a new rule with the defaults and the router default channel', () => {
    expect(draftOf(null, 4)).toMatchObject({
      pathPattern: '**',
      method: '',
      appid: 4,
      title: '{{method}} {{path}}',
    });
    expect(bodyOf(draftOf(null, null))).toMatchObject({ appid: null, method: null, priority: null });
  });

  it('name the condition whose value is not JSON, and a bad priority', () => {
    const d = draftOf(null, 1);
    d.match = [
      conditionDraft({ path: '$.a', op: 'equals', value: 1 }),
      { ...conditionDraft(), value: 'push' },
    ];
    const p = bodyOf(d);
    expect(isProblem(p) && p.text.startsWith('match[1].value: not JSON')).toBe(true);
    const q = bodyOf({ ...draftOf(null, 1), priority: '11' });
    expect(isProblem(q) && q.field).toBe('priority');
  });
});

describe('router examples', () => {
  it('give a curl line in the documented form for the URL shown', () => {
    const [first] = curlExamples('http://h/router/R1');
    expect(first?.value).toMatch(
      /^curl -X POST http:\/\/h\/router\/R1\/github -H 'Content-Type: application\/json' -d '\{.*\}'$/,
    );
  });
});

describe('the router URL on screen', () => {
  const full = {
    token: 'Rabcdef123',
    url: 'http://h/router/Rabcdef123',
    enabled: true,
    defaultAppid: null,
    createdAt: '',
  };
  const masked = { ...full, token: 'Rab****123', url: 'http://h/router/Rab****123' };
  it('stays full after a PUT answers it masked, and takes a rotated one', () => {
    expect(keepFullToken(full, { ...masked, enabled: false })).toEqual({ ...full, enabled: false });
    expect(keepFullToken(masked, masked)).toEqual(masked);
    expect(keepFullToken(null, masked)).toEqual(masked);
    const rotated = { ...full, token: 'Rnew', url: 'http://h/router/Rnew' };
    expect(keepFullToken(full, rotated)).toEqual(rotated);
  });
});
