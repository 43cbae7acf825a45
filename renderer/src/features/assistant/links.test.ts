import { describe, expect, it } from 'vitest';
import { assistantLang, insightHref } from './links';

describe('insightHref', () => {
  it('opens a channel in the inbox and a source on its page', () => {
    expect(insightHref({ kind: 'channel', id: 7 })).toBe('/inbox?channel=7');
    expect(insightHref({ kind: 'heartbeat', id: 3 })).toBe('/heartbeats?id=3');
    expect(insightHref({ kind: 'http-monitor', id: 12 })).toBe('/monitors?kind=http-monitor&id=12');
    expect(insightHref({ kind: 'browser-workflow', id: 4 })).toBe('/monitors?kind=browser-workflow&id=4');
    expect(insightHref({ kind: 'metric-source', id: 5 })).toBe('/metrics?id=5');
    expect(insightHref({ kind: 'web-script', id: 6 })).toBe('/web-scripts?id=6');
    expect(insightHref({ kind: 'email-inbox', id: 8 })).toBe('/inboxes?id=8');
  });

  it('sends list-only kinds to their list, and gives no link for unknown kinds or bad ids', () => {
    expect(insightHref({ kind: 'port-scan', id: 2 })).toBe('/port-scans');
    expect(insightHref({ kind: 'router-rule', id: 2 })).toBe('/routing');
    expect(insightHref({ kind: 'something-new', id: 2 })).toBeNull();
    expect(insightHref({ kind: 'channel', id: 0 })).toBeNull();
    expect(insightHref({ kind: 'heartbeat', id: 1.5 })).toBeNull();
  });
});

describe('assistantLang', () => {
  it('is ru for a Russian browser and en otherwise', () => {
    expect(assistantLang(['ru-RU', 'en'])).toBe('ru');
    expect(assistantLang(['RU'])).toBe('ru');
    expect(assistantLang(['en-GB', 'ru'])).toBe('en');
    expect(assistantLang(['de'])).toBe('en');
    expect(assistantLang([])).toBe('en');
  });
});
