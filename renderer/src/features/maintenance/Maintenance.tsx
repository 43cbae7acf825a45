import '../heartbeats/heartbeats.css';
import './maintenance.css';
import { useCallback, useEffect, useRef, useState } from 'react';
import { del, get, query } from '../../api/client';
import type { Channel } from '../../api/types';
import { useSignals } from '../../app/live';
import { Link, navigate, useLocation } from '../../app/router';
import { ErrorText, useAction } from '../../components/ui';
import { StatusChip } from '../heartbeats/HealthDot';
import { browserTimeZone } from '../heartbeats/schedule';
import type { Heartbeat } from '../heartbeats/types';
import { kindLabel } from '../monitors/kinds';
import { listAll } from '../monitors/list';
import { MaintenanceForm, type SourceOption } from './MaintenanceForm';
import { describeSchedule, formatAt, occurrenceText } from './schedule';
import type { MaintenanceWindow } from './types';

/** Heartbeats and monitors of every kind, by name, as the pickers and the list name them. */
async function loadSources(): Promise<SourceOption[]> {
  const [hbs, mons] = await Promise.all([get<Heartbeat[]>('/heartbeat'), listAll(null)]);
  return [
    ...hbs.map((h) => ({ kind: 'heartbeat', id: h.id, name: h.name, appid: h.appid, label: 'Heartbeat' })),
    ...mons.map((m) => ({ kind: m.kind, id: m.id, name: m.name, appid: m.appid, label: kindLabel(m.kind) })),
  ].sort((a, b) => a.name.localeCompare(b.name));
}

function WindowState({ w }: { w: MaintenanceWindow }) {
  if (!w.enabled) return <StatusChip status="paused" />;
  if (w.active)
    return (
      <span className="hb-chip maintenance" title="Inside an occurrence now">
        active
      </span>
    );
  return <span className="hb-chip">{w.nextStart ? 'scheduled' : 'finished'}</span>;
}

/**
 * Maintenance windows (docs/api.md "Maintenance windows"): the list (`/maintenance`) with each window's
 * state and current or next occurrence, in the viewer's zone and the window's; create (`?new=1`) and
 * edit (`?id=`). A window starting or ending changes its channels' status, so the live status signals
 * reload the list.
 */
export default function Maintenance() {
  const { search } = useLocation();
  const openId = Number(search.get('id')) || null;
  const creating = search.get('new') === '1';
  const [list, setList] = useState<MaintenanceWindow[] | null>(null);
  const [channels, setChannels] = useState<Channel[]>([]);
  const [sources, setSources] = useState<SourceOption[]>([]);
  const load = useAction();
  const act = useAction();
  const viewerZone = browserTimeZone();

  const latest = useRef(0);
  const reload = useCallback(
    () =>
      load.run(async () => {
        const at = ++latest.current;
        const [l, c, s] = await Promise.all([
          get<MaintenanceWindow[]>('/maintenance-window'),
          get<Channel[]>('/application'),
          loadSources(),
        ]);
        if (at !== latest.current) return;
        setList(l);
        setChannels(c);
        setSources(s);
      }),
    [load.run],
  );
  useEffect(() => void reload(), [reload]);
  useSignals(() => void reload());

  const channelName = (id: number) => channels.find((c) => c.id === id)?.name ?? `channel ${id}`;
  const sourceName = (kind: string, id: number) =>
    sources.find((s) => s.kind === kind && s.id === id)?.name ?? `${kindLabel(kind)} ${id}`;
  const back = () => navigate('/maintenance');
  const saved = () => {
    void reload();
    back();
  };

  if (creating || openId) {
    const editing = openId ? list?.find((w) => w.id === openId) : undefined;
    return (
      <div className="stack hb-page">
        <Link to="/maintenance">← All maintenance windows</Link>
        <ErrorText error={load.error} />
        {openId && !editing ? (
          list ? (
            <p className="empty">This maintenance window does not exist (any more).</p>
          ) : (
            <p className="loading">Loading…</p>
          )
        ) : (
          <MaintenanceForm
            key={openId ?? 'new'}
            {...(editing ? { window: editing } : {})}
            channels={channels}
            sources={sources}
            onSaved={saved}
            onCancel={back}
          />
        )}
      </div>
    );
  }

  const remove = (w: MaintenanceWindow) =>
    act.run(async () => {
      if (!confirm(`Delete the maintenance window “${w.name}”?`)) return;
      await del(`/maintenance-window/${w.id}`);
      await reload();
    });

  return (
    <section className="stack hb-page" aria-labelledby="mw-title">
      <div className="pane-head">
        <h1 id="mw-title">Maintenance</h1>
        <button
          type="button"
          className="primary"
          onClick={() => navigate(`/maintenance${query({ new: 1 })}`)}
        >
          New window
        </button>
      </div>
      <ErrorText error={load.error} />
      <ErrorText error={act.error} />
      {list && list.length === 0 ? (
        <p className="empty">
          No maintenance windows yet. A window silences alerts for planned work — a weekly deploy, a one-off
          migration — and shows it on your status pages.
        </p>
      ) : null}
      <ul className="rows" aria-label="Maintenance windows" aria-busy={list === null && load.busy}>
        {(list ?? []).map((w) => {
          const occ = occurrenceText(w, viewerZone);
          return (
            <li key={w.id} className="card hb-row" aria-label={w.name}>
              <div className="row wrap">
                <WindowState w={w} />
                <Link to={`/maintenance?id=${w.id}`} className="hb-name">
                  {w.name}
                </Link>
                <span className="hint grow">
                  {w.schedule.type === 'once'
                    ? `once, ${formatAt(w.schedule.startsAt, viewerZone)} – ${formatAt(w.schedule.endsAt, viewerZone)}`
                    : describeSchedule(w.schedule)}
                </span>
                <button type="button" className="danger" onClick={() => void remove(w)}>
                  Delete
                </button>
              </div>
              <dl className="hb-facts">
                <div>
                  <dt>{w.active ? 'Current occurrence' : 'Next occurrence'}</dt>
                  <dd className="mw-occurrence">
                    {occ.when}
                    {occ.zoned ? <small className="hint">{occ.zoned}</small> : null}
                  </dd>
                </div>
                <div>
                  <dt>Channels{w.includeSubtree ? ' (with sub-channels)' : ''}</dt>
                  <dd>
                    {w.coveredChannelIds.length ? w.coveredChannelIds.map(channelName).join(', ') : 'none'}
                  </dd>
                </div>
                <div>
                  <dt>Heartbeats and monitors</dt>
                  <dd>
                    {w.monitors.length ? w.monitors.map((m) => sourceName(m.kind, m.id)).join(', ') : 'none'}
                  </dd>
                </div>
              </dl>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
