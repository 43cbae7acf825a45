import '../heartbeats/heartbeats.css';
import './monitors.css';
import { useCallback, useEffect, useRef, useState } from 'react';
import { get, query } from '../../api/client';
import type { Channel } from '../../api/types';
import { useServiceEvents, useSignals } from '../../app/live';
import { Link, navigate, useLocation } from '../../app/router';
import { ErrorText, formatDate, useAction, useTicker } from '../../components/ui';
import { StatusChip } from '../heartbeats/HealthDot';
import type { SourceHistory } from '../heartbeats/types';
import { UptimeBar, useInView } from '../heartbeats/UptimeBar';
import { ChannelFilter } from '../sources/ChannelFilter';
import { Sparkline } from './Charts';
import { byAttention, isKind, KINDS, kindLabel, targetOf } from './kinds';
import { listAll } from './list';
import { MonitorDetail } from './MonitorDetail';
import { MonitorForm } from './MonitorForm';
import { PowerNotice } from './PowerNotice';
import type { CheckEntry, Monitor, MonitorKindName } from './types';

/** Charts refetch this often even without a status change (an up monitor's response times move on). */
const REFRESH_MS = 60_000;
const SPARK_CHECKS = 30;

/** A row's sparkline and 90-day bars, fetched once the row is in view and again on `version`. */
function RowCharts({ m, version }: { m: Monitor; version: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const visible = useInView(ref);
  const [history, setHistory] = useState<SourceHistory | null>(null);
  const [checks, setChecks] = useState<CheckEntry[] | null>(null);
  const [failed, setFailed] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the refetch trigger
  useEffect(() => {
    if (!visible) return;
    let live = true;
    const base = `/monitor-history/${m.kind}/${m.id}`;
    Promise.all([
      get<SourceHistory>(base),
      get<{ checks: CheckEntry[] }>(`${base}/log${query({ limit: SPARK_CHECKS })}`),
    ]).then(
      ([h, log]) => {
        if (!live) return;
        setHistory(h);
        setChecks(log.checks);
        setFailed(false);
      },
      () => live && setFailed(true),
    );
    return () => {
      live = false;
    };
  }, [m.kind, m.id, visible, version]);
  return (
    <div ref={ref} className="mon-charts">
      {failed ? (
        <small className="hint">history unavailable</small>
      ) : (
        <>
          {checks ? (
            <Sparkline checks={checks} />
          ) : (
            <div className="mon-spark placeholder" aria-hidden="true" />
          )}
          <div className="uptime-slot grow">
            {history ? (
              <UptimeBar days={history.days} uptime90={history.uptime['90d']} />
            ) : (
              <div className="uptime-bar placeholder" aria-hidden="true" />
            )}
          </div>
        </>
      )}
    </div>
  );
}

function KindPicker({ channel }: { channel: number | null }) {
  return (
    <section className="stack hb-page" aria-labelledby="mon-kind-title">
      <Link to={`/monitors${query({ channel })}`}>← All monitors</Link>
      <h1 id="mon-kind-title">New monitor</h1>
      <p className="hint">What should Belfry watch?</p>
      <ul className="rows mon-kinds" aria-label="Monitor kinds">
        {KINDS.map((k) => (
          <li key={k.kind} className="card">
            <Link to={`/monitors${query({ new: k.kind, channel })}`} className="hb-name">
              {k.label}
            </Link>
            <p className="hint">{k.description}</p>
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * Monitors (docs/api.md "Monitors"): every monitor of every kind (`/monitors`, `?channel=` filters), one
 * monitor (`?kind=&id=`), the kind picker (`?new=1`) and a kind's create form (`?new=<kind>`). Live:
 * `monitor:status_changed` frames of the socket refetch their row, channel status signals reload the
 * list, and the charts refresh every minute besides.
 */
export default function Monitors() {
  const { search } = useLocation();
  const channelFilter = Number(search.get('channel')) || null;
  const openKind = search.get('kind');
  const openId = Number(search.get('id')) || null;
  const creating = search.get('new');
  const [channels, setChannels] = useState<Channel[]>([]);
  const [list, setList] = useState<Monitor[] | null>(null);
  // Per monitor id: bumped by its frames, so its charts (and the open detail) refetch.
  const [versions, setVersions] = useState<Record<number, number>>({});
  const tick = useTicker(REFRESH_MS);
  const load = useAction();

  const loadChannels = useCallback(async () => {
    try {
      setChannels(await get<Channel[]>('/application'));
    } catch (err) {
      load.setError(err);
    }
  }, [load.setError]);
  const latest = useRef(0);
  const reload = useCallback(
    () =>
      load.run(async () => {
        const at = ++latest.current;
        const l = await listAll(channelFilter);
        if (at === latest.current) setList(l);
      }),
    [channelFilter, load.run],
  );
  useEffect(() => void loadChannels(), [loadChannels]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `tick` is the periodic refetch trigger
  useEffect(() => void reload(), [reload, tick]);
  useSignals((s) => {
    if (s.kind === 'share:changed') void loadChannels();
    void reload();
  });
  const listRef = useRef(list);
  listRef.current = list;
  useServiceEvents((e) => {
    if (e.kind !== 'monitor:status_changed') return;
    const { kind, id } = e.data as { kind?: string; id?: number };
    if (typeof id !== 'number' || !isKind(kind ?? null)) return;
    setVersions((v) => ({ ...v, [id]: (v[id] ?? 0) + 1 }));
    if (!listRef.current?.some((m) => m.id === id)) return;
    get<Monitor>(`/${kind}/${id}`).then(
      (fresh) => setList((l) => l?.map((m) => (m.id === id ? fresh : m)).sort(byAttention) ?? l),
      () => {},
    );
  });

  const byId = new Map(channels.map((c) => [c.id, c]));

  if (creating === '1') return <KindPicker channel={channelFilter} />;
  if (isKind(creating))
    return (
      <div className="stack hb-page">
        <Link to={`/monitors${query({ new: 1, channel: channelFilter })}`}>← Other kinds</Link>
        <MonitorForm
          key={creating}
          asPage
          kind={creating}
          channels={channels}
          defaultAppid={channelFilter}
          onSaved={(m) => {
            void reload();
            navigate(`/monitors${query({ kind: m.kind, id: m.id })}`);
          }}
          onCancel={() => navigate(`/monitors${query({ channel: channelFilter })}`)}
        />
      </div>
    );

  if (openId && isKind(openKind))
    return (
      <MonitorDetail
        key={`${openKind}-${openId}`}
        kind={openKind as MonitorKindName}
        id={openId}
        channels={channels}
        version={(versions[openId] ?? 0) + tick}
        onChanged={() => void reload()}
      />
    );

  return (
    <section className="stack hb-page" aria-labelledby="mon-title">
      <div className="pane-head">
        <h1 id="mon-title">Monitors</h1>
        <button
          type="button"
          className="primary"
          onClick={() => navigate(`/monitors${query({ new: 1, channel: channelFilter })}`)}
        >
          New monitor
        </button>
      </div>
      <ChannelFilter id="mon-channel-filter" path="/monitors" channels={channels} value={channelFilter} />
      <PowerNotice version={tick} />
      <ErrorText error={load.error} />
      {list && list.length === 0 ? (
        <p className="empty">
          {channelFilter
            ? 'No monitors write to this channel.'
            : 'No monitors yet. A monitor checks a website, an API, a page’s text or a port on a schedule and alerts you when it fails.'}
        </p>
      ) : null}
      <ul className="rows hb-list" aria-label="Monitors" aria-busy={list === null && load.busy}>
        {(list ?? []).map((m) => (
          <li key={m.id} className="card hb-row" aria-label={m.name}>
            <div className="row wrap">
              <StatusChip status={m.status} />
              <Link to={`/monitors${query({ kind: m.kind, id: m.id })}`} className="hb-name">
                {m.name}
              </Link>
              <span className="tag">{kindLabel(m.kind)}</span>
              <span className="tag">{byId.get(m.appid)?.name ?? `channel ${m.appid}`}</span>
              <span className="hint grow mono mon-target">{targetOf(m)}</span>
            </div>
            <dl className="hb-facts">
              <div>
                <dt>Last check</dt>
                <dd>{formatDate(m.lastCheckAt)}</dd>
              </div>
              <div>
                <dt>Response</dt>
                <dd>{m.lastResponseMs === null ? '—' : `${m.lastResponseMs} ms`}</dd>
              </div>
              {m.lastError ? (
                <div>
                  <dt>Last error</dt>
                  <dd className="mon-error">{m.lastError}</dd>
                </div>
              ) : null}
            </dl>
            <RowCharts m={m} version={`${versions[m.id] ?? 0}-${tick}-${m.lastCheckAt}`} />
          </li>
        ))}
      </ul>
    </section>
  );
}
