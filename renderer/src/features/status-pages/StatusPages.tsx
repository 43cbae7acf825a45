import '../heartbeats/heartbeats.css';
import './status-pages.css';
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { del, get, query } from '../../api/client';
import type { Channel } from '../../api/types';
import { useSignals } from '../../app/live';
import { Link, navigate, useLocation } from '../../app/router';
import { CopyField, ErrorText, formatDate, useAction } from '../../components/ui';
import { StatusPageForm } from './StatusPageForm';
import { SummaryPreview } from './SummaryPreview';
import type { StatusPage, Subscriber } from './types';

/** The page's subscribers (confirmed or still waiting for their mail), each removable. */
function Subscribers({ page }: { page: StatusPage }) {
  const [list, setList] = useState<Subscriber[] | null>(null);
  const load = useAction();
  const headId = useId();
  const reload = useCallback(
    () => load.run(async () => setList(await get<Subscriber[]>(`/status-page/${page.id}/subscribers`))),
    [page.id, load.run],
  );
  useEffect(() => void reload(), [reload]);
  const remove = (s: Subscriber) =>
    load.run(async () => {
      if (!confirm(`Remove the subscriber ${s.email}? They get no more incident mails.`)) return;
      await del(`/status-page/${page.id}/subscribers/${s.id}`);
      setList((l) => l?.filter((x) => x.id !== s.id) ?? l);
    });
  return (
    <section className="card stack" aria-labelledby={headId}>
      <h2 id={headId}>Subscribers</h2>
      <p className="hint">
        Visitors subscribe on the public page and confirm by mail; confirmed subscribers get a mail when an
        incident starts and when it is resolved.
      </p>
      <ErrorText error={load.error} />
      {list && list.length === 0 ? <p className="empty">No subscribers yet.</p> : null}
      <ul className="rows" aria-label="Subscribers" aria-busy={list === null && load.busy}>
        {(list ?? []).map((s) => (
          <li key={s.id} className="row wrap">
            <span className="grow">{s.email}</span>
            <span className="tag">{s.confirmed ? 'confirmed' : 'not confirmed yet'}</span>
            <span className="hint">since {formatDate(s.createdAt)}</span>
            <button
              type="button"
              className="danger"
              onClick={() => void remove(s)}
              aria-label={`Remove ${s.email}`}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function StatusPageDetail({
  page,
  channels,
  version,
  onChanged,
}: {
  page: StatusPage;
  channels: Channel[];
  version: number;
  onChanged: (p: StatusPage | null) => void;
}) {
  const [editing, setEditing] = useState(false);
  const [saves, setSaves] = useState(0);
  const act = useAction();
  const channel = channels.find((c) => c.id === page.appid);
  const remove = () =>
    act.run(async () => {
      if (!confirm(`Delete the status page “${page.title || page.slug}”? Its address stops working at once.`))
        return;
      await del(`/status-page/${page.id}`);
      onChanged(null);
    });
  return (
    <section className="stack hb-page" aria-labelledby="sp-detail-title">
      <Link to="/status-pages">← All status pages</Link>
      <div className="row wrap hb-title">
        <h1 id="sp-detail-title">{page.title || page.slug}</h1>
        <span className="tag">{channel?.name ?? `channel ${page.appid}`}</span>
        {page.enabled ? null : <span className="tag">not published</span>}
      </div>
      <div className="actions">
        <a href={page.url} target="_blank" rel="noopener noreferrer" className="sp-open">
          Open the public page
        </a>
        <button type="button" onClick={() => setEditing((e) => !e)} aria-expanded={editing}>
          Edit
        </button>
        <button type="button" className="danger" onClick={() => void remove()}>
          Delete
        </button>
      </div>
      <ErrorText error={act.error} />
      <CopyField label="Public address" value={page.url} />
      {editing ? (
        <StatusPageForm
          page={page}
          channels={channels}
          onSaved={(p) => {
            setEditing(false);
            setSaves((n) => n + 1);
            onChanged(p);
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      <SummaryPreview slug={page.slug} enabled={page.enabled} version={version + saves} />
      <Subscribers page={page} />
    </section>
  );
}

/**
 * Status pages (docs/api.md "Status pages"): the list (`/status-pages`), one page (`?id=`: its public
 * address, a preview of its summary, its subscribers) and the create form (`?new=1`, `&channel=` picks
 * the channel). A status signal of any channel refreshes the preview (a service went down or came back).
 */
export default function StatusPages() {
  const { search } = useLocation();
  const openId = Number(search.get('id')) || null;
  const creating = search.get('new') === '1';
  const [list, setList] = useState<StatusPage[] | null>(null);
  const [channels, setChannels] = useState<Channel[]>([]);
  const [version, setVersion] = useState(0);
  const load = useAction();
  const latest = useRef(0);
  const reload = useCallback(
    () =>
      load.run(async () => {
        const at = ++latest.current;
        const [l, c] = await Promise.all([get<StatusPage[]>('/status-page'), get<Channel[]>('/application')]);
        if (at !== latest.current) return;
        setList(l);
        setChannels(c);
      }),
    [load.run],
  );
  useEffect(() => void reload(), [reload]);
  useSignals((s) => {
    if (s.kind === 'channel:status_changed') setVersion((v) => v + 1);
    else void reload();
  });
  const byId = new Map(channels.map((c) => [c.id, c]));

  if (creating)
    return (
      <div className="stack hb-page">
        <Link to="/status-pages">← All status pages</Link>
        <ErrorText error={load.error} />
        <StatusPageForm
          asPage
          channels={channels}
          defaultAppid={Number(search.get('channel')) || null}
          onSaved={(p) => {
            void reload();
            navigate(`/status-pages${query({ id: p.id })}`);
          }}
          onCancel={() => navigate('/status-pages')}
        />
      </div>
    );

  if (openId) {
    const page = list?.find((p) => p.id === openId);
    if (!page)
      return (
        <section className="stack hb-page">
          <Link to="/status-pages">← All status pages</Link>
          <ErrorText error={load.error} />
          {list ? (
            <p className="empty">This status page does not exist (any more).</p>
          ) : (
            <p className="loading">Loading…</p>
          )}
        </section>
      );
    return (
      <StatusPageDetail
        key={page.id}
        page={page}
        channels={channels}
        version={version}
        onChanged={(p) => {
          if (p) setList((l) => l?.map((x) => (x.id === p.id ? p : x)) ?? l);
          else {
            void reload();
            navigate('/status-pages');
          }
        }}
      />
    );
  }

  return (
    <section className="stack hb-page" aria-labelledby="sp-title">
      <div className="pane-head">
        <h1 id="sp-title">Status pages</h1>
        <button
          type="button"
          className="primary"
          onClick={() => navigate(`/status-pages${query({ new: 1 })}`)}
        >
          New status page
        </button>
      </div>
      <ErrorText error={load.error} />
      {list && list.length === 0 ? (
        <p className="empty">
          No status pages yet. A status page shows the public the state of a channel’s heartbeats and
          monitors, 90 days of uptime and past incidents, and lets them subscribe by mail.
        </p>
      ) : null}
      <ul className="rows" aria-label="Status pages" aria-busy={list === null && load.busy}>
        {(list ?? []).map((p) => (
          <li key={p.id} className="card hb-row" aria-label={p.title || p.slug}>
            <div className="row wrap">
              <Link to={`/status-pages${query({ id: p.id })}`} className="hb-name">
                {p.title || p.slug}
              </Link>
              <span className="tag">{byId.get(p.appid)?.name ?? `channel ${p.appid}`}</span>
              <span className="tag">{p.lang}</span>
              {p.enabled ? null : <span className="tag">not published</span>}
              <span className="grow" />
              <a href={p.url} target="_blank" rel="noopener noreferrer" className="mono">
                /status/{p.slug}
              </a>
            </div>
            {p.description ? <p className="hint">{p.description}</p> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
