import { type FormEvent, useEffect, useState } from 'react';
import { errorText, post } from '../../api/client';
import type { DeliveryTestAnswer } from '../../api/types';
import { FieldProblem } from '../../components/field-errors';
import { Field, useAction } from '../../components/ui';
import { PairsEditor } from '../monitors/KindFields';
import {
  type AdapterDraft,
  type AdapterField,
  type AdapterInfo,
  bodyOf,
  DELAY_MAX_SEC,
  delayText,
  draftOf,
  hasMask,
  isDirty,
  problemOf,
  SECRET_MASK,
} from './adapters';

type TestResult = { ok: true } | { ok: false; error: string };

/**
 * One adapter's settings inside a channel's delivery card: its own fields with where to find them, the
 * common `enabled` / `minPriority` / `delaySec`, Save, Remove and Test. `stored` is the channel's masked
 * entry (absent: not set up yet); `save(body | null)` writes the whole deliveryConfig with this entry
 * replaced (null removes it) and throws the server's error.
 */
export function AdapterForm({
  info,
  appid,
  stored,
  save,
  onTested,
}: {
  info: AdapterInfo;
  appid: number;
  stored: Record<string, unknown> | undefined;
  save: (body: Record<string, unknown> | null) => Promise<void>;
  onTested: () => void;
}) {
  const [d, setD] = useState<AdapterDraft>(() => draftOf(info, stored));
  const [saved, setSaved] = useState<'saved' | 'removed' | null>(null);
  const [test, setTest] = useState<TestResult | null>(null);
  const act = useAction();
  const testing = useAction();
  const storedJson = JSON.stringify(stored ?? null);
  // What the server keeps after a save (secrets masked again) becomes the form; edits of other
  // adapters do not change this entry and leave this form alone.
  // biome-ignore lint/correctness/useExhaustiveDependencies: storedJson stands for stored
  useEffect(() => setD(draftOf(info, stored)), [info, storedJson]);

  const patch = (p: Partial<AdapterDraft>) => {
    setSaved(null);
    setD((prev) => ({ ...prev, ...p }));
  };
  const setValue = (key: string, value: string) => patch({ values: { ...d.values, [key]: value } });
  const problem = problemOf(act.error, info);
  const of = (key: string) => (problem?.field === key ? problem.text : null);
  const dirty = isDirty(info, d, stored);
  const testable = stored !== undefined && stored.enabled !== false && !dirty;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTest(null);
    void act.run(async () => {
      await save(bodyOf(info, d));
      setSaved('saved');
    });
  };
  const remove = () =>
    act.run(async () => {
      if (!confirm(`Stop re-delivering through ${info.label} and forget its settings?`)) return;
      setTest(null);
      await save(null);
      setSaved('removed');
    });
  const runTest = () =>
    testing.run(async () => {
      setTest(null);
      try {
        const answer = await post<DeliveryTestAnswer>(`/application/${appid}/delivery/test`, {
          adapter: info.name,
        });
        const r = answer.results[info.name];
        setTest(r?.ok ? { ok: true } : { ok: false, error: r?.error ?? 'no result for this adapter' });
      } catch (err) {
        setTest({ ok: false, error: errorText(err) });
      } finally {
        onTested();
      }
    });

  const delay = Number(d.delaySec);
  return (
    <form className="stack" onSubmit={submit} aria-label={`${info.label} delivery`}>
      <p className="hint">{info.about}</p>
      <label className="check">
        <input type="checkbox" checked={d.enabled} onChange={(e) => patch({ enabled: e.target.checked })} />{' '}
        Re-deliver through {info.label}
      </label>
      <FieldProblem text={of('enabled')} />
      {info.fields.map((f) =>
        f.kind === 'headers' ? (
          <div key={f.key} className="stack">
            <PairsEditor
              label="Headers"
              rows={d.headers}
              onChange={(headers) => patch({ headers })}
              namePlaceholder="Authorization"
              allSecret
            />
            <small className="hint">{f.hint}</small>
            <FieldProblem text={of(f.key)} />
          </div>
        ) : (
          <div key={f.key} className="stack dl-field">
            <AdapterInput field={f} value={d.values[f.key] ?? ''} onChange={(v) => setValue(f.key, v)} />
            <FieldProblem text={of(f.key)} />
          </div>
        ),
      )}
      <div className="grid2">
        <div className="stack dl-field">
          <Field label="From priority" hint="Messages of this priority (0-10) and above">
            {(id) => (
              <input
                id={id}
                type="number"
                min={0}
                max={10}
                value={d.minPriority}
                onChange={(e) => patch({ minPriority: e.target.value })}
              />
            )}
          </Field>
          <FieldProblem text={of('minPriority')} />
        </div>
        <div className="stack dl-field">
          <Field
            label="Re-deliver after (seconds)"
            hint={
              Number.isFinite(delay) && d.delaySec !== ''
                ? `Still unread after ${delayText(delay)} (at most ${DELAY_MAX_SEC})`
                : `Still unread after this long (at most ${DELAY_MAX_SEC})`
            }
          >
            {(id) => (
              <input
                id={id}
                type="number"
                min={0}
                max={DELAY_MAX_SEC}
                value={d.delaySec}
                onChange={(e) => patch({ delaySec: e.target.value })}
              />
            )}
          </Field>
          <FieldProblem text={of('delaySec')} />
        </div>
      </div>
      {/* The header rows say it themselves when they hold one. */}
      {hasMask(d) && !d.headers.some((h) => h.value === SECRET_MASK) ? (
        <small className="hint">Hidden values (********) are kept unless you change them.</small>
      ) : null}
      {problem && problem.field === null ? (
        <p className="error" role="alert">
          {problem.text}
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={act.busy || !dirty}>
          {stored ? 'Save' : `Turn on ${info.label}`}
        </button>
        <button type="button" onClick={() => void runTest()} disabled={!testable || testing.busy}>
          {testing.busy ? 'Testing…' : 'Test'}
        </button>
        {stored && dirty ? (
          <button
            type="button"
            onClick={() => {
              setD(draftOf(info, stored));
              act.setError(null);
            }}
          >
            Discard changes
          </button>
        ) : null}
        {stored ? (
          <button type="button" className="danger" onClick={() => void remove()} disabled={act.busy}>
            Remove
          </button>
        ) : null}
        {saved ? <span role="status">{saved === 'saved' ? 'Saved.' : 'Removed.'}</span> : null}
      </div>
      {!testable ? (
        <small className="hint">
          {stored === undefined
            ? 'Test sends through saved settings: turn it on first.'
            : stored.enabled === false
              ? 'Turned off: turn it on and save to test it.'
              : 'Save your changes to test them.'}
        </small>
      ) : null}
      {test?.ok ? (
        <p className="dl-test ok" role="status">
          Test sent through {info.label}: ok.
        </p>
      ) : test ? (
        <p className="dl-test failed" role="alert">
          Test through {info.label} failed: {test.error}
        </p>
      ) : null}
    </form>
  );
}

function AdapterInput({
  field: f,
  value,
  onChange,
}: {
  field: AdapterField;
  value: string;
  onChange: (value: string) => void;
}) {
  const label = f.optional ? `${f.label} (optional)` : f.label;
  return (
    <Field label={label} hint={f.hint}>
      {(id) =>
        f.kind === 'region' ? (
          <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
            <option value="us">US</option>
            <option value="eu">EU</option>
          </select>
        ) : (
          <input
            id={id}
            className={f.kind === 'text' || f.kind === 'emails' ? undefined : 'mono'}
            type={f.kind === 'secret' ? 'password' : f.kind === 'phone' ? 'tel' : 'text'}
            inputMode={f.kind === 'url' ? 'url' : f.kind === 'emails' ? 'email' : undefined}
            autoComplete={f.kind === 'secret' ? 'new-password' : 'off'}
            spellCheck={false}
            placeholder={f.placeholder}
            value={value}
            onChange={(e) => onChange(e.target.value)}
          />
        )
      }
    </Field>
  );
}
