import { type FormEvent, useState } from 'react';
import { api, del, post, query } from '../../api/client';
import { Link } from '../../app/router';
import { ErrorText, formatDate, TextField, useAction } from '../../components/ui';
import { portsLabel, UnverifiedError, unverifiedHost } from './ScanForm';
import type { OpenPort, PortMonitorRef, PortScan } from './types';

const STATUS_CLASS: Record<PortScan['status'], string> = {
  queued: 'hb-chip',
  running: 'hb-chip ps-running',
  done: 'hb-chip up',
  cancelled: 'hb-chip paused',
  failed: 'hb-chip down',
};

function ordinal(n: number): string {
  if (n === 1) return 'next';
  const suffix = n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th';
  return `${n}${suffix} in line`;
}

function RenameForm({ scan, onDone }: { scan: PortScan; onDone: (s?: PortScan) => void }) {
  const [name, setName] = useState(scan.name);
  const [notes, setNotes] = useState(scan.notes);
  const save = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run(async () =>
      onDone(await api<PortScan>('PATCH', `/port-scan/${scan.id}`, { body: { name: name.trim(), notes } })),
    );
  };
  return (
    <form className="stack ps-rename" aria-label={`Rename ${scan.name}`} onSubmit={submit}>
      <TextField label="Name" value={name} onChange={setName} required />
      <TextField label="Notes" value={notes} onChange={setNotes} />
      <ErrorText error={save.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy || !name.trim()}>
          Save
        </button>
        <button type="button" onClick={() => onDone()}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function OpenPortRow({
  scan,
  p,
  monitor,
  onMonitor,
}: {
  scan: PortScan;
  p: OpenPort;
  monitor: PortMonitorRef | undefined;
  onMonitor: (m: PortMonitorRef) => void;
}) {
  const make = useAction();
  return (
    <tr>
      <td className="mono">{p.port}</td>
      <td>{p.service ?? <span className="hint">unknown</span>}</td>
      <td className="mono ps-banner">{p.banner ?? ''}</td>
      <td>
        {monitor ? (
          <Link to={`/monitors${query({ kind: 'port-monitor', id: monitor.id })}`}>
            Open monitor {monitor.name}
          </Link>
        ) : (
          <button
            type="button"
            disabled={make.busy}
            onClick={() =>
              void make.run(async () =>
                onMonitor(await post<PortMonitorRef>(`/port-scan/${scan.id}/to-monitor`, { port: p.port })),
              )
            }
          >
            Monitor this port
          </button>
        )}
        <ErrorText error={make.error} />
      </td>
    </tr>
  );
}

/**
 * One scan of the list: its state and place in the queue, a progress bar the live frames move, the open
 * ports found so far (each can become a port monitor), and cancel, restart, rename and delete.
 */
export function ScanCard({
  scan,
  queuePlace,
  channelName,
  monitors,
  onChanged,
  onMonitor,
}: {
  scan: PortScan;
  /** 1 for the next queued scan, …; null unless queued. */
  queuePlace: number | null;
  channelName: string;
  monitors: PortMonitorRef[];
  onChanged: (s?: PortScan) => void;
  onMonitor: (m: PortMonitorRef) => void;
}) {
  const act = useAction();
  const [renaming, setRenaming] = useState(false);
  const active = scan.status === 'queued' || scan.status === 'running';
  const pct = Math.floor(scan.progress * 100);
  const monitorOf = (port: number) => monitors.find((m) => m.host === scan.host && m.port === port);
  const run = (fn: () => Promise<PortScan | undefined>) => void act.run(async () => onChanged(await fn()));

  return (
    <li className="card hb-row" aria-label={scan.name}>
      <div className="row wrap">
        <span className={STATUS_CLASS[scan.status]}>{scan.status}</span>
        <span className="hb-name grow">{scan.name}</span>
        {active ? (
          <button type="button" onClick={() => run(() => post<PortScan>(`/port-scan/${scan.id}/cancel`))}>
            Cancel
          </button>
        ) : (
          <button type="button" onClick={() => run(() => post<PortScan>(`/port-scan/${scan.id}/restart`))}>
            Restart
          </button>
        )}
        <button type="button" onClick={() => setRenaming((r) => !r)} aria-expanded={renaming}>
          Rename
        </button>
        <button
          type="button"
          className="danger"
          onClick={() =>
            run(async () => {
              if (!confirm(`Delete the scan “${scan.name}”?`)) return undefined;
              await del(`/port-scan/${scan.id}`);
              return undefined;
            })
          }
        >
          Delete
        </button>
      </div>
      {renaming ? (
        <RenameForm
          scan={scan}
          onDone={(s) => {
            setRenaming(false);
            if (s) onChanged(s);
          }}
        />
      ) : null}
      {unverifiedHost(act.error) ? (
        <UnverifiedError error={act.error} host={scan.host} />
      ) : (
        <ErrorText error={act.error} />
      )}
      <dl className="hb-facts">
        <div>
          <dt>Host</dt>
          <dd className="mono">{scan.host}</dd>
        </div>
        <div>
          <dt>Ports</dt>
          <dd>{portsLabel(scan.ports)}</dd>
        </div>
        <div>
          <dt>Channel</dt>
          <dd>{channelName}</dd>
        </div>
        <div>
          <dt>{scan.status === 'queued' ? 'Queued' : scan.finishedAt ? 'Finished' : 'Started'}</dt>
          <dd>
            {scan.status === 'queued'
              ? queuePlace
                ? ordinal(queuePlace)
                : 'waiting'
              : formatDate(scan.finishedAt ?? scan.startedAt)}
          </dd>
        </div>
        {scan.notes ? (
          <div>
            <dt>Notes</dt>
            <dd>{scan.notes}</dd>
          </div>
        ) : null}
      </dl>
      <div className="ps-progress">
        <progress value={scan.progress} max={1} aria-label={`Progress of ${scan.name}`} />
        <small className="hint">
          {scan.scanned.toLocaleString()} of {scan.portCount.toLocaleString()} ports ({pct}%)
          {scan.status === 'running' ? ', live' : ''}
        </small>
      </div>
      {scan.error ? <p className="error">{scan.error}</p> : null}
      {scan.open.length > 0 ? (
        <div className="table-scroll">
          <table className="ps-open" aria-label={`Open ports of ${scan.name}`}>
            <thead>
              <tr>
                <th scope="col">Port</th>
                <th scope="col">Service</th>
                <th scope="col">Banner</th>
                <th scope="col">Monitor</th>
              </tr>
            </thead>
            <tbody>
              {scan.open.map((p) => (
                <OpenPortRow
                  key={p.port}
                  scan={scan}
                  p={p}
                  monitor={monitorOf(p.port)}
                  onMonitor={onMonitor}
                />
              ))}
            </tbody>
          </table>
        </div>
      ) : scan.status === 'done' ? (
        <p className="hint">No open ports.</p>
      ) : null}
    </li>
  );
}
