import { describe, expect, it } from 'vitest';
import {
  browserMaskProblems,
  browserStepsToDrafts,
  draftToBrowserStep,
  emptyBrowserStep,
  isNoChromium,
} from './browser';
import { draftOf, kindBody, moveItem, SECRET_MASK, targetOf } from './kinds';
import type { BrowserStep, Monitor } from './types';

const stored = (steps: BrowserStep[], extra: Partial<Monitor> = {}) =>
  ({ kind: 'browser-workflow', steps, ...extra }) as unknown as Monitor;

describe('browser workflow drafts', () => {
  it('round-trips every action’s fields and leaves out what the action does not read', () => {
    const steps: BrowserStep[] = [
      { action: 'goto', url: 'https://shop.example/login', timeoutMs: 10_000 },
      { action: 'fill', selector: '#user', value: 'me', secret: false, timeoutMs: 10_000 },
      { action: 'fill', selector: '#pass', value: SECRET_MASK, secret: true, timeoutMs: 10_000 },
      { action: 'press', value: 'Enter', timeoutMs: 10_000 },
      { action: 'waitFor', value: 500, timeoutMs: 10_000 },
      { action: 'expectText', selector: 'h1', value: '/welcome/i', timeoutMs: 2_000 },
      { action: 'expectUrl', value: '/home', timeoutMs: 10_000 },
    ];
    const m = stored(steps, { cookies: [{ name: 'sid', value: SECRET_MASK, domain: 'shop.example' }] });
    const body = kindBody('browser-workflow', draftOf(m));
    expect(body).toEqual({
      variables: {},
      cookies: [{ name: 'sid', value: SECRET_MASK, domain: 'shop.example' }],
      steps: [
        { action: 'goto', url: 'https://shop.example/login' },
        { action: 'fill', selector: '#user', value: 'me', secret: false },
        { action: 'fill', selector: '#pass', value: SECRET_MASK, secret: true },
        { action: 'press', value: 'Enter' },
        { action: 'waitFor', value: 500 },
        { action: 'expectText', selector: 'h1', value: '/welcome/i', timeoutMs: 2_000 },
        { action: 'expectUrl', value: '/home' },
      ],
    });
    expect(targetOf(m)).toBe('https://shop.example/login');
    expect(draftToBrowserStep({ ...emptyBrowserStep('click'), url: 'x', selector: ' #go ' })).toEqual({
      action: 'click',
      selector: '#go',
    });
  });

  it('names a hidden fill value that moved and a hidden cookie that was renamed', () => {
    const m = stored(
      [
        { action: 'goto', url: 'https://a.example/' },
        { action: 'fill', selector: '#p', value: SECRET_MASK, secret: true },
      ],
      { cookies: [{ name: 'sid', value: SECRET_MASK }] },
    );
    const d = draftOf(m);
    expect(browserMaskProblems(d.browserSteps, d.cookies, m)).toEqual([]);
    const moved = moveItem(browserStepsToDrafts(m), 1, 0);
    const renamed = [{ name: 'session', value: SECRET_MASK, domain: '' }];
    expect(browserMaskProblems(moved, renamed, m)).toEqual([
      'step 1: it moved, so its hidden value cannot be kept; type it again',
      'cookie "session": type the hidden value again',
    ]);
  });

  it('knows the server’s no-browser error', () => {
    expect(isNoChromium('no Chromium available (set BELFRY_CHROMIUM_PATH)')).toBe(true);
    expect(isNoChromium('step 1 goto: connection refused')).toBe(false);
  });
});
