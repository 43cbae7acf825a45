import { useEffect, useRef, useState } from 'react';
import { del, get, post, query } from '../../api/client';
import type { Channel } from '../../api/types';
import { Link, navigate } from '../../app/router';
import { ErrorText, formatDate, PriorityBadge, useAction } from '../../components/ui';
import { StatusChip } from '../heartbeats/HealthDot';
import { HistoryLogCard, useHistoryLog } from '../heartbeats/PingLog';
import { formatDuration } from '../heartbeats/schedule';
import type { SourceHistory } from '../heartbeats/types';
import { UptimeCard } from '../heartbeats/UptimeBar';
import { NoBrowserHelp } from './BrowserResult';
import { isNoChromium } from './browser';
import { ResponseChart } from './Charts';
import { kindLabel, targetOf } from './kinds';
import { MonitorForm } from './MonitorForm';
import { PowerNotice } from './PowerNotice';
import { TestResult } from './TestResult';
import type { CheckEntry, Monitor, MonitorKindName, TestAnswer } from './types';

const PAGE = 50;

const ms = (v: number | null | undefined) => (v === null || v === undefined ? 'no data' : `${v} ms`);

/** The check log (history `…/log`): newest first, paged like messages. */
function CheckLog({ log, id }: { log: ReturnType<typeof useHistoryLog<CheckEntry>>; id: number }) {
  return (
    <HistoryLogCard
      id={id}
      title="Check log"
      noun="checks"
      columns={['Time', 'Result', 'Status after', 'Response time', 'Error']}
      log={log}
    >
      {log.entries.map((c) => (
        <tr key={c.id} className={c.ok ? undefined : 'ping-failed'}>
          <td>{formatDate(c.at)}</td>
          <td>{c.ok ? 'ok' : 'failed'}</td>
          <td>{c.status}</td>
          <td>{c.responseTimeMs === null ? '—' : `${c.responseTimeMs} ms`}</td>
          <td>{c.error ?? ''}</td>
        </tr>
      ))}
    </HistoryLogCard>
  );
}

/**
 * One monitor: its state, pause/resume, check now, edit and delete, the uptime figures and the 90 days,
 * the response-time chart over the loaded check log, and the log itself. `version` bumps (live frames of
 * this monitor, status signals of its channel, the page's periodic refresh) refetch all of it.
 */
export function MonitorDetail({
  kind,
  id,
  channels,
  version,
  onChanged,
}: {
  kind: MonitorKindName;
  id: number;
  channels: Channel[];
  version: number;
  onChanged: () => void;
}) {
  const [m, setM] = useState<Monitor | null>(null);
  const [history, setHistory] = useState<SourceHistory | null>(null);
  const [editing, setEditing] = useState(false);
  const [checked, setChecked] = useState<TestAnswer | null>(null);
  const [own, setOwn] = useState(0);
  const load = useAction();
  const act = useAction();
  const v = version + own;
  const log = useHistoryLog<CheckEntry>(kind, id, v, PAGE);

  const latest = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `v` is the refetch trigger
  useEffect(() => {
    const at = ++latest.current;
    void load.run(async () => {
      const [rec, hist] = await Promise.all([
        get<Monitor>(`/${kind}/${id}`),
        get<SourceHistory>(`/monitor-history/${kind}/${id}`),
      ]);
      if (at !== latest.current) return;
      setM(rec);
      setHistory(hist);
    });
  }, [kind, id, v, load.run]);

  if (!m)
    return (
      <section className="stack hb-page" aria-labelledby="mon-detail-title">
        <h1 id="mon-detail-title">Monitor</h1>
        <Link to="/monitors">← All monitors</Link>
        <ErrorText error={load.error} />
        {load.busy ? <p className="loading">Loading…</p> : null}
      </section>
    );

  const channel = channels.find((c) => c.id === m.appid);
  const refresh = () => {
    setOwn((n) => n + 1);
    onChanged();
  };
  const action = (path: 'pause' | 'resume' | 'check-now') =>
    act.run(async () => {
      const r = await post<Monitor | TestAnswer>(`/${kind}/${m.id}/${path}`);
      if (path === 'check-now') setChecked(r as TestAnswer);
      else setM(r as Monitor);
      refresh();
    });
  const remove = () =>
    act.run(async () => {
      if (!confirm(`Delete the monitor “${m.name}” and its history?`)) return;
      await del(`/${kind}/${m.id}`);
      onChanged();
      navigate(`/monitors${query({ channel: m.appid })}`);
    });

  return (
    <section className="stack hb-page" aria-labelledby="mon-detail-title">
      <Link to={`/monitors${query({ channel: m.appid })}`}>← All monitors</Link>
      <div className="row wrap hb-title">
        <h1 id="mon-detail-title">{m.name}</h1>
        <span className="sr-only">Status:</span>
        <StatusChip status={m.status} />
        <span className="tag">{kindLabel(m.kind)}</span>
        <span className="tag">{channel?.name ?? `channel ${m.appid}`}</span>
        <PriorityBadge priority={m.priority} />
      </div>
      <ErrorText error={load.error} />
      {m.kind === 'browser-workflow' ? <PowerNotice version={v} /> : null}
      <div className="actions">
        {m.paused ? (
          <button type="button" className="primary" onClick={() => void action('resume')}>
            Resume
          </button>
        ) : (
          <button type="button" onClick={() => void action('pause')}>
            Pause
          </button>
        )}
        <button type="button" onClick={() => void action('check-now')} disabled={act.busy}>
          Check now
        </button>
        <button type="button" onClick={() => setEditing((e) => !e)} aria-expanded={editing}>
          Edit
        </button>
        <button type="button" className="danger" onClick={() => void remove()}>
          Delete
        </button>
      </div>
      <ErrorText error={act.error} />
      {checked ? <TestResult result={checked} title="Check now" /> : null}
      {editing ? (
        <MonitorForm
          kind={kind}
          monitor={m}
          channels={channels}
          onSaved={(next) => {
            setEditing(false);
            setM(next);
            refresh();
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      <section className="card stack" aria-labelledby={`state-${m.id}`}>
        <h2 id={`state-${m.id}`}>State</h2>
        <dl className="hb-facts">
          <div>
            <dt>Target</dt>
            <dd className="mono">{targetOf(m)}</dd>
          </div>
          <div>
            <dt>Checked every</dt>
            <dd>
              {formatDuration(m.intervalSec)}, timeout {m.timeoutSec}s
              {m.retries ? `, ${m.retries} ${m.retries === 1 ? 'retry' : 'retries'}` : ''}
            </dd>
          </div>
          <div>
            <dt>Status since</dt>
            <dd>{formatDate(m.statusSince)}</dd>
          </div>
          <div>
            <dt>Last check</dt>
            <dd>{formatDate(m.lastCheckAt)}</dd>
          </div>
          <div>
            <dt>Last response</dt>
            <dd>{ms(m.lastResponseMs)}</dd>
          </div>
          {m.lastError ? (
            <div>
              <dt>Last error</dt>
              <dd className="mon-error">{m.lastError}</dd>
            </div>
          ) : null}
          {m.kind === 'content-monitor' ? (
            <>
              <div>
                <dt>Watched text</dt>
                <dd className="mono">{m.lastValue ?? 'not read yet'}</dd>
              </div>
              <div>
                <dt>Last changed</dt>
                <dd>{formatDate(m.lastChangedAt)}</dd>
              </div>
            </>
          ) : null}
        </dl>
        {isNoChromium(m.lastError) ? <NoBrowserHelp /> : null}
      </section>
      {history ? (
        <UptimeCard
          id={m.id}
          history={history}
          extra={
            <>
              <div>
                <dt>Average (24 h)</dt>
                <dd>{ms(history.responseTime.avgMs)}</dd>
              </div>
              <div>
                <dt>95th percentile (24 h)</dt>
                <dd>{ms(history.responseTime.p95Ms)}</dd>
              </div>
            </>
          }
        />
      ) : null}
      <section className="card stack" aria-labelledby={`chart-${m.id}`}>
        <h2 id={`chart-${m.id}`}>Response time</h2>
        <ResponseChart checks={log.entries} />
        <p className="hint">Successful checks of the loaded log; failed checks are the gaps.</p>
      </section>
      <CheckLog log={log} id={m.id} />
    </section>
  );
}
