import './router.css';
import { useCallback, useEffect, useRef, useState } from 'react';
import { get, post, query } from '../../api/client';
import type { Channel } from '../../api/types';
import { useLive } from '../../app/live';
import { Link, navigate, useLocation } from '../../app/router';
import { ErrorText, useAction } from '../../components/ui';
import { EventList, EventView } from './Events';
import { RoutedMessages } from './RoutedMessages';
import { keepFullToken, RouterSettings } from './RouterSettings';
import { RuleEditor } from './RuleEditor';
import { RuleList } from './Rules';
import type {
  FromEventAnswer,
  RoutedMessagePage,
  RouterEvent,
  RouterEventPage,
  RouterRule,
  WebhookRouter,
} from './types';

/** How often the open page asks for new events (the router's events reach no channel socket). */
const POLL_MS = 3000;
const EVENT_LIMIT = 50;

/**
 * The webhook router (issue 17): `/routing` (not `/router`, the public ingest prefix, which the UI never owns) holds the URL, the rules, the latest events and the routed
 * messages; `?event=ID` opens an event, `?rule=ID` a rule, `?rule=new[&from=EID]` a new one (from an
 * event's draft). The router is fetched once per visit: the first GET creates it with its full token,
 * later ones mask it, so the full URL lives only as long as this page is open.
 */
export default function Router() {
  const { search } = useLocation();
  const eventId = Number(search.get('event')) || null;
  const ruleParam = search.get('rule');
  const fromId = Number(search.get('from')) || null;
  const [router, setRouter] = useState<WebhookRouter | null>(null);
  const [channels, setChannels] = useState<Channel[]>([]);
  const [rules, setRules] = useState<RouterRule[]>([]);
  const [events, setEvents] = useState<RouterEvent[] | null>(null);
  const [messages, setMessages] = useState<RoutedMessagePage['messages'] | null>(null);
  const load = useAction();

  useEffect(() => {
    void load.run(async () => {
      const [r, c] = await Promise.all([
        get<WebhookRouter>('/webhook-router'),
        get<Channel[]>('/application'),
      ]);
      setRouter(r);
      setChannels(c);
    });
  }, [load.run]);
  const loadRules = useCallback(async () => {
    const r = await get<RouterRule[] | { rules: RouterRule[] }>('/webhook-router/rule');
    setRules(Array.isArray(r) ? r : r.rules);
  }, []);
  const latest = useRef(0);
  const loadActivity = useCallback(async () => {
    const at = ++latest.current;
    const [e, m] = await Promise.all([
      get<RouterEventPage>(`/webhook-router/event${query({ limit: EVENT_LIMIT })}`),
      get<RoutedMessagePage>(`/webhook-router/message${query({ limit: 20 })}`),
    ]);
    if (at !== latest.current) return;
    setEvents(e.events);
    setMessages(m.messages);
  }, []);
  const reload = useCallback(
    () => load.run(() => Promise.all([loadRules(), loadActivity()])),
    [load.run, loadRules, loadActivity],
  );
  useEffect(() => void reload(), [reload]);
  // New events while the page is open and visible; a message arriving on the socket asks at once.
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') loadActivity().catch(() => {});
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [loadActivity]);
  const { subscribe } = useLive();
  useEffect(() => subscribe(() => void loadActivity().catch(() => {})), [subscribe, loadActivity]);

  const defaultAppid = router?.defaultAppid ?? null;

  if (ruleParam)
    return (
      <section className="stack router-page">
        <Link to="/routing">← Webhook router</Link>
        <ErrorText error={load.error} />
        <RuleRoute
          key={`${ruleParam}-${fromId ?? ''}`}
          ruleParam={ruleParam}
          fromId={fromId}
          rules={rules}
          events={events ?? []}
          channels={channels}
          defaultAppid={defaultAppid}
          onSaved={() => {
            void reload();
            navigate('/routing');
          }}
        />
      </section>
    );

  if (eventId)
    return (
      <div className="stack router-page">
        <EventRoute key={eventId} id={eventId} listed={events?.find((e) => e.id === eventId)} rules={rules} />
      </div>
    );

  return (
    <section className="stack router-page" aria-labelledby="router-title">
      <div className="pane-head">
        <h1 id="router-title">Webhook router</h1>
      </div>
      <p className="hint">
        One URL for every service that sends webhooks. Each request is kept as an event; rules turn the ones
        you care about into messages with titles made from their content.
      </p>
      <ErrorText error={load.error} />
      {router ? (
        <RouterSettings
          router={router}
          channels={channels}
          onChange={(next) => setRouter((prev) => keepFullToken(prev, next))}
        />
      ) : null}
      <section className="card stack" aria-labelledby="router-rules-title">
        <div className="pane-head">
          <h2 id="router-rules-title">Rules</h2>
          <button type="button" className="primary" onClick={() => navigate('/routing?rule=new')}>
            New rule
          </button>
        </div>
        <RuleList rules={rules} channels={channels} onChanged={() => void reload()} />
      </section>
      <section className="card stack" aria-labelledby="router-events-title">
        <div className="pane-head">
          <h2 id="router-events-title">Latest events</h2>
          <button type="button" onClick={() => void reload()} disabled={load.busy}>
            Refresh
          </button>
        </div>
        <EventList events={events} rules={rules} />
      </section>
      <section className="card stack" aria-labelledby="router-messages-title">
        <h2 id="router-messages-title">Routed messages</h2>
        <RoutedMessages messages={messages} rules={rules} />
      </section>
    </section>
  );
}

/** One event: from the list when it is among the latest, else fetched on its own. */
function EventRoute({
  id,
  listed,
  rules,
}: {
  id: number;
  listed: RouterEvent | undefined;
  rules: RouterRule[];
}) {
  const [fetched, setFetched] = useState<RouterEvent | null>(null);
  const act = useAction();
  const missing = listed === undefined;
  useEffect(() => {
    if (missing) void act.run(async () => setFetched(await get<RouterEvent>(`/webhook-router/event/${id}`)));
  }, [id, missing, act.run]);
  const ev = listed ?? fetched;
  if (!ev)
    return (
      <section className="stack">
        <Link to="/routing">← Webhook router</Link>
        <h1>Event #{id}</h1>
        <ErrorText error={act.error} />
        {act.busy ? <p className="loading">Loading…</p> : null}
      </section>
    );
  return (
    <EventView event={ev} rules={rules} onMakeRule={() => navigate(`/routing?rule=new&from=${ev.id}`)} />
  );
}

/** A rule to edit, a new one, or a new one from an event's draft (fetched, so a reload keeps it). */
function RuleRoute({
  ruleParam,
  fromId,
  rules,
  events,
  channels,
  defaultAppid,
  onSaved,
}: {
  ruleParam: string;
  fromId: number | null;
  rules: RouterRule[];
  events: RouterEvent[];
  channels: Channel[];
  defaultAppid: number | null;
  onSaved: () => void;
}) {
  const [draft, setDraft] = useState<Partial<RouterRule> | null>(null);
  const act = useAction();
  useEffect(() => {
    if (ruleParam !== 'new' || !fromId) return;
    void act.run(async () => {
      const a = await post<FromEventAnswer>(`/webhook-router/rule/from-event/${fromId}`, { save: false });
      const { id: _id, ...draft } = a.rule;
      setDraft(draft);
    });
  }, [ruleParam, fromId, act.run]);

  if (ruleParam === 'new') {
    if (fromId && !draft)
      return act.error ? <ErrorText error={act.error} /> : <p className="loading">Loading…</p>;
    return (
      <RuleEditor
        {...(draft ? { initial: { ...draft, name: draft.name || `Rule from event #${fromId}` } } : {})}
        events={events}
        previewEventId={fromId}
        channels={channels}
        defaultAppid={defaultAppid}
        onSaved={onSaved}
        onCancel={() => navigate(fromId ? `/routing?event=${fromId}` : '/routing')}
      />
    );
  }
  const rule = rules.find((r) => r.id === Number(ruleParam));
  if (!rule) return <p className="loading">Loading…</p>;
  return (
    <RuleEditor
      key={rule.id}
      rule={rule}
      events={events}
      channels={channels}
      defaultAppid={defaultAppid}
      onSaved={onSaved}
      onCancel={() => navigate('/routing')}
    />
  );
}
