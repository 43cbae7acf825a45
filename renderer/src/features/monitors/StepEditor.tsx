import { useId, useState } from 'react';
import { post } from '../../api/client';
import { ErrorText, Field, useAction } from '../../components/ui';
import { AnswerChecks, RequestFields } from './KindFields';
import { emptyStep, moveItem, type StepDraft, stepToDraft } from './kinds';
import type { Extract, WorkflowStep } from './types';

/** The variables a step stores from its answer: `{var, from: json|regex|header, path|pattern|header}`. */
function ExtractEditor({
  rows,
  onChange,
  n,
}: {
  rows: Extract[];
  onChange: (rows: Extract[]) => void;
  n: number;
}) {
  const set = (i: number, patch: Partial<Extract>) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const where: Record<Extract['from'], { key: 'path' | 'pattern' | 'header'; placeholder: string }> = {
    json: { key: 'path', placeholder: '$.token' },
    regex: { key: 'pattern', placeholder: 'id=(\\d+)' },
    header: { key: 'header', placeholder: 'Location' },
  };
  return (
    <fieldset className="stack mon-pairs">
      <legend>Keep from the answer</legend>
      {rows.map((r, i) => {
        const w = where[r.from];
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place, never reordered
          <div className="row" key={i}>
            <input
              aria-label={`Step ${n} variable ${i + 1} name`}
              placeholder="variable"
              className="mono"
              value={r.var}
              onChange={(e) => set(i, { var: e.target.value })}
            />
            <select
              aria-label={`Step ${n} variable ${i + 1} from`}
              value={r.from}
              onChange={(e) => set(i, { from: e.target.value as Extract['from'] })}
            >
              <option value="json">JSON path</option>
              <option value="regex">regex on the body</option>
              <option value="header">header</option>
            </select>
            <input
              aria-label={`Step ${n} variable ${i + 1} ${w.key}`}
              placeholder={w.placeholder}
              className="mono grow"
              value={r[w.key] ?? ''}
              onChange={(e) => set(i, { [w.key]: e.target.value })}
            />
            <button
              type="button"
              className="ghost"
              aria-label={`Remove step ${n} variable ${i + 1}`}
              onClick={() => onChange(rows.filter((_, j) => j !== i))}
            >
              ×
            </button>
          </div>
        );
      })}
      <div>
        <button type="button" onClick={() => onChange([...rows, { var: '', from: 'json', path: '$' }])}>
          Add variable to keep
        </button>
      </div>
      <small className="hint">Later steps use it as {'{{name}}'} in their URL, headers and body.</small>
    </fieldset>
  );
}

/**
 * A workflow's steps, run in order: add, remove, move up/down, each with its request, checks and the
 * variables it keeps; a step can also be made from a pasted `curl` command (`POST /workflow-monitor/build-step`).
 */
export function StepEditor({
  steps,
  onChange,
}: {
  steps: StepDraft[];
  onChange: (steps: StepDraft[]) => void;
}) {
  const [curl, setCurl] = useState('');
  const act = useAction();
  const curlId = useId();
  const set = (i: number, patch: Partial<StepDraft>) =>
    onChange(steps.map((s, j) => (j === i ? { ...s, ...patch } : s)));

  const fromCurl = () =>
    act.run(async () => {
      const { step } = await post<{ step: WorkflowStep }>('/workflow-monitor/build-step', { curl });
      const draft = stepToDraft(step, null);
      // The one empty step of a new workflow is replaced rather than kept before it.
      const only = steps.length === 1 && !steps[0]?.url.trim() ? [] : steps;
      onChange([...only, draft]);
      setCurl('');
    });

  return (
    <div className="stack">
      <ol className="mon-steps" aria-label="Steps">
        {steps.map((s, i) => {
          const n = i + 1;
          return (
            <li key={s.key} className="card stack" aria-label={`Step ${n}${s.name ? `: ${s.name}` : ''}`}>
              <div className="row wrap">
                <strong>Step {n}</strong>
                <div className="grow">
                  <Field label={`Step ${n} name`}>
                    {(id) => (
                      <input
                        id={id}
                        value={s.name}
                        maxLength={100}
                        placeholder={`step ${n}`}
                        onChange={(e) => set(i, { name: e.target.value })}
                      />
                    )}
                  </Field>
                </div>
                <button
                  type="button"
                  aria-label={`Move step ${n} up`}
                  disabled={i === 0}
                  onClick={() => onChange(moveItem(steps, i, i - 1))}
                >
                  ↑
                </button>
                <button
                  type="button"
                  aria-label={`Move step ${n} down`}
                  disabled={i === steps.length - 1}
                  onClick={() => onChange(moveItem(steps, i, i + 1))}
                >
                  ↓
                </button>
                <button
                  type="button"
                  className="danger"
                  aria-label={`Remove step ${n}`}
                  disabled={steps.length === 1}
                  onClick={() => onChange(steps.filter((_, j) => j !== i))}
                >
                  Remove
                </button>
              </div>
              <RequestFields
                value={s}
                onChange={(patch) => set(i, patch)}
                urlHint="{{variable}}, {{$timestamp}} and {{$uuid}} are replaced"
              />
              <details>
                <summary>Checks on the answer</summary>
                <AnswerChecks value={s} onChange={(patch) => set(i, patch)} />
              </details>
              <ExtractEditor rows={s.extract} n={n} onChange={(extract) => set(i, { extract })} />
            </li>
          );
        })}
      </ol>
      <div className="actions">
        <button type="button" onClick={() => onChange([...steps, emptyStep()])} disabled={steps.length >= 20}>
          Add step
        </button>
      </div>
      <div className="stack mon-curl">
        <label htmlFor={curlId}>Paste a curl command</label>
        <textarea
          id={curlId}
          rows={2}
          className="mono"
          placeholder="curl -X POST https://api.example.com/login -H 'Content-Type: application/json' -d '{…}'"
          value={curl}
          onChange={(e) => setCurl(e.target.value)}
        />
        <div>
          <button
            type="button"
            onClick={() => void fromCurl()}
            disabled={act.busy || !curl.trim() || steps.length >= 20}
          >
            Add step from curl
          </button>
        </div>
        <ErrorText error={act.error} />
      </div>
    </div>
  );
}
