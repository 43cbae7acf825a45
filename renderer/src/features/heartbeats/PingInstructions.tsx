import { CopyField } from '../../components/ui';
import type { Heartbeat } from './types';

const CURL = 'curl -fsS -m 10 --retry 5';

/** A crontab line for the heartbeat's own schedule (an interval becomes the nearest cron step). */
function cronFor(hb: Pick<Heartbeat, 'intervalSec' | 'schedule'>): string {
  if (hb.schedule) return hb.schedule;
  const min = Math.max(1, Math.round((hb.intervalSec ?? 300) / 60));
  if (min < 60) return min === 1 ? '* * * * *' : `*/${min} * * * *`;
  const h = Math.round(min / 60);
  if (h < 24) return h === 1 ? '0 * * * *' : `0 */${h} * * *`;
  return '0 0 * * *';
}

/** The shell lines that ping a heartbeat, for the URL given (full when just shown, else masked). */
export function pingExamples(url: string, hb: Pick<Heartbeat, 'intervalSec' | 'schedule'>) {
  const job = '/path/to/job.sh';
  return [
    { label: 'Ping it (success)', value: `${CURL} ${url}` },
    { label: 'In a crontab: ping when the job succeeds', value: `${cronFor(hb)} ${job} && ${CURL} ${url}` },
    {
      label: 'Report the exit code (0 is success, 1-255 a failure)',
      value: `${job}; ${CURL} ${url}/$?`,
    },
    {
      label: 'Measure the run: /start first, then the exit code',
      value: `${CURL} ${url}/start; ${job}; ${CURL} ${url}/$?`,
    },
    {
      label: 'Keep the output in the ping log (first 10 kB) with the exit code',
      value: `m=$(${job} 2>&1); ${CURL} --data-raw "$m" ${url}/$?`,
    },
    {
      label: 'Signal a failure with a reason',
      value: `${CURL} --data-urlencode "fail_reason=backup disk not mounted" ${url}/fail`,
    },
  ];
}

/**
 * The ping URL and ready-made lines. The full URL exists only in the create and rotate answers
 * (`shownOnce`); afterwards the masked one is shown and the lines are for reading, not copying.
 */
export function PingInstructions({ hb, shownOnce }: { hb: Heartbeat; shownOnce: boolean }) {
  return (
    <section className={shownOnce ? 'card stack shown-once' : 'card stack'} aria-labelledby={`ping-${hb.id}`}>
      <h2 id={`ping-${hb.id}`}>Ping URL</h2>
      {shownOnce ? (
        <div className="stack" role="status">
          <CopyField label="Ping URL (shown once)" value={hb.pingUrl} secret />
          <p className="hint">
            Copy it now: Belfry keeps only a fingerprint of its token and cannot show it again. “New ping URL”
            makes another one.
          </p>
        </div>
      ) : (
        <p className="hint">
          <span className="mono">{hb.pingUrl}</span>
          <br />
          The full URL was shown once when the heartbeat was made; “New ping URL” replaces it.
        </p>
      )}
      <details open={shownOnce}>
        <summary>Examples: curl, crontab, exit codes</summary>
        <div className="stack">
          {pingExamples(hb.pingUrl, hb).map((e) =>
            shownOnce ? (
              <CopyField key={e.label} label={e.label} value={e.value} />
            ) : (
              <div key={e.label} className="field">
                <span className="hint">{e.label}</span>
                <code className="mono example">{e.value}</code>
              </div>
            ),
          )}
          <p className="hint">
            GET, HEAD and POST all work; a POST body (up to 10 kB) is kept in the ping log. A{' '}
            <span className="mono">fail_reason</span> in the query, a form or JSON body turns a ping into a
            failure. No credentials needed: the token in the URL is the key.
          </p>
        </div>
      </details>
    </section>
  );
}
