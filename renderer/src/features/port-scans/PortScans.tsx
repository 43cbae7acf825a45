import '../heartbeats/heartbeats.css';
import './port-scans.css';
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, get } from '../../api/client';
import type { Channel } from '../../api/types';
import { useServiceEvents, useSignals } from '../../app/live';
import { useLocation } from '../../app/router';
import { ErrorText, useAction } from '../../components/ui';
import { ScanCard } from './ScanCard';
import { ScanForm } from './ScanForm';
import type { PortMonitorRef, PortScan, ProgressFrame, VerifiedHost } from './types';
import { VerifiedHosts } from './VerifiedHosts';

const FINAL = new Set(['done', 'cancelled', 'failed']);

/**
 * A fetched record, unless the live frames already carried this run further (a GET answered before a
 * later frame arrived): progress never runs backwards on screen.
 */
function fresher(local: PortScan | undefined, fetched: PortScan): PortScan {
  if (
    local &&
    local.status === 'running' &&
    fetched.status === 'running' &&
    local.startedAt === fetched.startedAt &&
    local.scanned > fetched.scanned
  )
    return { ...fetched, scanned: local.scanned, progress: local.progress };
  return fetched;
}

/**
 * Port scans (docs/api.md "Verified hosts", "Port scans"): start a scan of a verified host, the queue
 * and the finished scans (newest first), and the verified hosts with their proofs. Live: the socket's
 * `port-scan:progress` frames move the progress bars (the record is fetched again when the open-port
 * count changes), `port-scan:status_changed` frames and the SSE channel status signals reload the list.
 * No polling.
 */
export default function PortScans() {
  const { search } = useLocation();
  const verify = search.get('verify');
  const [hosts, setHosts] = useState<VerifiedHost[] | null>(null);
  const [scans, setScans] = useState<PortScan[] | null>(null);
  const [channels, setChannels] = useState<Channel[]>([]);
  const [monitors, setMonitors] = useState<PortMonitorRef[]>([]);
  const load = useAction();
  const scansRef = useRef(scans);
  scansRef.current = scans;

  const loadHosts = useCallback(
    () => load.run(async () => setHosts(await get<VerifiedHost[]>('/verified-host'))),
    [load.run],
  );
  const loadSide = useCallback(
    () =>
      load.run(async () => {
        const [c, m] = await Promise.all([
          get<Channel[]>('/application'),
          get<PortMonitorRef[]>('/port-monitor').catch((err) => {
            if (err instanceof ApiError && (err.status === 404 || err.status === 501)) return [];
            throw err;
          }),
        ]);
        setChannels(c);
        setMonitors(m);
      }),
    [load.run],
  );
  const latest = useRef(0);
  const loadScans = useCallback(
    () =>
      load.run(async () => {
        const at = ++latest.current;
        const l = await get<PortScan[]>('/port-scan');
        if (at !== latest.current) return;
        setScans((old) =>
          l.map((s) =>
            fresher(
              old?.find((o) => o.id === s.id),
              s,
            ),
          ),
        );
      }),
    [load.run],
  );
  useEffect(() => {
    void loadHosts();
    void loadSide();
    void loadScans();
  }, [loadHosts, loadSide, loadScans]);

  // One record fetched again, at most one request in flight per scan (a frame meanwhile asks once more).
  const inFlight = useRef(new Map<number, boolean>());
  const refreshOne = useCallback((id: number) => {
    if (inFlight.current.has(id)) {
      inFlight.current.set(id, true);
      return;
    }
    inFlight.current.set(id, false);
    get<PortScan>(`/port-scan/${id}`)
      .then(
        (fresh) => setScans((l) => l?.map((s) => (s.id === id ? fresher(s, fresh) : s)) ?? l),
        () => {},
      )
      .finally(() => {
        const again = inFlight.current.get(id);
        inFlight.current.delete(id);
        if (again) refreshOne(id);
      });
  }, []);

  useServiceEvents((e) => {
    const id = (e.data as { id?: unknown }).id;
    if (typeof id !== 'number') return;
    const mine = scansRef.current?.find((s) => s.id === id);
    if (!mine) return; // a scan of someone sharing the channel, or not listed yet (the signal reloads)
    if (e.kind === 'port-scan:progress') {
      const f = e.data as unknown as ProgressFrame;
      setScans(
        (l) =>
          l?.map((s) =>
            s.id === id
              ? { ...s, status: f.status, progress: f.progress, scanned: f.scanned, portCount: f.portCount }
              : s,
          ) ?? l,
      );
      if (f.open !== mine.open.length || (FINAL.has(f.status) && f.status !== mine.status)) refreshOne(id);
    } else if (e.kind === 'port-scan:status_changed') void loadScans();
  });
  useSignals((s) => {
    if (s.kind === 'share:changed') void loadSide();
    void loadScans();
  });

  const onScan = (s?: PortScan) => {
    if (s)
      setScans((l) =>
        l?.some((x) => x.id === s.id) ? l.map((x) => (x.id === s.id ? s : x)) : [s, ...(l ?? [])],
      );
    void loadScans();
  };
  const queued = (scans ?? []).filter((s) => s.status === 'queued').sort((a, b) => a.id - b.id);
  const channelName = (id: number) => channels.find((c) => c.id === id)?.name ?? `channel ${id}`;

  return (
    <section className="stack hb-page" aria-labelledby="ps-title">
      <h1 id="ps-title">Port scans</h1>
      <p className="hint">
        TCP connect scans of hosts you have verified: which ports answer, with the greeting each one sends.
        One scan runs at a time; the result comes as a message on the channel you pick.
      </p>
      <ErrorText error={load.error} />
      {hosts !== null ? <ScanForm hosts={hosts} channels={channels} onCreated={onScan} /> : null}
      <section className="stack" aria-labelledby="ps-scans-title">
        <h2 id="ps-scans-title">Scans</h2>
        {scans && scans.length === 0 ? <p className="empty">No scans yet.</p> : null}
        <ul className="rows" aria-label="Scans" aria-busy={scans === null}>
          {(scans ?? []).map((s) => (
            <ScanCard
              key={s.id}
              scan={s}
              queuePlace={s.status === 'queued' ? queued.indexOf(s) + 1 : null}
              channelName={channelName(s.appid)}
              monitors={monitors}
              onChanged={onScan}
              onMonitor={(m) => setMonitors((l) => [...l, m])}
            />
          ))}
        </ul>
      </section>
      <VerifiedHosts hosts={hosts} prefillHost={verify} onChanged={() => void loadHosts()} />
    </section>
  );
}
