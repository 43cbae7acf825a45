import { describe, expect, it } from 'vitest';
import { DEFAULT_QUIET_HOURS, type QuietHours } from '../../features/current-user/quiet-hours';
import { quietWindowAt } from './quiet-window';

const qh = (over: Partial<QuietHours>): QuietHours => ({ ...DEFAULT_QUIET_HOURS, enabled: true, ...over });
const at = (s: string) => Date.parse(s);
const win = (start: string, end: string) => ({ start: at(start), end: at(end) });

describe('quietWindowAt', () => {
  it('gives the start and end instants of the window containing t, spanning midnight', () => {
    const q = qh({ timezone: 'UTC', start: '23:00', end: '08:00' });
    expect(quietWindowAt(q, at('2026-01-05T23:30:00Z'))).toEqual(
      win('2026-01-05T23:00:00Z', '2026-01-06T08:00:00Z'),
    );
    expect(quietWindowAt(q, at('2026-01-06T07:59:59Z'))).toEqual(
      win('2026-01-05T23:00:00Z', '2026-01-06T08:00:00Z'),
    );
    expect(quietWindowAt(q, at('2026-01-06T08:00:00Z'))).toBeNull();
    expect(quietWindowAt({ ...q, enabled: false }, at('2026-01-05T23:30:00Z'))).toBeNull();
  });

  it('is DST-correct in Europe/Berlin: spring forward shortens the night, fall back lengthens it', () => {
    const q = qh({ timezone: 'Europe/Berlin', start: '22:00', end: '07:00' });
    // 2026-03-29 02:00 CET → 03:00 CEST: 22:00 CET (21:00Z) to 07:00 CEST (05:00Z), 8 h.
    expect(quietWindowAt(q, at('2026-03-29T01:30:00Z'))).toEqual(
      win('2026-03-28T21:00:00Z', '2026-03-29T05:00:00Z'),
    );
    // 2026-10-25 03:00 CEST → 02:00 CET: 22:00 CEST (20:00Z) to 07:00 CET (06:00Z), 10 h.
    expect(quietWindowAt(q, at('2026-10-25T05:59:00Z'))).toEqual(
      win('2026-10-24T20:00:00Z', '2026-10-25T06:00:00Z'),
    );
  });

  it('counts days by the start day', () => {
    const fri = qh({ timezone: 'UTC', start: '22:00', end: '06:00', days: [5] }); // 2026-01-16 is a Friday
    expect(quietWindowAt(fri, at('2026-01-17T05:00:00Z'))).toEqual(
      win('2026-01-16T22:00:00Z', '2026-01-17T06:00:00Z'),
    );
    expect(quietWindowAt(fri, at('2026-01-17T23:00:00Z'))).toBeNull();
    expect(quietWindowAt(qh({ start: '10:00', end: '10:00' }), at('2026-01-17T10:00:00Z'))).toBeNull();
  });
});
