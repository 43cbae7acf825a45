import './heartbeats.css';
import { useCallback, useEffect, useRef, useState } from 'react';
import { del, get, post, query } from '../../api/client';
import type { Channel, Message } from '../../api/types';
import { useServiceEvents, useSignals } from '../../app/live';
import { Link, navigate, useLocation } from '../../app/router';
import { ErrorText, formatDate, Notice, PriorityBadge, useAction } from '../../components/ui';
import { ChannelFilter } from '../sources/ChannelFilter';
import { StatusChip } from './HealthDot';
import { HeartbeatForm } from './HeartbeatForm';
import { PingInstructions } from './PingInstructions';
import { PingLog } from './PingLog';
import { describeSchedule, formatDuration } from './schedule';
import type { Heartbeat, SourceHistory } from './types';
import { LazyUptimeBar, UptimeCard } from './UptimeBar';

/** When the next ping is due at the latest, in words for the states that have no deadline. */
function deadlineText(hb: Heartbeat): string {
  if (hb.deadlineAt) return formatDate(hb.deadlineAt);
  switch (hb.status) {
    case 'new':
      return 'after the first ping';
    case 'paused':
      return 'none while paused';
    case 'down':
      return 'none: down until a ping comes';
    default:
      return 'none';
  }
}

/**
 * Heartbeats (docs/api.md "Heartbeats"): the list (`/heartbeats`, `?channel=` filters), one heartbeat
 * (`?id=`) and the create form (`?new=1`). Live: every `channel:status_changed` signal reloads what
 * it concerns, so a ping or a missed deadline shows without a reload.
 */
export default function Heartbeats() {
  const { search } = useLocation();
  const channelFilter = Number(search.get('channel')) || null;
  const openId = Number(search.get('id')) || null;
  const creating = search.get('new') === '1';
  const [channels, setChannels] = useState<Channel[]>([]);
  const [list, setList] = useState<Heartbeat[] | null>(null);
  // Bumped per channel on its live signals: the uptime bars and the open log refetch.
  const [versions, setVersions] = useState<Record<number, number>>({});
  // The create and rotate answers hold the full ping URL, shown once.
  const [shown, setShown] = useState<Heartbeat | null>(null);
  const load = useAction();

  const loadChannels = useCallback(async () => {
    try {
      setChannels(await get<Channel[]>('/application'));
    } catch (err) {
      load.setError(err);
    }
  }, [load.setError]);
  // The newest request wins: a list for the previous filter that answers late is dropped.
  const latest = useRef(0);
  const reload = useCallback(
    () =>
      load.run(async () => {
        const at = ++latest.current;
        const l = await get<Heartbeat[]>(`/heartbeat${query({ appid: channelFilter })}`);
        if (at === latest.current) setList(l);
      }),
    [channelFilter, load.run],
  );
  useEffect(() => void loadChannels(), [loadChannels]);
  useEffect(() => void reload(), [reload]);
  // Shown once: leaving the heartbeat forgets the full URL.
  useEffect(() => {
    if (!openId) setShown(null);
  }, [openId]);
  useSignals((s) => {
    if (s.kind === 'share:changed') void loadChannels();
    else setVersions((v) => ({ ...v, [s.appid]: (v[s.appid] ?? 0) + 1 }));
    void reload();
  });
  // A ping (service frame of the socket) changes its row's last ping and deadline: that row is fetched.
  const listRef = useRef(list);
  listRef.current = list;
  useServiceEvents((e) => {
    const id = e.data.id;
    if (!e.kind.startsWith('heartbeat:') || typeof id !== 'number') return;
    if (!listRef.current?.some((h) => h.id === id)) return;
    get<Heartbeat>(`/heartbeat/${id}`).then(
      (fresh) => setList((l) => l?.map((h) => (h.id === id ? fresh : h)) ?? l),
      () => {},
    );
  });

  const byId = new Map(channels.map((c) => [c.id, c]));

  if (creating)
    return (
      <div className="stack hb-page">
        <Link to={`/heartbeats${query({ channel: channelFilter })}`}>← All heartbeats</Link>
        <HeartbeatForm
          asPage
          channels={channels}
          defaultAppid={channelFilter}
          onSaved={(hb) => {
            setShown(hb);
            void reload();
            navigate(`/heartbeats?id=${hb.id}`);
          }}
          onCancel={() => navigate(`/heartbeats${query({ channel: channelFilter })}`)}
        />
      </div>
    );

  if (openId)
    return (
      <HeartbeatDetail
        key={openId}
        id={openId}
        channels={channels}
        version={versions}
        shown={shown?.id === openId ? shown : null}
        onShown={setShown}
        onChanged={() => void reload()}
      />
    );

  return (
    <section className="stack hb-page" aria-labelledby="hb-title">
      <div className="pane-head">
        <h1 id="hb-title">Heartbeats</h1>
        <button
          type="button"
          className="primary"
          onClick={() => navigate(`/heartbeats${query({ new: 1, channel: channelFilter })}`)}
        >
          New heartbeat
        </button>
      </div>
      <ChannelFilter id="hb-channel-filter" path="/heartbeats" channels={channels} value={channelFilter} />
      <ErrorText error={load.error} />
      {list && list.length === 0 ? (
        <p className="empty">
          {channelFilter
            ? 'No heartbeats write to this channel.'
            : 'No heartbeats yet. A heartbeat watches a job that should ping on a schedule — a backup, a cron script — and alerts you when it does not.'}
        </p>
      ) : null}
      <ul className="rows hb-list" aria-label="Heartbeats" aria-busy={list === null && load.busy}>
        {(list ?? []).map((hb) => (
          <li key={hb.id} className="card hb-row">
            <div className="row wrap">
              <StatusChip status={hb.status} />
              <Link to={`/heartbeats?id=${hb.id}`} className="hb-name">
                {hb.name}
              </Link>
              <span className="tag">{byId.get(hb.appid)?.name ?? `channel ${hb.appid}`}</span>
              <span className="hint grow">{describeSchedule(hb)}</span>
            </div>
            <dl className="hb-facts">
              <div>
                <dt>Last ping</dt>
                <dd>{formatDate(hb.lastCheckAt)}</dd>
              </div>
              <div>
                <dt>Next deadline</dt>
                <dd>{deadlineText(hb)}</dd>
              </div>
              {hb.status === 'down' && hb.lastFailReason ? (
                <div>
                  <dt>Last failure</dt>
                  <dd>{hb.lastFailReason}</dd>
                </div>
              ) : null}
            </dl>
            <LazyUptimeBar id={hb.id} version={versions[hb.appid] ?? 0} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function HeartbeatDetail({
  id,
  channels,
  version,
  shown,
  onShown,
  onChanged,
}: {
  id: number;
  channels: Channel[];
  version: Record<number, number>;
  shown: Heartbeat | null;
  onShown: (hb: Heartbeat | null) => void;
  onChanged: () => void;
}) {
  const [hb, setHb] = useState<Heartbeat | null>(null);
  const [history, setHistory] = useState<SourceHistory | null>(null);
  const [editing, setEditing] = useState(false);
  const [notice, setNotice] = useState('');
  const load = useAction();
  const act = useAction();
  // Pings of this heartbeat (service frames) and status signals of its channel refetch it.
  const [pings, setPings] = useState(0);
  useServiceEvents((e) => {
    if (e.kind.startsWith('heartbeat:') && e.data.id === id) setPings((n) => n + 1);
  });
  const appVersion = (hb ? (version[hb.appid] ?? 0) : 0) + pings;

  const latest = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `appVersion` is the refetch trigger
  useEffect(() => {
    const at = ++latest.current;
    void load.run(async () => {
      const [h, hist] = await Promise.all([
        get<Heartbeat>(`/heartbeat/${id}`),
        get<SourceHistory>(`/monitor-history/heartbeat/${id}`),
      ]);
      if (at !== latest.current) return; // a newer refetch is on its way
      setHb(h);
      setHistory(hist);
    });
  }, [id, appVersion, load.run]);

  if (!hb)
    return (
      <section className="stack hb-page" aria-labelledby="hb-detail-title">
        <h1 id="hb-detail-title">Heartbeat</h1>
        <Link to="/heartbeats">← All heartbeats</Link>
        <ErrorText error={load.error} />
        {load.busy ? <p className="loading">Loading…</p> : null}
      </section>
    );

  const channel = channels.find((c) => c.id === hb.appid);
  const update = (next: Heartbeat) => {
    setHb(next);
    onChanged();
  };
  const action = (path: string, done: (r: unknown) => void) =>
    act.run(async () => {
      setNotice('');
      done(await post(`/heartbeat/${hb.id}/${path}`));
    });
  const sent = (what: string) => (r: unknown) => {
    const m = r as Message | null;
    setNotice(m?.title ? `${what} sent: “${m.title}”.` : `${what}: no message (today’s quota is spent).`);
  };
  const rotate = () => {
    if (!confirm('Make a new ping URL? The old one stops working at once: update your jobs.')) return;
    void action('rotate', (r) => {
      onShown(r as Heartbeat);
      update(r as Heartbeat);
    });
  };
  const remove = () =>
    act.run(async () => {
      if (!confirm(`Delete the heartbeat “${hb.name}”? Its ping URL stops working at once.`)) return;
      await del(`/heartbeat/${hb.id}`);
      onShown(null);
      onChanged();
      navigate('/heartbeats');
    });

  return (
    <section className="stack hb-page" aria-labelledby="hb-detail-title">
      <Link to={`/heartbeats${query({ channel: hb.appid })}`}>← All heartbeats</Link>
      <div className="row wrap hb-title">
        <h1 id="hb-detail-title">{hb.name}</h1>
        <span className="sr-only">Status:</span>
        <StatusChip status={hb.status} />
        <span className="tag">{channel?.name ?? `channel ${hb.appid}`}</span>
        <PriorityBadge priority={hb.priority} />
      </div>
      <ErrorText error={load.error} />
      <div className="actions">
        {hb.paused ? (
          <button
            type="button"
            className="primary"
            onClick={() => void action('resume', (r) => update(r as Heartbeat))}
          >
            Resume
          </button>
        ) : (
          <button type="button" onClick={() => void action('pause', (r) => update(r as Heartbeat))}>
            Pause
          </button>
        )}
        <button type="button" onClick={() => setEditing((e) => !e)} aria-expanded={editing}>
          Edit
        </button>
        <button type="button" onClick={() => void action('test-alert', sent('Test alert'))}>
          Send test alert
        </button>
        <button type="button" onClick={() => void action('test-recovery', sent('Test recovery'))}>
          Send test recovery
        </button>
        <button type="button" onClick={rotate}>
          New ping URL
        </button>
        <button type="button" className="danger" onClick={() => void remove()}>
          Delete
        </button>
      </div>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorText error={act.error} />
      {editing ? (
        <HeartbeatForm
          heartbeat={hb}
          channels={channels}
          onSaved={(next) => {
            setEditing(false);
            update(next);
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      <PingInstructions
        hb={shown ? { ...hb, token: shown.token, pingUrl: shown.pingUrl } : hb}
        shownOnce={shown !== null}
      />
      <section className="card stack" aria-labelledby={`state-${hb.id}`}>
        <h2 id={`state-${hb.id}`}>State</h2>
        <dl className="hb-facts">
          <div>
            <dt>Schedule</dt>
            <dd>
              {describeSchedule(hb)}, grace {formatDuration(hb.graceSec)}
            </dd>
          </div>
          <div>
            <dt>Status since</dt>
            <dd>{formatDate(hb.statusSince)}</dd>
          </div>
          <div>
            <dt>Last ping</dt>
            <dd>{formatDate(hb.lastCheckAt)}</dd>
          </div>
          <div>
            <dt>Expected by</dt>
            <dd>{hb.expectedAt ? formatDate(hb.expectedAt) : '—'}</dd>
          </div>
          <div>
            <dt>Next deadline</dt>
            <dd>{deadlineText(hb)}</dd>
          </div>
          {hb.startedAt ? (
            <div>
              <dt>Running since</dt>
              <dd>{formatDate(hb.startedAt)}</dd>
            </div>
          ) : null}
          {hb.lastDurationMs !== null && hb.lastDurationMs !== undefined ? (
            <div>
              <dt>Last run took</dt>
              <dd>{formatDuration(hb.lastDurationMs / 1000)}</dd>
            </div>
          ) : null}
          {hb.lastFailReason ? (
            <div>
              <dt>Last failure</dt>
              <dd>{hb.lastFailReason}</dd>
            </div>
          ) : null}
          <div>
            <dt>Pings while paused</dt>
            <dd>{hb.manualResume ? 'ignored (resume by hand)' : 'resume it'}</dd>
          </div>
        </dl>
      </section>
      {history ? <UptimeCard id={hb.id} history={history} /> : null}
      <PingLog id={hb.id} version={appVersion} />
    </section>
  );
}
