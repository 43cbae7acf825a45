import { describe, expect, it } from 'vitest';
import { helpFor, parsePrometheus, parsePromValue } from './prometheus';

describe('parsePrometheus', () => {
  it('reads names, labels with escapes, values and ms timestamps; skips comments and blank lines', () => {
    const body = [
      '# HELP http_requests_total The total number of HTTP requests.\\nSecond line \\\\ here',
      '# TYPE http_requests_total counter',
      'http_requests_total{method="post",code="200"} 1027 1395066363000',
      'http_requests_total{ method = "post" , code="400", } 3',
      '',
      '# some comment',
      'msdos_file_access_time_seconds{path="C:\\\\DIR\\\\FILE.TXT",error="Cannot find file:\\n\\"FILE.TXT\\""} 1.458255915e9',
      'metric_without_labels\t12.47',
      'neg -3.5e-2',
    ].join('\r\n');
    const { entries, help } = parsePrometheus(body);
    expect(help.get('http_requests_total')).toBe('The total number of HTTP requests.\nSecond line \\ here');
    expect(entries).toEqual([
      {
        line: 3,
        name: 'http_requests_total',
        labels: { method: 'post', code: '200' },
        value: 1027,
        timestampMs: 1395066363000,
      },
      { line: 4, name: 'http_requests_total', labels: { method: 'post', code: '400' }, value: 3 },
      {
        line: 7,
        name: 'msdos_file_access_time_seconds',
        labels: { path: 'C:\\DIR\\FILE.TXT', error: 'Cannot find file:\n"FILE.TXT"' },
        value: 1.458255915e9,
      },
      { line: 8, name: 'metric_without_labels', labels: {}, value: 12.47 },
      { line: 9, name: 'neg', labels: {}, value: -0.035 },
    ]);
  });

  it('reports each unreadable sample line by number and keeps going', () => {
    const { entries } = parsePrometheus(
      ['ok 1', '{a="b"} 1', 'x{a="b} 1', 'x{a="1",a="2"} 1', 'x 1 2 3', 'x abc', 'x 1 1.5', 'x', 'y 2'].join(
        '\n',
      ),
    );
    expect(entries).toEqual([
      { line: 1, name: 'ok', labels: {}, value: 1 },
      { line: 2, error: 'metric name expected' },
      { line: 3, error: 'unterminated value of label a' },
      { line: 4, error: 'label a given twice' },
      { line: 5, error: 'unexpected text after the timestamp' },
      { line: 6, error: 'value is not a number: abc' },
      { line: 7, error: 'timestamp must be an integer of milliseconds' },
      { line: 8, error: 'value expected' },
      { line: 9, name: 'y', labels: {}, value: 2 },
    ]);
  });

  it('parses NaN and infinities so that the caller can reject them', () => {
    expect(parsePromValue('NaN')).toBeNaN();
    expect(parsePromValue('+Inf')).toBe(Number.POSITIVE_INFINITY);
    expect(parsePromValue('-Inf')).toBe(Number.NEGATIVE_INFINITY);
    expect(parsePromValue('0x10')).toBeUndefined();
    expect(parsePromValue('.5')).toBe(0.5);
  });

  it('helpFor finds a family description for _bucket, _sum, _count and _total samples', () => {
    const help = new Map([['rpc_duration_seconds', 'RPC latency.']]);
    expect(helpFor(help, 'rpc_duration_seconds_bucket')).toBe('RPC latency.');
    expect(helpFor(help, 'rpc_duration_seconds_count')).toBe('RPC latency.');
    expect(helpFor(help, 'rpc_duration_seconds')).toBe('RPC latency.');
    expect(helpFor(help, 'other_count')).toBeUndefined();
  });
});
