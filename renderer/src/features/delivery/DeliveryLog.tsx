import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { get, query } from '../../api/client';
import type { Channel, DeliveryEntry, DeliveryPage } from '../../api/types';
import { useLive } from '../../app/live';
import { Link } from '../../app/router';
import { ErrorText, formatDate, useAction } from '../../components/ui';
import { ADAPTERS } from './adapters';

const PAGE = 20;
/** The most one refresh asks for (the API's `limit` maximum). */
const LIMIT_MAX = 200;
/** While the log is open it asks again this often (and at once when a message arrives in the channel). */
export const REFRESH_MS = 5_000;

/** The outbox's states (docs/api.md "Delivery (re-delivery until read)"), for the filter. */
const STATUSES = ['queued', 'sending', 'sent', 'failed', 'cancelled'];

const CANCEL_TEXT: Record<string, string> = {
  read: 'read',
  deleted: 'message deleted',
  config: 'method removed or turned off',
  digest: 'sent in the digest',
};
const KIND_TEXT: Record<string, string> = {
  redelivery: 'message',
  digest: 'digest',
  test: 'test',
  callback: 'callback',
};

/** "Nov 25, 12:54:42": the log's dates, short enough for its columns (the full date in the tooltip). */
function When({ iso, prefix = '' }: { iso: string | null; prefix?: string }) {
  if (!iso) return <>—</>;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return <>{iso}</>;
  const short = d.toLocaleString([], {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  return (
    <time dateTime={iso} title={formatDate(iso)}>
      {prefix}
      {short}
    </time>
  );
}

const adapterLabel = (name: string) => ADAPTERS.find((a) => a.name === name)?.label ?? name;

/**
 * The channel's deliveries (`GET /application/{id}/deliveries`): newest first, filtered by status, older
 * pages on request. While shown it reloads what it lists every few seconds, when a message arrives in
 * the channel and when `version` changes (a test or a save).
 */
export function DeliveryLog({ channel, version }: { channel: Channel; version: number }) {
  const [entries, setEntries] = useState<DeliveryEntry[]>([]);
  const [since, setSince] = useState<number | undefined>(undefined);
  const [status, setStatus] = useState('');
  const [loaded, setLoaded] = useState(false);
  const load = useAction();
  const more = useAction();
  const at = useRef(0);
  const count = useRef(PAGE);
  const filterId = useId();
  const base = `/application/${channel.id}/deliveries`;

  /** The first page again, as long as what is shown (so older pages loaded stay current too). */
  const refresh = useCallback(
    async (quiet = false) => {
      const mine = ++at.current;
      const fetchPage = async () => {
        const page = await get<DeliveryPage>(
          `${base}${query({ limit: Math.min(count.current, LIMIT_MAX), status })}`,
        );
        if (at.current !== mine) return;
        setEntries(page.deliveries);
        setSince(page.paging.since || undefined);
        setLoaded(true);
      };
      // A background refresh neither blinks "Loading…" nor hides a shown error until it has an answer.
      if (quiet) await fetchPage().catch(() => undefined);
      else await load.run(fetchPage);
    },
    [base, status, load.run],
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the refetch trigger
  useEffect(() => {
    count.current = PAGE;
    void refresh();
  }, [refresh, version]);

  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void refresh(true);
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [refresh]);

  const { subscribe } = useLive();
  useEffect(
    () =>
      subscribe((m) => {
        if (m.appid === channel.id) void refresh(true);
      }),
    [subscribe, channel.id, refresh],
  );

  const older = () =>
    more.run(async () => {
      const mine = at.current;
      const page = await get<DeliveryPage>(`${base}${query({ limit: PAGE, since, status })}`);
      if (at.current !== mine) return;
      setEntries((prev) => {
        const ids = new Set(prev.map((e) => e.id));
        const next = [...prev, ...page.deliveries.filter((e) => !ids.has(e.id))];
        count.current = next.length;
        return next;
      });
      setSince(page.paging.since || undefined);
    });

  const titleId = `deliveries-${channel.id}`;
  return (
    <section className="card stack" aria-labelledby={titleId}>
      <div className="pane-head">
        <h2 id={titleId} className="dl-anchor">
          Deliveries
        </h2>
        <div className="row wrap dl-filter">
          <label htmlFor={filterId}>Status</label>
          <select id={filterId} value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">all</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
          <button type="button" onClick={() => void refresh()} disabled={load.busy}>
            Refresh
          </button>
        </div>
      </div>
      <p className="hint">
        What re-delivery sent, is waiting to send, gave up on or stopped, newest first; it updates while open.
      </p>
      <ErrorText error={load.error ?? more.error} />
      {loaded && entries.length === 0 ? (
        <p className="hint">{status ? `No ${status} deliveries.` : 'No deliveries yet.'}</p>
      ) : null}
      {entries.length ? (
        <div className="dl-scroll">
          <table className="table dl-log" aria-label="Deliveries">
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Method</th>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Next attempt</th>
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <DeliveryRow key={e.id} e={e} />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {since ? (
        <button type="button" onClick={() => void older()} disabled={more.busy}>
          {more.busy ? 'Loading…' : 'Load older deliveries'}
        </button>
      ) : null}
    </section>
  );
}

/** A cell's column name, shown before its value on a phone, where the table is a list of blocks. */
function Label({ children }: { children: string }) {
  return <span className="dl-label">{children}: </span>;
}

function DeliveryRow({ e }: { e: DeliveryEntry }) {
  const next =
    e.status === 'queued' ? (
      e.heldUntil ? (
        <When iso={e.heldUntil} prefix="held for quiet hours until " />
      ) : (
        <When iso={e.nextAttemptAt} />
      )
    ) : e.status === 'sent' && e.sentAt ? (
      <When iso={e.sentAt} prefix="sent " />
    ) : e.status === 'sending' ? (
      'now'
    ) : (
      '—'
    );
  const reason = e.cancelReason ? (CANCEL_TEXT[e.cancelReason] ?? e.cancelReason) : null;
  return (
    <tr data-status={e.status}>
      <td>
        <Label>Created</Label>
        <When iso={e.createdAt} />
      </td>
      <td>
        <Label>Method</Label>
        {adapterLabel(e.adapter)}
      </td>
      <td>
        <Label>Kind</Label>
        {KIND_TEXT[e.kind] ?? e.kind}
        {e.messageId !== null ? (
          <>
            {' '}
            <Link to={`/inbox?channel=${e.appid}#message-${e.messageId}`}>#{e.messageId}</Link>
          </>
        ) : null}
      </td>
      <td>
        <Label>Status</Label>
        <span className={`dl-status ${e.status}`}>{e.status}</span>
        {reason ? <span className="dl-reason"> ({reason})</span> : null}
      </td>
      <td>
        <Label>Attempts</Label>
        {e.attempts}
        {e.lastAttemptAt ? (
          <small className="hint block">
            <When iso={e.lastAttemptAt} prefix="last " />
          </small>
        ) : null}
      </td>
      <td>
        <Label>Next attempt</Label>
        {next}
      </td>
      <td>
        <Label>Last error</Label>
        {e.lastError ? <span className="dl-error">{e.lastError}</span> : '—'}
      </td>
    </tr>
  );
}
