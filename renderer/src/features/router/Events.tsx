import { Link } from '../../app/router';
import { formatDate } from '../../components/ui';
import type { RouterEvent, RouterRule } from './types';

/** The body as it is shown: JSON indented, text as it came. */
export function prettyBody(body: unknown): string {
  if (typeof body === 'string') return body;
  return JSON.stringify(body ?? null, null, 2) ?? '';
}

function MessageLink({ e }: { e: RouterEvent }) {
  if (!e.messageId) return <span className="hint">no message</span>;
  return (
    <Link to={`/inbox${e.appid ? `?channel=${e.appid}` : ''}#message-${e.messageId}`}>
      message #{e.messageId}
    </Link>
  );
}

function RuleName({ e, rules }: { e: RouterEvent; rules: RouterRule[] }) {
  if (!e.matchedRuleId) return <span className="hint">no rule{e.messageId ? ' (default channel)' : ''}</span>;
  const r = rules.find((x) => x.id === e.matchedRuleId);
  return <Link to={`/routing?rule=${e.matchedRuleId}`}>rule “{r?.name ?? `#${e.matchedRuleId}`}”</Link>;
}

/** The latest requests the router took, newest first. */
export function EventList({ events, rules }: { events: RouterEvent[] | null; rules: RouterRule[] }) {
  return (
    <>
      {events && events.length === 0 ? (
        <p className="empty">
          No events yet. Send one with the curl line above, or paste the URL into a service’s webhook
          settings.
        </p>
      ) : null}
      <ul className="rows router-events" aria-label="Latest events">
        {(events ?? []).map((e) => (
          <li key={e.id} className="card router-event" aria-label={`${e.method} ${e.path}`}>
            <div className="row wrap">
              <span className="tag router-method">{e.method}</span>
              <Link to={`/routing?event=${e.id}`} className="mono router-path">
                {e.path}
              </Link>
              <span className="hint grow">{formatDate(e.receivedAt)}</span>
            </div>
            <div className="row wrap router-event-facts">
              <RuleName e={e} rules={rules} />
              <span aria-hidden="true">·</span>
              <MessageLink e={e} />
            </div>
          </li>
        ))}
      </ul>
    </>
  );
}

function Pairs({ label, values }: { label: string; values: Record<string, unknown> }) {
  const entries = Object.entries(values ?? {});
  if (entries.length === 0) return <p className="hint">No {label.toLowerCase()}.</p>;
  return (
    <table className="table router-pairs" aria-label={label}>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        {entries.map(([k, v]) => (
          <tr key={k}>
            <td className="mono">{k}</td>
            <td className="mono">{typeof v === 'string' ? v : JSON.stringify(v)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One event: what came (headers, query, body pretty-printed), where it went, and a rule from it. */
export function EventView({
  event: e,
  rules,
  onMakeRule,
}: {
  event: RouterEvent;
  rules: RouterRule[];
  onMakeRule: () => void;
}) {
  return (
    <section className="stack" aria-labelledby="router-event-title">
      <Link to="/routing">← Webhook router</Link>
      <div className="row wrap">
        <h1 id="router-event-title" className="mono router-path">
          {e.method} {e.path}
        </h1>
      </div>
      <dl className="router-facts">
        <div>
          <dt>Received</dt>
          <dd>{formatDate(e.receivedAt)}</dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd>{e.size} bytes</dd>
        </div>
        <div>
          <dt>Rule</dt>
          <dd>
            <RuleName e={e} rules={rules} />
          </dd>
        </div>
        <div>
          <dt>Message</dt>
          <dd>
            <MessageLink e={e} />
          </dd>
        </div>
      </dl>
      <div className="actions">
        <button type="button" className="primary" onClick={onMakeRule}>
          Make a rule from this
        </button>
      </div>
      <section className="card stack" aria-labelledby="router-event-headers">
        <h2 id="router-event-headers">Headers</h2>
        <Pairs label="Headers" values={e.headers} />
        <p className="hint">
          Credentials (authorization, cookies, service keys) are never kept. A template reads a header as{' '}
          <span className="mono">{'{{headers.x-github-event}}'}</span>.
        </p>
      </section>
      <section className="card stack" aria-labelledby="router-event-query">
        <h2 id="router-event-query">Query</h2>
        <Pairs label="Query" values={e.query} />
      </section>
      <section className="card stack" aria-labelledby="router-event-body">
        <h2 id="router-event-body">Body</h2>
        <pre className="router-body mono">{prettyBody(e.body)}</pre>
      </section>
    </section>
  );
}
