import { describe, expect, it } from 'vitest';
import { asHistoryDays, bannerText, canHideBranding, SLUG_PATTERN, slugFrom } from './summary';

describe('status page helpers', () => {
  it('names the overall state in the page language', () => {
    expect(bannerText('operational', 'en')).toBe('All systems operational');
    expect(bannerText('outage', 'en')).toBe('Major outage');
    expect(bannerText('degraded', 'ru')).toBe('Частичный сбой');
    expect(bannerText('maintenance', 'ru')).toBe('Плановые работы');
  });

  it('suggests a slug the server accepts', () => {
    expect(slugFrom('ACME Cloud — Status!')).toBe('acme-cloud-status');
    expect(slugFrom('Café öffnet')).toBe('cafe-offnet');
    // Cut at 60, then no dash left hanging at the end.
    const long = slugFrom(`${'x'.repeat(59)} y z`);
    expect(long).toBe('x'.repeat(59));
    expect(long).toMatch(new RegExp(SLUG_PATTERN));
  });

  it('reads summary days as history days for the uptime bar', () => {
    expect(asHistoryDays([{ date: '2026-11-25', uptime: 99.5, status: 'down' }])).toEqual([
      { date: '2026-11-25', uptime: 99.5, status: 'down', downSec: 0, avgMs: null },
    ]);
  });

  it('hides branding only on the pro and business plans', () => {
    expect(canHideBranding('free')).toBe(false);
    expect(canHideBranding(undefined)).toBe(false);
    expect(canHideBranding('pro')).toBe(true);
    expect(canHideBranding('business')).toBe(true);
  });
});
