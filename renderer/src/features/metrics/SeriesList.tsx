import { type FormEvent, useId, useState } from 'react';
import { api, del } from '../../api/client';
import { FieldProblem, fieldErrors } from '../../components/field-errors';
import { ErrorText, formatDate, useAction } from '../../components/ui';
import { formatTags, formatValue } from './metrics';
import { SeriesChart } from './SeriesChart';
import type { Metric } from './types';

const FIELDS = ['unit', 'description'] as const;

function SeriesEdit({
  sourceId,
  metric,
  onSaved,
  onCancel,
}: {
  sourceId: number;
  metric: Metric;
  onSaved: (m: Metric) => void;
  onCancel: () => void;
}) {
  const [unit, setUnit] = useState(metric.unit ?? '');
  const [description, setDescription] = useState(metric.description ?? '');
  const act = useAction();
  const unitId = useId();
  const descId = useId();
  const errs = fieldErrors(act.error, FIELDS);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void act.run(async () => {
      const saved = await api<Metric>('PATCH', `/metric-source/${sourceId}/metrics/${metric.id}`, {
        body: { unit: unit.trim(), description },
      });
      onSaved({ ...metric, ...saved });
    });
  };
  return (
    <form
      className="stack metric-edit"
      onSubmit={submit}
      aria-label={`Edit ${metric.name}${formatTags(metric.tags)}`}
    >
      <div className="grid2">
        <div className="field">
          <label htmlFor={unitId}>Unit</label>
          <input id={unitId} value={unit} maxLength={20} onChange={(e) => setUnit(e.target.value)} />
          <small className="hint">Shown on the axis and beside values: °C, ms, %, bytes …</small>
          <FieldProblem text={errs.of('unit')} />
        </div>
        <div className="field">
          <label htmlFor={descId}>Description</label>
          <input
            id={descId}
            value={description}
            maxLength={500}
            onChange={(e) => setDescription(e.target.value)}
          />
          <FieldProblem text={errs.of('description')} />
        </div>
      </div>
      <ErrorText error={errs.rest} />
      <div className="actions">
        <button type="submit" className="primary" disabled={act.busy}>
          Save series
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** One series: its figures, the chart on request, unit and description editing, delete. */
function SeriesRow({
  sourceId,
  metric,
  version,
  onChanged,
  onRemoved,
}: {
  sourceId: number;
  metric: Metric;
  version: number;
  onChanged: (m: Metric) => void;
  onRemoved: () => void;
}) {
  const [chart, setChart] = useState(false);
  const [editing, setEditing] = useState(false);
  const act = useAction();
  const full = `${metric.name}${formatTags(metric.tags)}`;
  const remove = () =>
    act.run(async () => {
      if (!confirm(`Delete the series ${full} and all its points? Alerts on it stay.`)) return;
      await del(`/metric-source/${sourceId}/metrics/${metric.id}`);
      onRemoved();
    });
  return (
    <li className="card stack metric-series" aria-label={full}>
      <div className="row wrap">
        <span className="mono metric-name">
          {metric.name}
          {Object.keys(metric.tags ?? {}).length ? (
            <span className="metric-tags">{formatTags(metric.tags)}</span>
          ) : null}
        </span>
        {metric.unit ? <span className="tag">{metric.unit}</span> : null}
      </div>
      {metric.description ? <p className="hint metric-desc">{metric.description}</p> : null}
      <dl className="hb-facts">
        <div>
          <dt>Last value</dt>
          <dd className="metric-last">{formatValue(metric.lastValue, metric.unit)}</dd>
        </div>
        <div>
          <dt>Last point</dt>
          <dd>{formatDate(metric.lastAt)}</dd>
        </div>
        <div>
          <dt>Points in 24 h</dt>
          <dd>{metric.count24h}</dd>
        </div>
      </dl>
      <div className="actions">
        <button type="button" aria-expanded={chart} onClick={() => setChart((c) => !c)}>
          {chart ? 'Hide chart' : 'Chart'}
          <span className="sr-only">{` of ${full}`}</span>
        </button>
        <button type="button" aria-expanded={editing} onClick={() => setEditing((e) => !e)}>
          Edit<span className="sr-only">{` ${full}`}</span>
        </button>
        <button type="button" className="danger" onClick={() => void remove()}>
          Delete<span className="sr-only">{` ${full}`}</span>
        </button>
      </div>
      <ErrorText error={act.error} />
      {editing ? (
        <SeriesEdit
          sourceId={sourceId}
          metric={metric}
          onCancel={() => setEditing(false)}
          onSaved={(m) => {
            setEditing(false);
            onChanged(m);
          }}
        />
      ) : null}
      {chart ? <SeriesChart sourceId={sourceId} metric={metric} version={version} /> : null}
    </li>
  );
}

/** The source's series, newest point first as the server lists them. */
export function SeriesList({
  sourceId,
  series,
  version,
  onChanged,
}: {
  sourceId: number;
  series: Metric[] | null;
  version: number;
  onChanged: (next: Metric[]) => void;
}) {
  const headId = `series-${sourceId}`;
  return (
    <section className="stack" aria-labelledby={headId}>
      <h2 id={headId}>Series</h2>
      {series && series.length === 0 ? (
        <p className="empty">
          No series yet. Each metric name with its own set of tags becomes a series when its first point
          arrives at the ingest URL.
        </p>
      ) : null}
      <ul className="rows metric-series-list" aria-label="Series" aria-busy={series === null}>
        {(series ?? []).map((m) => (
          <SeriesRow
            key={m.id}
            sourceId={sourceId}
            metric={m}
            version={version}
            onChanged={(next) => onChanged((series ?? []).map((x) => (x.id === next.id ? next : x)))}
            onRemoved={() => onChanged((series ?? []).filter((x) => x.id !== m.id))}
          />
        ))}
      </ul>
    </section>
  );
}
