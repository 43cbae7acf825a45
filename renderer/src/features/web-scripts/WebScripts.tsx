import '../heartbeats/heartbeats.css';
import './web-scripts.css';
import { useCallback, useEffect, useRef, useState } from 'react';
import { del, get, post, put, query } from '../../api/client';
import type { Channel } from '../../api/types';
import { useServiceEvents, useSignals } from '../../app/live';
import { Link, navigate, useLocation } from '../../app/router';
import { ErrorText, formatDate, useAction } from '../../components/ui';
import { StatusChip } from '../heartbeats/HealthDot';
import { ChannelFilter } from '../sources/ChannelFilter';
import { ScriptCharts, Sparkline, useErrorSeries } from './Charts';
import { Issues } from './Issues';
import { IssueView } from './IssueView';
import { ScriptForm } from './ScriptForm';
import { Snippet } from './Snippet';
import { SourceMaps } from './SourceMaps';
import type { WebScript } from './types';
import { errorCounts } from './webScripts';

/** A service frame about web script `id`. */
function isAbout(e: { kind: string; data: Record<string, unknown> }): number | null {
  if (!e.kind.startsWith('web-script')) return null;
  const id = e.data.scriptId ?? e.data.id;
  return typeof id === 'number' ? id : null;
}

function RowSpark({ id, version }: { id: number; version: string }) {
  const points = useErrorSeries(id, version);
  if (!points) return null;
  const v = errorCounts(points);
  return <Sparkline values={v} label={`Errors, last 24 hours: ${v.reduce((a, b) => a + b, 0)}`} />;
}

/**
 * Web scripts (wire-families §9): the list (`/web-scripts`, `?channel=`), one script with its snippet,
 * issues, charts and source maps (`?id=`), one issue (`?id=&issue=`), and the create form (`?new=1`).
 */
export default function WebScripts() {
  const { search } = useLocation();
  const channelFilter = Number(search.get('channel')) || null;
  const openId = Number(search.get('id')) || null;
  const issueId = Number(search.get('issue')) || null;
  const creating = search.get('new') === '1';
  const [channels, setChannels] = useState<Channel[]>([]);
  const [list, setList] = useState<WebScript[] | null>(null);
  const [version, setVersion] = useState(0);
  // The create and rotate answers hold the full token, shown once.
  const [shown, setShown] = useState<WebScript | null>(null);
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
        const l = await get<WebScript[]>(`/web-script${query({ appid: channelFilter })}`);
        if (at === latest.current) setList(l);
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
    setVersion((v) => v + 1);
    void reload();
  });
  useServiceEvents((e) => {
    if (isAbout(e) !== null) {
      setVersion((v) => v + 1);
      void reload();
    }
  });
  const byId = new Map(channels.map((c) => [c.id, c]));

  if (creating)
    return (
      <div className="stack hb-page">
        <Link to={`/web-scripts${query({ channel: channelFilter })}`}>← All web scripts</Link>
        <ScriptForm
          asPage
          channels={channels}
          defaultAppid={channelFilter}
          onSaved={(s) => {
            setShown(s);
            void reload();
            navigate(`/web-scripts?id=${s.id}`);
          }}
          onCancel={() => navigate(`/web-scripts${query({ channel: channelFilter })}`)}
        />
      </div>
    );

  if (openId)
    return (
      <ScriptDetail
        key={openId}
        id={openId}
        issueId={issueId}
        channels={channels}
        version={version}
        shown={shown?.id === openId ? shown : null}
        onShown={setShown}
        onChanged={() => void reload()}
      />
    );

  return (
    <section className="stack hb-page" aria-labelledby="ws-title">
      <div className="pane-head">
        <h1 id="ws-title">Web scripts</h1>
        <button
          type="button"
          className="primary"
          onClick={() => navigate(`/web-scripts${query({ new: 1, channel: channelFilter })}`)}
        >
          New web script
        </button>
      </div>
      <ChannelFilter id="ws-channel-filter" path="/web-scripts" channels={channels} value={channelFilter} />
      <ErrorText error={load.error} />
      {list && list.length === 0 ? (
        <p className="empty">
          {channelFilter
            ? 'No web scripts write to this channel.'
            : 'No web scripts yet. A web script is a snippet for your site that reports the errors visitors hit, grouped into issues, with what they did just before.'}
        </p>
      ) : null}
      <ul className="rows hb-list" aria-label="Web scripts" aria-busy={list === null && load.busy}>
        {(list ?? []).map((s) => (
          <li key={s.id} className="card hb-row" aria-label={s.name}>
            <div className="row wrap">
              <StatusChip status={s.status} />
              <Link to={`/web-scripts?id=${s.id}`} className="hb-name">
                {s.name}
              </Link>
              <span className="tag">{byId.get(s.appid)?.name ?? `channel ${s.appid}`}</span>
              <RowSpark id={s.id} version={`${version}-${s.lastCheckAt}`} />
            </div>
            <dl className="hb-facts">
              <div>
                <dt>Unresolved</dt>
                <dd>{s.unresolvedCount}</dd>
              </div>
              <div>
                <dt>Last event</dt>
                <dd>{formatDate(s.lastCheckAt)}</dd>
              </div>
            </dl>
          </li>
        ))}
      </ul>
    </section>
  );
}

function ScriptDetail({
  id,
  issueId,
  channels,
  version,
  shown,
  onShown,
  onChanged,
}: {
  id: number;
  issueId: number | null;
  channels: Channel[];
  version: number;
  shown: WebScript | null;
  onShown: (s: WebScript | null) => void;
  onChanged: () => void;
}) {
  const [script, setScript] = useState<WebScript | null>(null);
  const [editing, setEditing] = useState(false);
  const [refreshes, setRefreshes] = useState(0);
  const load = useAction();
  const act = useAction();
  const all = `${version}-${refreshes}`;
  const latest = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `all` is the refetch trigger
  useEffect(() => {
    const at = ++latest.current;
    void load.run(async () => {
      const s = await get<WebScript>(`/web-script/${id}`);
      if (at === latest.current) setScript(s);
    });
  }, [id, all, load.run]);

  if (!script)
    return (
      <section className="stack hb-page" aria-labelledby="ws-detail-title">
        <h1 id="ws-detail-title">Web script</h1>
        <Link to="/web-scripts">← All web scripts</Link>
        <ErrorText error={load.error} />
        {load.busy ? <p className="loading">Loading…</p> : null}
      </section>
    );

  const changed = () => {
    setRefreshes((n) => n + 1);
    onChanged();
  };
  if (issueId) return <IssueView script={script} issueId={issueId} version={all} onChanged={changed} />;

  const channel = channels.find((c) => c.id === script.appid);
  const update = (next: WebScript) => {
    setScript(next);
    onChanged();
  };
  const setPaused = (paused: boolean) =>
    act.run(async () => update(await put<WebScript>(`/web-script/${id}`, { paused })));
  const rotate = () =>
    act.run(async () => {
      if (!confirm('Make a new token? The old snippet stops working at once: update your pages.')) return;
      const next = await post<WebScript>(`/web-script/${id}/rotate`);
      onShown(next);
      update(next);
    });
  const remove = () =>
    act.run(async () => {
      if (
        !confirm(
          `Delete the web script “${script.name}”, its issues and source maps? Its snippet stops working.`,
        )
      )
        return;
      await del(`/web-script/${id}`);
      onShown(null);
      onChanged();
      navigate('/web-scripts');
    });
  const origins = script.allowedOrigins.includes('*') ? 'any site' : script.allowedOrigins.join(', ');

  return (
    <section className="stack hb-page" aria-labelledby="ws-detail-title">
      <Link to={`/web-scripts${query({ channel: script.appid })}`}>← All web scripts</Link>
      <div className="row wrap hb-title">
        <h1 id="ws-detail-title">{script.name}</h1>
        <span className="sr-only">Status:</span>
        <StatusChip status={script.status} />
        <span className="tag">{channel?.name ?? `channel ${script.appid}`}</span>
      </div>
      <dl className="hb-facts">
        <div>
          <dt>Unresolved</dt>
          <dd>{script.unresolvedCount}</dd>
        </div>
        <div>
          <dt>Last event</dt>
          <dd>{formatDate(script.lastCheckAt)}</dd>
        </div>
        <div>
          <dt>Priority</dt>
          <dd>{script.priority}</dd>
        </div>
        <div className="ws-wide">
          <dt>Allowed origins</dt>
          <dd className="mono ws-url">{origins}</dd>
        </div>
      </dl>
      <ErrorText error={load.error} />
      <div className="actions">
        {script.paused ? (
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
          New token
        </button>
        <button type="button" onClick={() => setRefreshes((n) => n + 1)} disabled={load.busy}>
          Refresh
        </button>
        <button type="button" className="danger" onClick={() => void remove()}>
          Delete
        </button>
      </div>
      {script.paused ? (
        <p className="notice" role="status">
          Paused: events sent now are dropped (the endpoint answers <span className="mono">paused: true</span>
          ).
        </p>
      ) : null}
      <ErrorText error={act.error} />
      {editing ? (
        <ScriptForm
          script={script}
          channels={channels}
          onSaved={(next) => {
            setEditing(false);
            update(next);
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      <Snippet
        script={shown ? { ...script, token: shown.token, url: shown.url, snippet: shown.snippet } : script}
        shownOnce={shown !== null}
      />
      <Issues scriptId={id} version={all} onChanged={changed} />
      <ScriptCharts scriptId={id} version={all} />
      <SourceMaps scriptId={id} />
    </section>
  );
}
