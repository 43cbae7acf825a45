import { useCallback, useEffect, useRef, useState } from 'react';
import { get, query } from '../../api/client';
import { ErrorText, formatDate, useAction } from '../../components/ui';
import type { PingEntry, PingLogPage } from './types';

const PAGE = 20;

const KIND_TEXT: Record<string, string> = {
  success: 'success',
  start: 'start',
  fail: 'failure',
  log: 'log',
  ignored: 'ignored (paused)',
};

/** The ping log (history `…/log`): newest first, paged like messages, with reasons and kept bodies. */
export function PingLog({ id, version }: { id: number; version: number }) {
  const [pings, setPings] = useState<PingEntry[]>([]);
  const [since, setSince] = useState<number | undefined>(undefined);
  const [loaded, setLoaded] = useState(false);
  const load = useAction();
  const at = useRef(0);

  // The first page again on every live signal: new pings come first, older pages are dropped.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the refetch trigger
  useEffect(() => {
    const mine = ++at.current;
    void load.run(async () => {
      const page = await get<PingLogPage>(`/monitor-history/heartbeat/${id}/log${query({ limit: PAGE })}`);
      if (at.current !== mine) return;
      setPings(page.checks);
      setSince(page.paging.since || undefined);
      setLoaded(true);
    });
  }, [id, version, load.run]);

  const more = useCallback(
    () =>
      load.run(async () => {
        const mine = at.current;
        const page = await get<PingLogPage>(
          `/monitor-history/heartbeat/${id}/log${query({ limit: PAGE, since })}`,
        );
        if (at.current !== mine) return;
        setPings((prev) => {
          const ids = new Set(prev.map((p) => p.id));
          return [...prev, ...page.checks.filter((p) => !ids.has(p.id))];
        });
        setSince(page.paging.since || undefined);
      }),
    [id, since, load.run],
  );

  return (
    <section className="card stack" aria-labelledby={`log-${id}`}>
      <h2 id={`log-${id}`}>Ping log</h2>
      <ErrorText error={load.error} />
      {loaded && pings.length === 0 ? <p className="hint">No pings yet.</p> : null}
      {pings.length ? (
        <div className="table-scroll">
          <table className="table" aria-label="Pings">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Ping</th>
                <th scope="col">Status after</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {pings.map((p) => (
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
            </tbody>
          </table>
        </div>
      ) : null}
      {since ? (
        <button type="button" onClick={() => void more()} disabled={load.busy}>
          {load.busy ? 'Loading…' : 'Load older pings'}
        </button>
      ) : null}
    </section>
  );
}
