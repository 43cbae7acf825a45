import { type FormEvent, useEffect, useRef, useState } from 'react';
import { del, post } from '../../api/client';
import { CopyField, ErrorText, Field, formatDate, TextField, useAction } from '../../components/ui';
import { proofSteps } from './proof';
import type { ProofMethod, VerifiedHost } from './types';

const METHODS: { value: ProofMethod; label: string; hint: string }[] = [
  { value: 'http', label: 'HTTP file', hint: 'serve a small text file from a web server on the host' },
  { value: 'dns', label: 'DNS TXT record', hint: 'add a TXT record to the host name (not for IP addresses)' },
];

/** The copyable values of the host's proof, under the server's own instructions. */
function Instructions({ h }: { h: VerifiedHost }) {
  const steps = proofSteps(h);
  return (
    <div className="stack ps-proof">
      <p className="ps-instructions">{h.instructions}</p>
      {steps.method === 'http' ? (
        <>
          <CopyField label={`File URL for ${h.host}`} value={steps.url} />
          <CopyField label={`File content for ${h.host}`} value={steps.content} />
          <p className="hint">
            A plain-text answer with status 200 whose body has a line equal to the content; at most 3
            redirects, all on the same host.
          </p>
        </>
      ) : (
        <>
          <CopyField label={`TXT record name for ${h.host}`} value={steps.name} />
          <CopyField label={`TXT record value for ${h.host}`} value={steps.value} />
          <p className="hint">DNS changes can take a while to show; check again when the record is live.</p>
        </>
      )}
    </div>
  );
}

function HostRow({ h, onChanged }: { h: VerifiedHost; onChanged: () => void }) {
  const check = useAction();
  const remove = useAction();
  const [result, setResult] = useState<VerifiedHost | null>(null);
  const label = `${h.host} (${h.method === 'http' ? 'HTTP file' : 'DNS TXT record'})`;
  const verifyNow = () =>
    check.run(async () => {
      setResult(null);
      try {
        setResult(await post<VerifiedHost>('/verified-host/check', { id: h.id }));
      } finally {
        onChanged();
      }
    });
  return (
    <li className="card hb-row" aria-label={label}>
      <div className="row wrap">
        <span className={h.verified ? 'hb-chip up' : 'hb-chip'}>
          {h.verified ? 'verified' : 'not verified'}
        </span>
        <span className="hb-name mono">{h.host}</span>
        <span className="hint grow">
          {h.method === 'http'
            ? `HTTP file${h.httpPort && h.httpPort !== 80 ? `, port ${h.httpPort}` : ''}`
            : 'DNS TXT record'}
        </span>
        <button type="button" onClick={() => void verifyNow()} disabled={check.busy}>
          {check.busy ? 'Checking…' : 'Verify now'}
        </button>
        <button
          type="button"
          className="danger"
          aria-label={`Delete ${label}`}
          disabled={remove.busy}
          onClick={() =>
            void remove.run(async () => {
              if (!confirm(`Delete the verification of ${h.host}? Scans of it can no longer be started.`))
                return;
              await del(`/verified-host/${h.id}`);
              onChanged();
            })
          }
        >
          Delete
        </button>
      </div>
      <dl className="hb-facts">
        <div>
          <dt>Verified</dt>
          <dd>{h.verified ? formatDate(h.verifiedAt) : 'no'}</dd>
        </div>
        <div>
          <dt>Checked at</dt>
          <dd>{formatDate(h.checkedAt)}</dd>
        </div>
      </dl>
      {result?.verified ? (
        <p className="notice" role="status">
          {h.host} is verified: you can scan it now.
        </p>
      ) : null}
      <ErrorText error={check.error} />
      <ErrorText error={remove.error} />
      {!check.error && !result && h.lastError ? <p className="hint">Last check: {h.lastError}</p> : null}
      <details open={h.verified ? undefined : true}>
        <summary>How to verify {h.host}</summary>
        <Instructions h={h} />
      </details>
    </li>
  );
}

/**
 * Verified hosts (docs/api.md "Verified hosts"): the proof that the user controls a host, asked before
 * it may be scanned. Adding one answers the method's instructions (a file to serve, or a TXT record),
 * shown with copy buttons under the host's row until it is verified.
 */
export function VerifiedHosts({
  hosts,
  prefillHost,
  onChanged,
}: {
  hosts: VerifiedHost[] | null;
  prefillHost: string | null;
  onChanged: () => void;
}) {
  const [host, setHost] = useState(prefillHost ?? '');
  const [method, setMethod] = useState<ProofMethod>('http');
  const [httpPort, setHttpPort] = useState('80');
  const add = useAction();
  const formRef = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (!prefillHost) return;
    setHost(prefillHost);
    formRef.current?.scrollIntoView({ block: 'center' });
    formRef.current?.querySelector('input')?.focus();
  }, [prefillHost]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void add.run(async () => {
      const body: Record<string, unknown> = { host: host.trim(), method };
      if (method === 'http') body.httpPort = Number(httpPort) || 80;
      await post<VerifiedHost>('/verified-host/start', body);
      setHost('');
      onChanged();
    });
  };

  return (
    <section className="stack" aria-labelledby="vh-title">
      <h2 id="vh-title">Verified hosts</h2>
      <p className="hint">
        Belfry scans only hosts you have shown you control. A verification covers exactly that host name or
        address: not its subdomains, not the addresses it resolves to.
      </p>
      {hosts && hosts.length === 0 ? <p className="empty">No hosts yet. Add one below.</p> : null}
      <ul className="rows" aria-label="Verified hosts" aria-busy={hosts === null}>
        {(hosts ?? []).map((h) => (
          <HostRow key={h.id} h={h} onChanged={onChanged} />
        ))}
      </ul>
      <form ref={formRef} className="card stack" aria-label="Add a host" onSubmit={submit}>
        <h3 className="ps-form-title">Add a host</h3>
        <TextField
          label="Host"
          hint="a host name or an IP address, without scheme or port"
          value={host}
          onChange={setHost}
          required
        />
        <fieldset>
          <legend>Proof</legend>
          <div className="stack">
            {METHODS.map((m) => (
              <label key={m.value} className="row">
                <input
                  type="radio"
                  name="vh-method"
                  value={m.value}
                  checked={method === m.value}
                  onChange={() => setMethod(m.value)}
                />
                <span>
                  {m.label} <small className="hint">— {m.hint}</small>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        {method === 'http' ? (
          <Field
            label="HTTP port"
            hint="where the file is served; 80 unless your web server listens elsewhere"
          >
            {(id) => (
              <input
                id={id}
                type="number"
                min={1}
                max={65535}
                inputMode="numeric"
                value={httpPort}
                onChange={(e) => setHttpPort(e.target.value)}
              />
            )}
          </Field>
        ) : null}
        <ErrorText error={add.error} />
        <div className="actions">
          <button type="submit" className="primary" disabled={add.busy || !host.trim()}>
            Start verification
          </button>
        </div>
      </form>
    </section>
  );
}
