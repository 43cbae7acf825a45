import '../heartbeats/heartbeats.css';
import './metrics.css';
import { useCallback, useEffect, useRef, useState } from 'react';
import { del, get, post, put, query } from '../../api/client';
import type { Channel } from '../../api/types';
import { useServiceEvents, useSignals } from '../../app/live';
import { Link, navigate, useLocation } from '../../app/router';
import { ErrorText, formatDate, useAction, useTicker } from '../../components/ui';
import { StatusChip } from '../heartbeats/HealthDot';
import { useInView } from '../heartbeats/UptimeBar';
import { ChannelFilter } from '../sources/ChannelFilter';
import { Alerts } from './Alerts';
import { Ingest } from './Ingest';
import { SeriesList } from './SeriesList';
import { SourceForm } from './SourceForm';
import type { Metric, MetricAlert, MetricSource } from './types';

/** The open source's series and chart refetch this often while the page is visible, besides live signals. */
const REFRESH_MS = 30_000;

/** A service frame about metric source `id` (whatever the server names its metric frames). */
function isAbout(e: { kind: string; data: Record<string, unknown> }): number | null {
  if (!e.kind.startsWith('metric')) return null;
  const id = e.data.sourceId ?? e.data.id;
  return typeof id === 'number' ? id : null;
}

/** A list row's series count, fetched once the row is in view and again on `version`. */
function SeriesCount({ id, version }: { id: number; version: string }) {
  const ref = useRef<HTMLElement>(null);
  const visible = useInView(ref);
  const [count, setCount] = useState<number | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the refetch trigger
  useEffect(() => {
    if (!visible) return;
    let live = true;
    get<Metric[]>(`/metric-source/${id}/metrics`).then(
      (l) => live && setCount(l.length),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [id, visible, version]);
  return <dd ref={ref}>{count === null ? '…' : count}</dd>;
}

/**
 * Metrics (wire-families §8): the sources (`/metrics`, `?channel=` filters), one source with its ingest
 * URL, series, charts and alerts (`?id=`), and the create form (`?new=1`). Live: channel status signals
 * (a source turning ok, firing, paused) reload what they concern; the open source refreshes every 30 s.
 */
export default function Metrics() {
  const { search } = useLocation();
  const channelFilter = Number(search.get('channel')) || null;
  const openId = Number(search.get('id')) || null;
  const creating = search.get('new') === '1';
  const [channels, setChannels] = useState<Channel[]>([]);
  const [list, setList] = useState<MetricSource[] | null>(null);
  // Per channel: bumped by its live signals, so rows and the open source refetch.
  const [versions, setVersions] = useState<Record<number, number>>({});
  // The create and rotate answers hold the full URL, shown once.
  const [shown, setShown] = useState<MetricSource | null>(null);
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
        const l = await get<MetricSource[]>(`/metric-source${query({ appid: channelFilter })}`);
        if (at === latest.current) setList(channelFilter ? l.filter((s) => s.appid === channelFilter) : l);
      }),
    [channelFilter, load.run],
  );
  useEffect(() => void loadChannels(), [loadChannels]);
  useEffect(() => void reload(), [reload]);
  useEffect(() => {
    if (!openId) setShown(null);
  }, [openId]);
  useSignals((s) => {
    if (s.kind === 'share:changed') void loadChannels();
    else setVersions((v) => ({ ...v, [s.appid]: (v[s.appid] ?? 0) + 1 }));
    void reload();
  });
  const [frames, setFrames] = useState<Record<number, number>>({});
  useServiceEvents((e) => {
    const id = isAbout(e);
    if (id !== null) setFrames((f) => ({ ...f, [id]: (f[id] ?? 0) + 1 }));
  });

  const byId = new Map(channels.map((c) => [c.id, c]));

  if (creating)
    return (
      <div className="stack hb-page">
        <Link to={`/metrics${query({ channel: channelFilter })}`}>← All metric sources</Link>
        <SourceForm
          asPage
          channels={channels}
          defaultAppid={channelFilter}
          onSaved={(s) => {
            setShown(s);
            void reload();
            navigate(`/metrics?id=${s.id}`);
          }}
          onCancel={() => navigate(`/metrics${query({ channel: channelFilter })}`)}
        />
      </div>
    );

  if (openId) {
    const appid = list?.find((s) => s.id === openId)?.appid;
    return (
      <SourceDetail
        key={openId}
        id={openId}
        channels={channels}
        version={(appid ? (versions[appid] ?? 0) : 0) + (frames[openId] ?? 0)}
        shown={shown?.id === openId ? shown : null}
        onShown={setShown}
        onChanged={() => void reload()}
      />
    );
  }

  return (
    <section className="stack hb-page" aria-labelledby="metrics-title">
      <div className="pane-head">
        <h1 id="metrics-title">Metrics</h1>
        <button
          type="button"
          className="primary"
          onClick={() => navigate(`/metrics${query({ new: 1, channel: channelFilter })}`)}
        >
          New metric source
        </button>
      </div>
      <ChannelFilter id="metrics-channel-filter" path="/metrics" channels={channels} value={channelFilter} />
      <ErrorText error={load.error} />
      {list && list.length === 0 ? (
        <p className="empty">
          {channelFilter
            ? 'No metric sources write to this channel.'
            : 'No metric sources yet. A metric source takes numbers — a temperature, a disk’s free space, a job’s run time — from your scripts or an exporter, draws them and alerts you when one crosses a line.'}
        </p>
      ) : null}
      <ul className="rows hb-list" aria-label="Metric sources" aria-busy={list === null && load.busy}>
        {(list ?? []).map((s) => (
          <li key={s.id} className="card hb-row" aria-label={s.name}>
            <div className="row wrap">
              <StatusChip status={s.status} />
              <Link to={`/metrics?id=${s.id}`} className="hb-name">
                {s.name}
              </Link>
              <span className="tag">{byId.get(s.appid)?.name ?? `channel ${s.appid}`}</span>
            </div>
            <dl className="hb-facts">
              <div>
                <dt>Last point</dt>
                <dd>{formatDate(s.lastCheckAt)}</dd>
              </div>
              <div>
                <dt>Series</dt>
                <SeriesCount
                  id={s.id}
                  version={`${versions[s.appid] ?? 0}-${frames[s.id] ?? 0}-${s.lastCheckAt}`}
                />
              </div>
            </dl>
          </li>
        ))}
      </ul>
    </section>
  );
}

function SourceDetail({
  id,
  channels,
  version,
  shown,
  onShown,
  onChanged,
}: {
  id: number;
  channels: Channel[];
  version: number;
  shown: MetricSource | null;
  onShown: (s: MetricSource | null) => void;
  onChanged: () => void;
}) {
  const [source, setSource] = useState<MetricSource | null>(null);
  const [series, setSeries] = useState<Metric[] | null>(null);
  const [alerts, setAlerts] = useState<MetricAlert[] | null>(null);
  const [editing, setEditing] = useState(false);
  const [refreshes, setRefreshes] = useState(0);
  const tick = useTicker(REFRESH_MS);
  const load = useAction();
  const act = useAction();
  const all = version + tick + refreshes;

  const latest = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `all` is the refetch trigger
  useEffect(() => {
    const at = ++latest.current;
    void load.run(async () => {
      const [s, m, a] = await Promise.all([
        get<MetricSource>(`/metric-source/${id}`),
        get<Metric[]>(`/metric-source/${id}/metrics`),
        get<MetricAlert[]>(`/metric-source/${id}/alerts`),
      ]);
      if (at !== latest.current) return;
      setSource(s);
      setSeries(m);
      setAlerts(a);
    });
  }, [id, all, load.run]);

  if (!source)
    return (
      <section className="stack hb-page" aria-labelledby="metric-detail-title">
        <h1 id="metric-detail-title">Metric source</h1>
        <Link to="/metrics">← All metric sources</Link>
        <ErrorText error={load.error} />
        {load.busy ? <p className="loading">Loading…</p> : null}
      </section>
    );

  const channel = channels.find((c) => c.id === source.appid);
  const update = (next: MetricSource) => {
    setSource(next);
    onChanged();
  };
  const setPaused = (paused: boolean) =>
    act.run(async () => update(await put<MetricSource>(`/metric-source/${id}`, { paused })));
  const rotate = () =>
    act.run(async () => {
      if (!confirm('Make a new ingest URL? The old one stops working at once: update what sends to it.'))
        return;
      const next = await post<MetricSource>(`/metric-source/${id}/rotate`);
      onShown(next);
      update(next);
    });
  const remove = () =>
    act.run(async () => {
      if (
        !confirm(`Delete the metric source “${source.name}”, its series and alerts? Its URL stops working.`)
      )
        return;
      await del(`/metric-source/${id}`);
      onShown(null);
      onChanged();
      navigate('/metrics');
    });

  return (
    <section className="stack hb-page" aria-labelledby="metric-detail-title">
      <Link to={`/metrics${query({ channel: source.appid })}`}>← All metric sources</Link>
      <div className="row wrap hb-title">
        <h1 id="metric-detail-title">{source.name}</h1>
        <span className="sr-only">Status:</span>
        <StatusChip status={source.status} />
        <span className="tag">{channel?.name ?? `channel ${source.appid}`}</span>
      </div>
      <dl className="hb-facts">
        <div>
          <dt>Last point</dt>
          <dd>{formatDate(source.lastCheckAt)}</dd>
        </div>
        <div>
          <dt>Series</dt>
          <dd>{series?.length ?? '…'}</dd>
        </div>
        <div>
          <dt>Alerts firing</dt>
          <dd>{alerts ? alerts.filter((a) => a.enabled && a.state === 'firing').length : '…'}</dd>
        </div>
      </dl>
      <ErrorText error={load.error} />
      <div className="actions">
        {source.paused ? (
          <button type="button" className="primary" onClick={() => void setPaused(false)}>
            Resume
          </button>
        ) : (
          <button type="button" onClick={() => void setPaused(true)}>
            Pause
          </button>
        )}
        <button type="button" onClick={() => setEditing((e) => !e)} aria-expanded={editing}>
          Edit
        </button>
        <button type="button" onClick={() => void rotate()}>
          New ingest URL
        </button>
        <button type="button" onClick={() => setRefreshes((n) => n + 1)} disabled={load.busy}>
          Refresh
        </button>
        <button type="button" className="danger" onClick={() => void remove()}>
          Delete
        </button>
      </div>
      {source.paused ? (
        <p className="notice" role="status">
          Paused: points sent now are dropped (the ingest answers <span className="mono">paused: true</span>)
          and alerts do not fire.
        </p>
      ) : null}
      <ErrorText error={act.error} />
      {editing ? (
        <SourceForm
          source={source}
          channels={channels}
          onSaved={(next) => {
            setEditing(false);
            update(next);
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      <Ingest
        source={shown ? { ...source, token: shown.token, url: shown.url } : source}
        shownOnce={shown !== null}
      />
      <SeriesList sourceId={id} series={series} version={all} onChanged={setSeries} />
      <Alerts
        sourceId={id}
        alerts={alerts}
        series={series ?? []}
        onChanged={() => setRefreshes((n) => n + 1)}
      />
    </section>
  );
}
