import { type ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import { get, query } from '../../api/client';
import { ErrorText, formatDate, useAction } from '../../components/ui';
import type { PingEntry } from './types';

const PAGE = 20;

const KIND_TEXT: Record<string, string> = {
  success: 'success',
  start: 'start',
  fail: 'failure',
  log: 'log',
  ignored: 'ignored (paused)',
};

/**
 * One source's history log (`/monitor-history/{kind}/{id}/log`), newest first, paged like messages: the
 * first page again whenever `version` changes (new entries come first, older pages are dropped), older
 * pages on `more()`. Shared by the ping log and the monitors' check log.
 */
export function useHistoryLog<T extends { id: number }>(
  kind: string,
  id: number,
  version: number,
  limit = PAGE,
) {
  const [entries, setEntries] = useState<T[]>([]);
  const [since, setSince] = useState<number | undefined>(undefined);
  const [loaded, setLoaded] = useState(false);
  const load = useAction();
  const at = useRef(0);
  const base = `/monitor-history/${kind}/${id}/log`;

  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the refetch trigger
  useEffect(() => {
    const mine = ++at.current;
    void load.run(async () => {
      const page = await get<{ paging: { since?: number }; checks: T[] }>(`${base}${query({ limit })}`);
      if (at.current !== mine) return;
      setEntries(page.checks);
      setSince(page.paging.since || undefined);
      setLoaded(true);
    });
  }, [base, limit, version, load.run]);

  const more = useCallback(
    () =>
      load.run(async () => {
        const mine = at.current;
        const page = await get<{ paging: { since?: number }; checks: T[] }>(
          `${base}${query({ limit, since })}`,
        );
        if (at.current !== mine) return;
        setEntries((prev) => {
          const ids = new Set(prev.map((p) => p.id));
          return [...prev, ...page.checks.filter((p) => !ids.has(p.id))];
        });
        setSince(page.paging.since || undefined);
      }),
    [base, limit, since, load.run],
  );
  return { entries, since, loaded, more, busy: load.busy, error: load.error };
}

/**
 * A history log's card: its heading, the empty text, the table of `rows` and the button for older
 * entries. `noun` is the plural of what it lists ("pings", "checks").
 */
export function HistoryLogCard({
  id,
  title,
  noun,
  columns,
  log,
  children,
}: {
  id: number;
  title: string;
  noun: string;
  columns: string[];
  log: ReturnType<typeof useHistoryLog>;
  children: ReactNode;
}) {
  const { entries, since, loaded, more, busy, error } = log;
  return (
    <section className="card stack" aria-labelledby={`log-${id}`}>
      <h2 id={`log-${id}`}>{title}</h2>
      <ErrorText error={error} />
      {loaded && entries.length === 0 ? <p className="hint">No {noun} yet.</p> : null}
      {entries.length ? (
        <div className="table-scroll">
          <table className="table" aria-label={noun[0]?.toUpperCase() + noun.slice(1)}>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c} scope="col">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>{children}</tbody>
          </table>
        </div>
      ) : null}
      {since ? (
        <button type="button" onClick={() => void more()} disabled={busy}>
          {busy ? 'Loading…' : `Load older ${noun}`}
        </button>
      ) : null}
    </section>
  );
}

/** The ping log (history `…/log`): newest first, paged like messages, with reasons and kept bodies. */
export function PingLog({ id, version }: { id: number; version: number }) {
  const log = useHistoryLog<PingEntry>('heartbeat', id, version);
  return (
    <HistoryLogCard
      id={id}
      title="Ping log"
      noun="pings"
      columns={['Time', 'Ping', 'Status after', 'Details']}
      log={log}
    >
      {log.entries.map((p) => (
        <tr key={p.id} className={p.ok ? undefined : 'ping-failed'}>
          <td>{formatDate(p.at)}</td>
          <td>
            {KIND_TEXT[p.pingKind ?? (p.ok ? 'success' : 'fail')] ?? p.pingKind}
            {p.exitCode !== undefined && p.exitCode !== null ? ` (exit ${p.exitCode})` : ''}
          </td>
          <td>{p.status}</td>
          <td>
            {p.error ? <span className="ping-reason">{p.error}</span> : null}
            {p.body ? (
              <details>
                <summary>Body ({new Blob([p.body]).size} bytes)</summary>
                <pre className="ping-body">{p.body}</pre>
              </details>
            ) : null}
          </td>
        </tr>
      ))}
    </HistoryLogCard>
  );
}
