import '../heartbeats/heartbeats.css';
import './inboxes.css';
import { useCallback, useEffect, useRef, useState } from 'react';
import { get, query } from '../../api/client';
import type { Channel } from '../../api/types';
import { useLive, useSignals } from '../../app/live';
import { Link, navigate, useLocation } from '../../app/router';
import { CopyField, ErrorText, formatDate, useAction } from '../../components/ui';
import { StatusChip } from '../heartbeats/HealthDot';
import { ChannelFilter } from '../sources/ChannelFilter';
import {
  deleteInbox,
  getInbox,
  getMail,
  listInboxes,
  listMail,
  listRules,
  ruleFromMail,
  updateInbox,
} from './api';
import { InboxForm } from './InboxForm';
import { ListenerNotice, useListener } from './Listener';
import { MailList, MailView } from './Mails';
import { RuleEditor } from './RuleEditor';
import { RuleList } from './Rules';
import type { EmailInbox, InboxRule, MailEvent } from './types';

/** How often an open inbox asks for new mail (dropped mail reaches no channel socket). */
const POLL_MS = 3000;
const MAIL_LIMIT = 50;

/**
 * Email inboxes (issue 18, wire-families §10): the list (`/inboxes`, `?channel=` filters), the create
 * form (`?new=1`), one inbox with its address, rules and received mail (`?id=`), one mail
 * (`?id=&mail=`), a rule (`?id=&rule=ID|new[&from=MAIL]`).
 */
export default function EmailInboxes() {
  const { search } = useLocation();
  const channelFilter = Number(search.get('channel')) || null;
  const openId = Number(search.get('id')) || null;
  const creating = search.get('new') === '1';
  const [channels, setChannels] = useState<Channel[]>([]);
  const [list, setList] = useState<EmailInbox[] | null>(null);
  const listener = useListener();
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
        const l = await listInboxes();
        if (at === latest.current) setList(channelFilter ? l.filter((s) => s.appid === channelFilter) : l);
      }),
    [channelFilter, load.run],
  );
  useEffect(() => void loadChannels(), [loadChannels]);
  useEffect(() => void reload(), [reload]);
  useSignals((s) => {
    if (s.kind === 'share:changed') void loadChannels();
    void reload();
  });
  const byId = new Map(channels.map((c) => [c.id, c]));

  if (creating)
    return (
      <div className="stack hb-page inboxes-page">
        <Link to={`/inboxes${query({ channel: channelFilter })}`}>← All inboxes</Link>
        <h1>New inbox</h1>
        <InboxForm
          channels={channels}
          defaultAppid={channelFilter}
          onSaved={(i) => {
            void reload();
            navigate(`/inboxes?id=${i.id}`);
          }}
          onCancel={() => navigate(`/inboxes${query({ channel: channelFilter })}`)}
        />
      </div>
    );

  if (openId)
    return (
      <InboxDetail
        key={openId}
        id={openId}
        search={search}
        channels={channels}
        onChanged={() => void reload()}
      />
    );

  return (
    <section className="stack hb-page inboxes-page" aria-labelledby="inboxes-title">
      <div className="pane-head">
        <h1 id="inboxes-title">Email inboxes</h1>
        <button
          type="button"
          className="primary"
          onClick={() => navigate(`/inboxes${query({ new: 1, channel: channelFilter })}`)}
        >
          New inbox
        </button>
      </div>
      <p className="hint">
        An address of its own for each thing that can only send email — a router, a NAS, a backup job. Mail to
        it becomes a message in the inbox’s channel; rules pick titles or drop the noise.
      </p>
      <ChannelFilter id="inboxes-channel-filter" path="/inboxes" channels={channels} value={channelFilter} />
      <ErrorText error={load.error} />
      <ListenerNotice state={listener} />
      {list && list.length === 0 ? (
        <p className="empty">
          {channelFilter
            ? 'No inboxes write to this channel.'
            : 'No inboxes yet. Make one to get an address.'}
        </p>
      ) : null}
      <ul className="rows hb-list" aria-label="Inboxes" aria-busy={list === null && load.busy}>
        {(list ?? []).map((s) => (
          <li key={s.id} className="card hb-row" aria-label={s.name}>
            <div className="row wrap">
              <StatusChip status={s.status} />
              <Link to={`/inboxes?id=${s.id}`} className="hb-name">
                {s.name}
              </Link>
              <span className="tag">{byId.get(s.appid)?.name ?? `channel ${s.appid}`}</span>
            </div>
            <dl className="hb-facts">
              <div>
                <dt>Address</dt>
                {listener?.enabled === false ? (
                  <dd className="inbox-address off">
                    <span className="mono">{s.address}</span> <span className="hint">(not receiving)</span>
                  </dd>
                ) : (
                  <dd className="mono inbox-address">{s.address}</dd>
                )}
              </div>
              <div>
                <dt>Last mail</dt>
                <dd>{formatDate(s.lastCheckAt)}</dd>
              </div>
            </dl>
          </li>
        ))}
      </ul>
    </section>
  );
}

function InboxDetail({
  id,
  search,
  channels,
  onChanged,
}: {
  id: number;
  search: URLSearchParams;
  channels: Channel[];
  onChanged: () => void;
}) {
  const mailId = Number(search.get('mail')) || null;
  const ruleParam = search.get('rule');
  const fromId = Number(search.get('from')) || null;
  const [inbox, setInbox] = useState<EmailInbox | null>(null);
  const listener = useListener();
  const [rules, setRules] = useState<InboxRule[]>([]);
  const [mails, setMails] = useState<MailEvent[] | null>(null);
  const [editing, setEditing] = useState(false);
  const load = useAction();
  const act = useAction();

  const loadRules = useCallback(async () => setRules(await listRules(id)), [id]);
  const latest = useRef(0);
  const loadMail = useCallback(async () => {
    const at = ++latest.current;
    const [i, page] = await Promise.all([getInbox(id), listMail(id, MAIL_LIMIT)]);
    if (at !== latest.current) return;
    setInbox(i);
    setMails(page.events);
  }, [id]);
  const reload = useCallback(
    () => load.run(() => Promise.all([loadRules(), loadMail()])),
    [load.run, loadRules, loadMail],
  );
  useEffect(() => void reload(), [reload]);
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') loadMail().catch(() => {});
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [loadMail]);
  const { subscribe } = useLive();
  useEffect(() => subscribe(() => void loadMail().catch(() => {})), [subscribe, loadMail]);

  const back = `/inboxes?id=${id}`;

  if (!inbox)
    return (
      <section className="stack hb-page inboxes-page" aria-labelledby="inbox-detail-title">
        <Link to="/inboxes">← All inboxes</Link>
        <h1 id="inbox-detail-title">Inbox</h1>
        <ErrorText error={load.error} />
        {load.busy ? <p className="loading">Loading…</p> : null}
      </section>
    );

  if (ruleParam)
    return (
      <section className="stack hb-page inboxes-page">
        <Link to={back}>← {inbox.name}</Link>
        <ErrorText error={load.error} />
        <RuleRoute
          key={`${ruleParam}-${fromId ?? ''}`}
          inboxId={id}
          ruleParam={ruleParam}
          fromId={fromId}
          rules={rules}
          mails={mails ?? []}
          onSaved={() => {
            void reload();
            navigate(back);
          }}
          onCancel={() => navigate(fromId ? `${back}&mail=${fromId}` : back)}
        />
      </section>
    );

  if (mailId)
    return (
      <div className="stack hb-page inboxes-page">
        <MailRoute
          key={mailId}
          id={mailId}
          inbox={inbox}
          listed={mails?.find((m) => m.id === mailId)}
          rules={rules}
        />
      </div>
    );

  const channel = channels.find((c) => c.id === inbox.appid);
  const update = (next: EmailInbox) => {
    setInbox(next);
    onChanged();
  };
  const setPaused = (paused: boolean) => act.run(async () => update(await updateInbox(id, { paused })));
  const remove = () =>
    act.run(async () => {
      if (!confirm(`Delete the inbox “${inbox.name}”, its rules and mail? Its address stops taking mail.`))
        return;
      await deleteInbox(id);
      onChanged();
      navigate('/inboxes');
    });

  return (
    <section className="stack hb-page inboxes-page" aria-labelledby="inbox-detail-title">
      <Link to={`/inboxes${query({ channel: inbox.appid })}`}>← All inboxes</Link>
      <div className="row wrap hb-title">
        <h1 id="inbox-detail-title">{inbox.name}</h1>
        <span className="sr-only">Status:</span>
        <StatusChip status={inbox.status} />
        <span className="tag">{channel?.name ?? `channel ${inbox.appid}`}</span>
      </div>
      <CopyField label="Address" value={inbox.address} />
      <dl className="hb-facts">
        <div>
          <dt>Last mail</dt>
          <dd>{formatDate(inbox.lastCheckAt)}</dd>
        </div>
        <div>
          <dt>Priority</dt>
          <dd>{inbox.priority ?? 'channel default'}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{formatDate(inbox.createdAt)}</dd>
        </div>
      </dl>
      <ErrorText error={load.error} />
      <div className="actions">
        {inbox.paused ? (
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
        <button type="button" className="danger" onClick={() => void remove()}>
          Delete
        </button>
      </div>
      {inbox.paused ? (
        <p className="notice" role="status">
          Paused: mail is still taken and listed below, but no message is sent.
        </p>
      ) : null}
      <ErrorText error={act.error} />
      {editing ? (
        <InboxForm
          inbox={inbox}
          channels={channels}
          onSaved={(next) => {
            setEditing(false);
            update(next);
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      <ListenerNotice state={listener} />
      <section className="card stack" aria-labelledby="inbox-rules-title">
        <div className="pane-head">
          <h2 id="inbox-rules-title">Rules</h2>
          <button type="button" className="primary" onClick={() => navigate(`${back}&rule=new`)}>
            New rule
          </button>
        </div>
        <RuleList inboxId={id} rules={rules} onChanged={() => void reload()} />
      </section>
      <section className="card stack" aria-labelledby="inbox-mail-title">
        <div className="pane-head">
          <h2 id="inbox-mail-title">Received mail</h2>
          <button type="button" onClick={() => void reload()} disabled={load.busy}>
            Refresh
          </button>
        </div>
        <MailList inboxId={id} events={mails} rules={rules} />
      </section>
    </section>
  );
}

/** One mail: from the list when it is among the latest, else fetched on its own. */
function MailRoute({
  id,
  inbox,
  listed,
  rules,
}: {
  id: number;
  inbox: EmailInbox;
  listed: MailEvent | undefined;
  rules: InboxRule[];
}) {
  const [fetched, setFetched] = useState<MailEvent | null>(null);
  const act = useAction();
  const missing = listed === undefined;
  useEffect(() => {
    if (missing) void act.run(async () => setFetched(await getMail(id)));
  }, [id, missing, act.run]);
  const mail = listed ?? fetched;
  if (!mail)
    return (
      <section className="stack" aria-labelledby="mail-title">
        <Link to={`/inboxes?id=${inbox.id}`}>← {inbox.name}</Link>
        <h1 id="mail-title">Mail #{id}</h1>
        <ErrorText error={act.error} />
        {act.busy ? <p className="loading">Loading…</p> : null}
      </section>
    );
  return (
    <MailView
      mail={mail}
      inboxName={inbox.name}
      rules={rules}
      onMakeRule={() => navigate(`/inboxes?id=${inbox.id}&rule=new&from=${mail.id}`)}
    />
  );
}

/** A rule to edit, a new one, or a new one from a mail's draft (fetched, so a reload keeps it). */
function RuleRoute({
  inboxId,
  ruleParam,
  fromId,
  rules,
  mails,
  onSaved,
  onCancel,
}: {
  inboxId: number;
  ruleParam: string;
  fromId: number | null;
  rules: InboxRule[];
  mails: MailEvent[];
  onSaved: () => void;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState<Partial<InboxRule> | null>(null);
  const act = useAction();
  useEffect(() => {
    if (ruleParam !== 'new' || !fromId) return;
    void act.run(async () => {
      const { id: _id, ...rule } = (await ruleFromMail(fromId)).rule;
      setDraft(rule);
    });
  }, [ruleParam, fromId, act.run]);

  if (ruleParam === 'new') {
    if (fromId && !draft)
      return act.error ? <ErrorText error={act.error} /> : <p className="loading">Loading…</p>;
    const from = mails.find((m) => m.id === fromId);
    return (
      <RuleEditor
        inboxId={inboxId}
        {...(draft
          ? { initial: { ...draft, name: draft.name || `Mail like “${from?.subject || `#${fromId}`}”` } }
          : {})}
        mails={mails}
        previewMailId={fromId}
        onSaved={onSaved}
        onCancel={onCancel}
      />
    );
  }
  const rule = rules.find((r) => r.id === Number(ruleParam));
  if (!rule) return <p className="loading">Loading…</p>;
  return (
    <RuleEditor
      key={rule.id}
      inboxId={inboxId}
      rule={rule}
      mails={mails}
      onSaved={onSaved}
      onCancel={onCancel}
    />
  );
}
