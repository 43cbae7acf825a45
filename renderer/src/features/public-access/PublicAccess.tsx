import './public-access.css';
import { useCallback, useEffect, useState } from 'react';
import { get, post, put } from '../../api/client';
import { fieldErrors } from '../../components/field-errors';
import { CopyField, ErrorText, formatDate, useAction, useTicker } from '../../components/ui';
import { bodyOf, EXPOSED_ROUTES, formOf, NEVER_EXPOSED, type TunnelForm, targetText } from './form';
import { FORM_FIELDS, ProviderForm } from './ProviderForm';
import type { TunnelCheck, TunnelRecord, TunnelStatus } from './types';

/** How often the open page reads the record (a tunnel starting, dropping or being checked). */
const REFRESH_MS = 2000;

const STATUS_TEXT: Record<TunnelStatus, string> = {
  off: 'No tunnel: only this network reaches Belfry.',
  starting: 'Starting the tunnel…',
  up: 'The tunnel is up.',
  error: 'The tunnel is down.',
};

function StatusChip({ status }: { status: TunnelStatus }) {
  return (
    <span className={`tunnel-chip ${status}`} data-status={status}>
      {status}
    </span>
  );
}

function LastCheck({ check }: { check: TunnelCheck | null }) {
  if (!check) return <span>not checked yet</span>;
  const parts = [
    check.status === null ? null : `HTTP ${check.status}`,
    check.latencyMs === null ? null : `${check.latencyMs} ms`,
  ].filter(Boolean);
  return (
    <span>
      <strong className={check.ok ? 'tunnel-ok' : 'tunnel-bad'}>{check.ok ? 'ok' : 'failed'}</strong>
      {parts.length ? ` (${parts.join(', ')})` : ''}, <time dateTime={check.at}>{formatDate(check.at)}</time>
      {check.error ? (
        <>
          : <span className="mono">{check.error}</span>
        </>
      ) : null}
    </span>
  );
}

/**
 * Public access (administrators): which tunnel carries the public routes from the internet to this
 * server, its state and reachability, and what it exposes. The record is read again every few seconds
 * while the page is visible, so a tunnel coming up or going down shows without a reload.
 */
export default function PublicAccess() {
  const [record, setRecord] = useState<TunnelRecord | null>(null);
  const [form, setForm] = useState<TunnelForm | null>(null);
  const load = useAction();
  const save = useAction();
  const check = useAction();
  const tick = useTicker(REFRESH_MS);

  const reload = useCallback(async () => {
    const r = await get<TunnelRecord>('/tunnel');
    setRecord(r);
    // The form is filled once from the stored settings; later reads never overwrite what is being typed.
    setForm((f) => f ?? formOf(r));
  }, []);
  useEffect(() => void load.run(reload), [load.run, reload]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the ticker drives the refresh
  useEffect(() => {
    if (tick > 0) reload().catch(() => {});
  }, [tick]);

  const onSave = () =>
    form &&
    void save.run(async () => {
      const r = await put<TunnelRecord>('/tunnel', bodyOf(form));
      setRecord(r);
      setForm(formOf(r));
    });
  const onCheck = () => void check.run(async () => setRecord(await post<TunnelRecord>('/tunnel/check')));
  const errs = fieldErrors(save.error, FORM_FIELDS);

  return (
    <section className="stack public-access" aria-labelledby="public-access-title">
      <div className="pane-head">
        <h1 id="public-access-title">Public access</h1>
      </div>
      <p className="hint">
        Webhooks, heartbeat pings, status pages and answer links need an address the internet can reach. A
        tunnel gives this server one without opening a port on your router: it carries the public routes
        below, and nothing else, to a separate listener.
      </p>
      <ErrorText error={load.error} />
      {record ? (
        <section className="card stack" aria-labelledby="tunnel-status-title">
          <div className="pane-head">
            <h2 id="tunnel-status-title">
              Status <StatusChip status={record.status} />
            </h2>
            <button
              type="button"
              onClick={onCheck}
              disabled={check.busy || record.provider === 'none' || !record.publicUrl}
            >
              {check.busy ? 'Checking…' : 'Check now'}
            </button>
          </div>
          <p role="status" className="tunnel-status-text">
            {STATUS_TEXT[record.status]}
          </p>
          {record.error ? (
            <p className="error tunnel-error" role="alert">
              {record.error}
            </p>
          ) : null}
          <ErrorText error={check.error} />
          {record.publicUrl ? <CopyField label="Public URL" value={record.publicUrl} /> : null}
          <dl className="tunnel-facts">
            <dt>Target</dt>
            <dd className="mono">{targetText(record.target)}</dd>
            <dt>Last check</dt>
            <dd data-testid="last-check">
              <LastCheck check={record.lastCheck} />
            </dd>
          </dl>
          <p className="hint">
            A check asks <span className="mono">{record.publicUrl ?? 'the public URL'}/health</span> from this
            server and is ok when the answer comes from this very server. It runs when the tunnel comes up,
            every 5 minutes, and on “Check now”.
          </p>
        </section>
      ) : null}
      {form ? (
        <section className="card stack" aria-labelledby="tunnel-settings-title">
          <h2 id="tunnel-settings-title">Tunnel</h2>
          <ProviderForm form={form} onChange={setForm} errs={errs} />
          <ErrorText error={errs.rest} />
          <div className="actions">
            <button type="button" className="primary" onClick={onSave} disabled={save.busy}>
              {save.busy ? 'Saving…' : 'Save'}
            </button>
          </div>
        </section>
      ) : null}
      <section className="card stack" aria-labelledby="tunnel-exposed-title">
        <h2 id="tunnel-exposed-title">What the tunnel exposes</h2>
        <ul className="tunnel-routes">
          {EXPOSED_ROUTES.map((r) => (
            <li key={r.path}>
              <span className="mono">{r.path}</span>: {r.what}
            </li>
          ))}
        </ul>
        <p className="notice">{NEVER_EXPOSED}</p>
      </section>
    </section>
  );
}
