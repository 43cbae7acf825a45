import { describe, expect, it } from 'vitest';
import { chartSummary, formatTags, formatValue, ingestExamples, parseTags, seriesWindow } from './metrics';

describe('metrics page helpers', () => {
  it('seriesWindow asks for the bucket holding now and the ones before it, 1,440 at most', () => {
    const now = Date.UTC(2026, 0, 15, 12, 30, 20);
    const iso = (w: { start: number; end: number }) => [w.start, w.end].map((t) => new Date(t).toISOString());
    const m = seriesWindow('1m', now);
    expect(m).toMatchObject({ from: '2026-01-14T12:31:00.000Z', to: '2026-01-15T12:30:20.000Z' });
    expect(iso(m)).toEqual(['2026-01-14T12:31:00.000Z', '2026-01-15T12:31:00.000Z']);
    // The server's count: (last bucket − first bucket) / size + 1.
    expect((Math.floor(now / 60_000) * 60_000 - m.start) / 60_000 + 1).toBe(1_440);
    expect(seriesWindow('1h', now)).toMatchObject({ from: '2026-01-08T13:00:00.000Z' });
    expect(seriesWindow('1d', now)).toMatchObject({ from: '2025-10-18T00:00:00.000Z' });
    expect(iso(seriesWindow('1d', now))[1]).toBe('2026-01-16T00:00:00.000Z');
  });

  it('seriesWindow moves its end to a last point later than this device’s clock', () => {
    const now = Date.UTC(2026, 0, 15, 12, 0, 0);
    expect(seriesWindow('1m', now, '2026-01-15T12:05:10.000Z').to).toBe('2026-01-15T12:05:10.000Z');
    expect(seriesWindow('1m', now, '2026-01-15T11:00:00.000Z').to).toBe('2026-01-15T12:00:00.000Z');
  });

  it('parseTags reads key=value lists, quoted or not, and names a bad part', () => {
    expect(parseTags('')).toEqual({ tags: {} });
    expect(parseTags('host=nas, mount="/data, x"')).toEqual({ tags: { host: 'nas', mount: '/data, x' } });
    expect(parseTags('{host="nas", room=office}')).toEqual({ tags: { host: 'nas', room: 'office' } });
    expect(parseTags('host')).toEqual({ error: 'tags: “host” is not key=value' });
  });

  it('formats tags, values and the chart summary', () => {
    expect(formatTags({})).toBe('');
    expect(formatTags({ host: 'nas', mount: '/' })).toBe('{host="nas", mount="/"}');
    expect(formatValue(21.5, '°C')).toBe('21.5 °C');
    expect(formatValue(1 / 3)).toBe('0.333333');
    expect(formatValue(81234567890)).toBe('81234567890');
    expect(formatValue(null)).toBe('—');
    expect(
      chartSummary({ name: 'temp', tags: { room: 'office' }, unit: '°C' }, '1h', [
        { at: '2026-01-15T10:00:00Z', min: 20, max: 22, avg: 21, last: 22, count: 3 },
        { at: '2026-01-15T11:00:00Z', min: 19, max: 21.5, avg: 20.5, last: 21.5, count: 2 },
      ]),
    ).toBe('temp{room="office"}, last 7 days by 1h: 2 buckets, from 19 °C to 22 °C, latest average 20.5 °C');
  });

  it('ingestExamples use the URL given in every line', () => {
    const url = 'http://127.0.0.1:8080/metric/Mabc';
    const lines = ingestExamples(url);
    expect(lines.map((l) => l.label)).toContain('curl: a Prometheus text file');
    for (const l of lines) expect(l.value).toContain(url);
    expect(lines[2]!.value).toBe(`curl -fsS --data-binary @metrics.txt -H 'Content-Type: text/plain' ${url}`);
  });
});
