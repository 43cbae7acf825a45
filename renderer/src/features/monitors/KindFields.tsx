import { useId } from 'react';
import { Field } from '../../components/ui';
import {
  type AnswerChecksDraft,
  type AssertionDraft,
  isSecretName,
  type Pair,
  type RequestDraft,
  SECRET_MASK,
} from './kinds';
import type { JsonAssertion } from './types';

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const OPS: { op: JsonAssertion['op']; label: string }[] = [
  { op: 'eq', label: 'equals' },
  { op: 'ne', label: 'does not equal' },
  { op: 'gt', label: '>' },
  { op: 'gte', label: '≥' },
  { op: 'lt', label: '<' },
  { op: 'lte', label: '≤' },
  { op: 'contains', label: 'contains' },
  { op: 'matches', label: 'matches' },
  { op: 'exists', label: 'exists' },
  { op: 'notExists', label: 'does not exist' },
];

/** Name/value rows (headers, variables); values of secret names are masked by the server. */
export function PairsEditor({
  label,
  rows,
  onChange,
  namePlaceholder,
  allSecret = false,
}: {
  label: string;
  rows: Pair[];
  onChange: (rows: Pair[]) => void;
  namePlaceholder: string;
  /** Every value is a secret (a delivery webhook's headers), not only those of secret-looking names. */
  allSecret?: boolean;
}) {
  const set = (i: number, patch: Partial<Pair>) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset className="stack mon-pairs">
      <legend>{label}</legend>
      {rows.map((r, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place, never reordered
        <div className="row" key={i}>
          <input
            aria-label={`${label} ${i + 1} name`}
            placeholder={namePlaceholder}
            className="mono"
            value={r.name}
            onChange={(e) => set(i, { name: e.target.value })}
          />
          <input
            aria-label={`${label} ${i + 1} value`}
            placeholder="value"
            className="mono grow"
            value={r.value}
            type={allSecret || isSecretName(r.name) ? 'password' : 'text'}
            onChange={(e) => set(i, { value: e.target.value })}
            autoComplete="off"
          />
          <button
            type="button"
            className="ghost"
            aria-label={`Remove ${label.toLowerCase()} ${i + 1}`}
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          >
            ×
          </button>
        </div>
      ))}
      {rows.some((r) => r.value === SECRET_MASK) ? (
        <small className="hint">Hidden values (********) are kept unless you change them.</small>
      ) : null}
      <div>
        <button type="button" onClick={() => onChange([...rows, { name: '', value: '' }])}>
          Add {label.toLowerCase().replace(/s$/, '')}
        </button>
      </div>
    </fieldset>
  );
}

/** JSON assertions `{path, op, value?}` on the answer's body. */
export function AssertionsEditor({
  rows,
  onChange,
}: {
  rows: AssertionDraft[];
  onChange: (rows: AssertionDraft[]) => void;
}) {
  const set = (i: number, patch: Partial<AssertionDraft>) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset className="stack mon-pairs">
      <legend>JSON checks</legend>
      {rows.map((r, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place, never reordered
        <div className="row" key={i}>
          <input
            aria-label={`JSON check ${i + 1} path`}
            placeholder="$.status"
            className="mono"
            value={r.path}
            onChange={(e) => set(i, { path: e.target.value })}
          />
          <select
            aria-label={`JSON check ${i + 1} operator`}
            value={r.op}
            onChange={(e) => set(i, { op: e.target.value as JsonAssertion['op'] })}
          >
            {OPS.map((o) => (
              <option key={o.op} value={o.op}>
                {o.label}
              </option>
            ))}
          </select>
          {r.op === 'exists' || r.op === 'notExists' ? null : (
            <input
              aria-label={`JSON check ${i + 1} value`}
              placeholder={r.op === 'matches' ? '/^ok$/i' : '"ok"'}
              className="mono grow"
              value={r.value}
              onChange={(e) => set(i, { value: e.target.value })}
            />
          )}
          <button
            type="button"
            className="ghost"
            aria-label={`Remove JSON check ${i + 1}`}
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          >
            ×
          </button>
        </div>
      ))}
      <div>
        <button type="button" onClick={() => onChange([...rows, { path: '$', op: 'eq', value: '' }])}>
          Add JSON check
        </button>
      </div>
    </fieldset>
  );
}

export function RequestFields({
  value,
  onChange,
  urlHint,
}: {
  value: RequestDraft;
  onChange: (patch: Partial<RequestDraft>) => void;
  urlHint?: string;
}) {
  const authId = useId();
  return (
    <>
      <div className="row mon-request">
        <Field label="Method">
          {(id) => (
            <select id={id} value={value.method} onChange={(e) => onChange({ method: e.target.value })}>
              {METHODS.map((m) => (
                <option key={m}>{m}</option>
              ))}
            </select>
          )}
        </Field>
        <div className="grow">
          <Field label="URL" {...(urlHint ? { hint: urlHint } : {})}>
            {(id) => (
              <input
                id={id}
                className="mono"
                value={value.url}
                placeholder="https://example.com/health"
                onChange={(e) => onChange({ url: e.target.value })}
                required
              />
            )}
          </Field>
        </div>
      </div>
      <PairsEditor
        label="Headers"
        namePlaceholder="Header"
        rows={value.headers}
        onChange={(headers) => onChange({ headers })}
      />
      {value.method !== 'GET' && value.method !== 'HEAD' ? (
        <Field label="Request body">
          {(id) => (
            <textarea
              id={id}
              rows={3}
              className="mono"
              maxLength={65_536}
              value={value.body}
              onChange={(e) => onChange({ body: e.target.value })}
            />
          )}
        </Field>
      ) : null}
      <details open={value.username !== ''}>
        <summary>Basic authentication</summary>
        <div className="grid2" aria-describedby={authId}>
          <Field label="Username">
            {(id) => (
              <input
                id={id}
                value={value.username}
                autoComplete="off"
                onChange={(e) => onChange({ username: e.target.value })}
              />
            )}
          </Field>
          <Field label="Password">
            {(id) => (
              <input
                id={id}
                type="password"
                value={value.password}
                autoComplete="new-password"
                onChange={(e) => onChange({ password: e.target.value })}
              />
            )}
          </Field>
        </div>
        <small id={authId} className="hint">
          Empty username: none. A stored password shows as ******** and is kept unless you change it.
        </small>
      </details>
      <div className="grid2">
        <Field label="Expected status" hint="Codes or ranges, e.g. 200-299, 301">
          {(id) => (
            <input
              id={id}
              className="mono"
              value={value.expectedStatus}
              onChange={(e) => onChange({ expectedStatus: e.target.value })}
            />
          )}
        </Field>
        <label className="check">
          <input
            type="checkbox"
            checked={value.followRedirects}
            onChange={(e) => onChange({ followRedirects: e.target.checked })}
          />{' '}
          Follow redirects (up to 10)
        </label>
      </div>
    </>
  );
}

export function AnswerChecks({
  value,
  onChange,
}: {
  value: AnswerChecksDraft;
  onChange: (patch: Partial<AnswerChecksDraft>) => void;
}) {
  return (
    <>
      <div className="grid2">
        <Field label="Slower than (ms) is down" hint="Empty: no limit">
          {(id) => (
            <input
              id={id}
              type="number"
              min={1}
              max={120_000}
              value={value.maxResponseMs}
              onChange={(e) => onChange({ maxResponseMs: e.target.value })}
            />
          )}
        </Field>
        <Field label="Body contains" hint="Case-sensitive text">
          {(id) => (
            <input
              id={id}
              value={value.bodyContains}
              onChange={(e) => onChange({ bodyContains: e.target.value })}
            />
          )}
        </Field>
        <Field label="Body does not contain">
          {(id) => (
            <input
              id={id}
              value={value.bodyNotContains}
              onChange={(e) => onChange({ bodyNotContains: e.target.value })}
            />
          )}
        </Field>
      </div>
      <AssertionsEditor rows={value.json} onChange={(json) => onChange({ json })} />
    </>
  );
}
