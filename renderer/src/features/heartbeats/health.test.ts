import { describe, expect, it } from 'vitest';
import { healthLabel } from './HealthDot';
import { pingExamples } from './PingInstructions';

describe('channel health dots', () => {
  it('say in words what each hbStatus means, and nothing for a channel without heartbeats', () => {
    expect(healthLabel({ hbStatus: 'none', hbTotal: 0 })).toBeNull();
    expect(healthLabel({})).toBeNull();
    expect(healthLabel({ hbStatus: 'alerting', hbTotal: 3, hbAlerting: 2 })).toBe(
      'Heartbeats alerting: 2 of 3 heartbeats down',
    );
    expect(healthLabel({ hbStatus: 'degraded', hbTotal: 1, hbAlertingInfo: 1 })).toBe(
      'Heartbeats degraded: 1 of 1 heartbeat late',
    );
    expect(healthLabel({ hbStatus: 'pending', hbTotal: 2, hbPending: 2 })).toBe(
      'Heartbeats pending: waiting for the first ping of all 2',
    );
    expect(healthLabel({ hbStatus: 'ok', hbTotal: 1 })).toBe('Heartbeats ok: the heartbeat is up');
    expect(healthLabel({ hbStatus: 'ok', hbTotal: 4 })).toBe('Heartbeats ok: none of 4 late or down');
    expect(healthLabel({ hbStatus: 'ok', hbTotal: 2, hbPending: 1 })).toBe(
      'Heartbeats ok: none of 2 late or down, 1 waiting for a first ping',
    );
  });
});

describe('ping examples', () => {
  const url = 'https://belfry.example/heartbeat/ping/Habc';
  const lines = (hb: { intervalSec: number | null; schedule: string | null }) =>
    Object.fromEntries(pingExamples(url, hb).map((e) => [e.label, e.value]));

  it('use the heartbeat’s own cron schedule in the crontab line', () => {
    expect(
      lines({ intervalSec: null, schedule: '30 2 * * *' })['In a crontab: ping when the job succeeds'],
    ).toBe(`30 2 * * * /path/to/job.sh && curl -fsS -m 10 --retry 5 ${url}`);
  });

  it('turn an interval into the nearest cron step', () => {
    const crontab = (sec: number) =>
      lines({ intervalSec: sec, schedule: null })['In a crontab: ping when the job succeeds']?.split(' /')[0];
    expect(crontab(60)).toBe('* * * * *');
    expect(crontab(300)).toBe('*/5 * * * *');
    expect(crontab(3_600)).toBe('0 * * * *');
    expect(crontab(6 * 3_600)).toBe('0 */6 * * *');
    expect(crontab(86_400)).toBe('0 0 * * *');
  });

  it('cover start, exit codes, a kept body and a failure reason', () => {
    const all = lines({ intervalSec: 300, schedule: null });
    expect(all['Measure the run: /start first, then the exit code']).toBe(
      `curl -fsS -m 10 --retry 5 ${url}/start; /path/to/job.sh; curl -fsS -m 10 --retry 5 ${url}/$?`,
    );
    expect(all['Keep the output in the ping log (first 10 kB) with the exit code']).toBe(
      `m=$(/path/to/job.sh 2>&1); curl -fsS -m 10 --retry 5 --data-raw "$m" ${url}/$?`,
    );
    expect(all['Signal a failure with a reason']).toContain(`--data-urlencode "fail_reason=`);
  });
});
