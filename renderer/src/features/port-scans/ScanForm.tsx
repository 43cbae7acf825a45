import { type FormEvent, useEffect, useId, useState } from 'react';
import { ApiError, post, query } from '../../api/client';
import type { Channel } from '../../api/types';
import { Link } from '../../app/router';
import { ErrorText, Field, TextField, useAction } from '../../components/ui';
import { writableChannels } from '../sources/NameAndChannel';
import type { PortScan, ScanInput, VerifiedHost } from './types';

type Preset = 'top100' | 'top1000' | 'all' | 'custom';
const PRESETS: { value: Preset; label: string }[] = [
  { value: 'top100', label: 'Top 100' },
  { value: 'top1000', label: 'Top 1,000' },
  { value: 'all', label: 'All 65,535' },
  { value: 'custom', label: 'Custom list' },
];

/** The `ports` field of POST /port-scan for a preset. */
export function portsOf(preset: Preset, custom: string): string {
  if (preset === 'all') return '1-65535';
  if (preset === 'custom') return custom.replace(/\s+/g, '');
  return preset;
}

/** How a scan's `ports` reads in the list. */
export function portsLabel(ports: string): string {
  if (ports === 'top100') return 'top 100';
  if (ports === 'top1000') return 'top 1,000';
  if (ports === '1-65535') return 'all ports';
  return ports.length > 60 ? `${ports.slice(0, 60)}…` : ports;
}

/** 403 `host not verified: …` from POST /port-scan or a restart. */
export function unverifiedHost(err: unknown): boolean {
  return err instanceof ApiError && err.status === 403 && err.message.startsWith('host not verified');
}

/** The server's 403 text and a link that opens the verified-hosts form with the host filled in. */
export function UnverifiedError({ error, host }: { error: unknown; host: string }) {
  return (
    <div className="stack">
      <ErrorText error={error} />
      <p>
        <Link to={`/port-scans${query({ verify: host })}`}>Verify {host}</Link> first: add it under Verified
        hosts and prove you control it.
      </p>
    </div>
  );
}

/**
 * A new scan (POST /port-scan): a host (normally one of the verified ones), the channel its result
 * message goes to, the ports, how many connects run at once and how long each may take.
 */
export function ScanForm({
  hosts,
  channels,
  onCreated,
}: {
  hosts: VerifiedHost[];
  channels: Channel[];
  onCreated: (s: PortScan) => void;
}) {
  const verified = [...new Set(hosts.filter((h) => h.verified).map((h) => h.host))];
  const targets = writableChannels(channels);
  const [host, setHost] = useState('');
  const [appid, setAppid] = useState<number | ''>('');
  const [preset, setPreset] = useState<Preset>('top100');
  const [custom, setCustom] = useState('');
  const [concurrency, setConcurrency] = useState('50');
  const [timeoutMs, setTimeoutMs] = useState('1000');
  const [name, setName] = useState('');
  const [sentHost, setSentHost] = useState('');
  const create = useAction();
  const listId = useId();
  // Hosts and channels arrive after the form opened: start on the first of each.
  useEffect(() => {
    if (host === '' && verified[0]) setHost(verified[0]);
  }, [host, verified[0]]);
  useEffect(() => {
    if (appid === '' && targets[0]) setAppid(targets[0].id);
  }, [appid, targets[0]]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (appid === '') return;
    const body: ScanInput = {
      appid,
      host: host.trim(),
      ports: portsOf(preset, custom),
      concurrency: Number(concurrency),
      timeoutMs: Number(timeoutMs),
      ...(name.trim() ? { name: name.trim() } : {}),
    };
    setSentHost(body.host);
    void create.run(async () => {
      const scan = await post<PortScan>('/port-scan', body);
      setName('');
      onCreated(scan);
    });
  };

  return (
    <form className="card stack" aria-label="New scan" onSubmit={submit}>
      <h2 className="ps-form-title">New scan</h2>
      <div className="grid2 ps-grid">
        <Field label="Host" hint="a host you have verified">
          {(id) => (
            <>
              <input
                id={id}
                list={listId}
                value={host}
                onChange={(e) => setHost(e.target.value)}
                autoComplete="off"
                required
              />
              <datalist id={listId}>
                {verified.map((h) => (
                  <option key={h} value={h} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <Field label="Channel" hint="where the result message goes">
          {(id) => (
            <select
              id={id}
              value={appid}
              onChange={(e) => setAppid(e.target.value ? Number(e.target.value) : '')}
              required
            >
              {targets.length === 0 ? <option value="">No channel yet: make one first</option> : null}
              {targets.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Concurrency" hint="connects at once, 1-200">
          {(id) => (
            <input
              id={id}
              type="number"
              min={1}
              max={200}
              value={concurrency}
              onChange={(e) => setConcurrency(e.target.value)}
              required
            />
          )}
        </Field>
        <Field label="Timeout per port (ms)" hint="100-10,000 per connect">
          {(id) => (
            <input
              id={id}
              type="number"
              min={100}
              max={10000}
              step={100}
              value={timeoutMs}
              onChange={(e) => setTimeoutMs(e.target.value)}
              required
            />
          )}
        </Field>
      </div>
      <fieldset>
        <legend>Ports</legend>
        <div className="row wrap ps-presets">
          {PRESETS.map((p) => (
            <label key={p.value} className="row">
              <input
                type="radio"
                name="ps-preset"
                value={p.value}
                checked={preset === p.value}
                onChange={() => setPreset(p.value)}
              />
              {p.label}
            </label>
          ))}
        </div>
        {preset === 'custom' ? (
          <TextField
            label="Custom ports"
            hint="ports and ranges separated by commas, e.g. 22,80,443,8000-8100 (at most 1,000 entries)"
            value={custom}
            onChange={setCustom}
            required
          />
        ) : null}
      </fieldset>
      <TextField label="Name" hint="optional; host and ports when empty" value={name} onChange={setName} />
      {unverifiedHost(create.error) ? (
        <UnverifiedError error={create.error} host={sentHost} />
      ) : (
        <ErrorText error={create.error} />
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={create.busy || appid === ''}>
          Start scan
        </button>
        <small className="hint">One scan of yours runs at a time; the others wait in line (at most 5).</small>
      </div>
    </form>
  );
}
