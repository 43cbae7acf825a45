import { type FormEvent, useId, useState } from 'react';
import { del, post, put } from '../../api/client';
import { FieldProblem, fieldErrors } from '../../components/field-errors';
import { ErrorText, formatDate, PriorityBadge, useAction } from '../../components/ui';
import { StatusChip } from '../heartbeats/HealthDot';
import { formatDuration, formatTags, formatValue, parseTags } from './metrics';
import type { AlertCondition, Metric, MetricAlert, MetricAlertInput } from './types';

const FIELDS = [
  'metric',
  'tags',
  'condition',
  'threshold',
  'forSec',
  'priority',
  'message',
  'enabled',
] as const;

const FOR_UNITS = [
  { unit: 's', label: 'seconds', sec: 1 },
  { unit: 'm', label: 'minutes', sec: 60 },
  { unit: 'h', label: 'hours', sec: 3_600 },
] as const;
type ForUnit = (typeof FOR_UNITS)[number]['unit'];

function splitFor(sec: number): { value: string; unit: ForUnit } {
  if (sec >= 3_600 && sec % 3_600 === 0) return { value: String(sec / 3_600), unit: 'h' };
  if (sec >= 60 && sec % 60 === 0) return { value: String(sec / 60), unit: 'm' };
  return { value: String(sec), unit: 's' };
}

/** “temp{room="office"} above 30 °C for 2m”: an alert's rule in words. */
export function describeAlert(
  a: Pick<MetricAlert, 'metric' | 'tags' | 'condition' | 'threshold' | 'forSec'>,
  unit = '',
) {
  const series = `${a.metric}${formatTags(a.tags)}`;
  const forText = a.forSec > 0 ? ` for ${formatDuration(a.forSec)}` : '';
  if (a.condition === 'absent') return `no data for ${series}${forText}`;
  return `${series} ${a.condition} ${formatValue(a.threshold, unit)}${forText}`;
}

/** Makes or edits one alert; the server's `<field>: …` answers show under their field. */
function AlertForm({
  sourceId,
  alert,
  series,
  onSaved,
  onCancel,
}: {
  sourceId: number;
  alert?: MetricAlert;
  series: Metric[];
  onSaved: (a: MetricAlert) => void;
  onCancel: () => void;
}) {
  const names = [...new Set(series.map((m) => m.name))].sort();
  const [metric, setMetric] = useState(alert?.metric ?? names[0] ?? '');
  const [tags, setTags] = useState(alert ? formatTags(alert.tags).replace(/^\{|\}$/g, '') : '');
  const [condition, setCondition] = useState<AlertCondition>(alert?.condition ?? 'above');
  const [threshold, setThreshold] = useState(
    alert?.threshold === null || alert?.threshold === undefined ? '' : String(alert.threshold),
  );
  const initialFor = splitFor(alert?.forSec ?? 0);
  const [forValue, setForValue] = useState(initialFor.value);
  const [forUnit, setForUnit] = useState<ForUnit>(initialFor.unit);
  const [priority, setPriority] = useState(String(alert?.priority ?? 8));
  const [message, setMessage] = useState(alert?.message ?? '');
  const [enabled, setEnabled] = useState(alert?.enabled ?? true);
  const [tagError, setTagError] = useState<string | null>(null);
  const act = useAction();
  const ids = {
    metric: useId(),
    list: useId(),
    tags: useId(),
    cond: useId(),
    thr: useId(),
    forV: useId(),
    forU: useId(),
    prio: useId(),
    msg: useId(),
    title: useId(),
  };
  const errs = fieldErrors(act.error, FIELDS);
  const unit = series.find((m) => m.name === metric && m.unit)?.unit ?? '';

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseTags(tags);
    if ('error' in parsed) {
      setTagError(parsed.error);
      return;
    }
    setTagError(null);
    void act.run(async () => {
      const body: MetricAlertInput = {
        metric: metric.trim(),
        tags: parsed.tags,
        condition,
        forSec: Number(forValue) * (FOR_UNITS.find((u) => u.unit === forUnit)?.sec ?? 1),
        priority: Number(priority),
        message,
        enabled,
      };
      if (condition !== 'absent') body.threshold = threshold.trim() === '' ? null : Number(threshold);
      onSaved(
        alert
          ? await put<MetricAlert>(`/metric-source/${sourceId}/alerts/${alert.id}`, body)
          : await post<MetricAlert>(`/metric-source/${sourceId}/alerts`, body),
      );
    });
  };

  return (
    <form className="card stack metric-alert-form" onSubmit={submit} aria-labelledby={ids.title}>
      <h3 id={ids.title}>{alert ? 'Edit alert' : 'New alert'}</h3>
      <div className="grid2">
        <div className="field">
          <label htmlFor={ids.metric}>Metric</label>
          <input
            id={ids.metric}
            className="mono"
            list={ids.list}
            value={metric}
            onChange={(e) => setMetric(e.target.value)}
            autoComplete="off"
            spellCheck={false}
            required
          />
          <datalist id={ids.list}>
            {names.map((n) => (
              <option key={n} value={n} />
            ))}
          </datalist>
          <small className="hint">A series name of this source (or one still to come)</small>
          <FieldProblem text={errs.of('metric')} />
        </div>
        <div className="field">
          <label htmlFor={ids.tags}>Tags</label>
          <input
            id={ids.tags}
            className="mono"
            value={tags}
            onChange={(e) => setTags(e.target.value)}
            placeholder="host=nas, room=office"
            autoComplete="off"
            spellCheck={false}
          />
          <small className="hint">Only series with these tags; empty: every series of the metric</small>
          <FieldProblem text={tagError ?? errs.of('tags')} />
        </div>
        <div className="field">
          <label htmlFor={ids.cond}>Condition</label>
          <select
            id={ids.cond}
            value={condition}
            onChange={(e) => setCondition(e.target.value as AlertCondition)}
          >
            <option value="above">above the threshold</option>
            <option value="below">below the threshold</option>
            <option value="absent">no data (absent)</option>
          </select>
          <FieldProblem text={errs.of('condition')} />
        </div>
        {condition === 'absent' ? null : (
          <div className="field">
            <label htmlFor={ids.thr}>{unit ? `Threshold (${unit})` : 'Threshold'}</label>
            <input
              id={ids.thr}
              type="number"
              step="any"
              value={threshold}
              onChange={(e) => setThreshold(e.target.value)}
              required
            />
            <FieldProblem text={errs.of('threshold')} />
          </div>
        )}
        <div className="field">
          <label htmlFor={ids.forV}>For</label>
          <div className="row">
            <input
              id={ids.forV}
              type="number"
              min={0}
              step={1}
              value={forValue}
              onChange={(e) => setForValue(e.target.value)}
              required
            />
            <label className="sr-only" htmlFor={ids.forU}>
              For unit
            </label>
            <select id={ids.forU} value={forUnit} onChange={(e) => setForUnit(e.target.value as ForUnit)}>
              {FOR_UNITS.map((u) => (
                <option key={u.unit} value={u.unit}>
                  {u.label}
                </option>
              ))}
            </select>
          </div>
          <small className="hint">
            {condition === 'absent'
              ? 'How long without a point before it fires (at least the server’s minimum interval)'
              : 'How long a series must stay beyond the threshold before it fires; 0: at once'}
          </small>
          <FieldProblem text={errs.of('forSec')} />
        </div>
        <div className="field">
          <label htmlFor={ids.prio}>Priority</label>
          <input
            id={ids.prio}
            type="number"
            min={0}
            max={10}
            value={priority}
            onChange={(e) => setPriority(e.target.value)}
            required
          />
          <small className="hint">Of the firing message (0-10); “back to normal” is sent at 2</small>
          <FieldProblem text={errs.of('priority')} />
        </div>
      </div>
      <div className="field">
        <label htmlFor={ids.msg}>Message</label>
        <textarea
          id={ids.msg}
          rows={2}
          maxLength={1000}
          value={message}
          onChange={(e) => setMessage(e.target.value)}
          aria-describedby={`${ids.msg}-hint`}
        />
        <small className="hint" id={`${ids.msg}-hint`}>
          Empty: “{'{metric}{tags}'} is {'{value}'} (above {'{threshold}'} for {'{forSec}'} s)”. Placeholders:{' '}
          <span className="mono">{'{{value}}'}</span> the value that breached,{' '}
          <span className="mono">{'{{threshold}}'}</span> the threshold,{' '}
          <span className="mono">{'{{metric}}'}</span> the metric’s name,{' '}
          <span className="mono">{'{{tags}}'}</span> the series’ tags.
        </small>
        <FieldProblem text={errs.of('message')} />
      </div>
      <label className="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
      </label>
      <FieldProblem text={errs.of('enabled')} />
      <ErrorText error={errs.rest} />
      <div className="actions">
        <button type="submit" className="primary" disabled={act.busy}>
          {alert ? 'Save alert' : 'Create alert'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** A source's alerts: their state (ok or firing, since when, the last value) and the editor. */
export function Alerts({
  sourceId,
  alerts,
  series,
  onChanged,
}: {
  sourceId: number;
  alerts: MetricAlert[] | null;
  series: Metric[];
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState<number | 'new' | null>(null);
  const act = useAction();
  const headId = `alerts-${sourceId}`;
  const unitOf = (name: string) => series.find((m) => m.name === name && m.unit)?.unit ?? '';
  const remove = (a: MetricAlert) =>
    act.run(async () => {
      if (!confirm(`Delete the alert “${describeAlert(a, unitOf(a.metric))}”?`)) return;
      await del(`/metric-source/${sourceId}/alerts/${a.id}`);
      onChanged();
    });
  /** The editor of a new alert (no argument) or of `a`; saving closes it and reloads. */
  const form = (a?: MetricAlert) => (
    <AlertForm
      sourceId={sourceId}
      {...(a ? { alert: a } : {})}
      series={series}
      onCancel={() => setEditing(null)}
      onSaved={() => {
        setEditing(null);
        onChanged();
      }}
    />
  );
  return (
    <section className="stack" aria-labelledby={headId}>
      <div className="pane-head">
        <h2 id={headId}>Alerts</h2>
        <button
          type="button"
          className="primary"
          onClick={() => setEditing('new')}
          disabled={editing === 'new'}
        >
          New alert
        </button>
      </div>
      {editing === 'new' ? form() : null}
      <ErrorText error={act.error} />
      {alerts && alerts.length === 0 && editing !== 'new' ? (
        <p className="empty">
          No alerts. An alert sends a message when a series goes above or below a threshold, or stops coming.
        </p>
      ) : null}
      <ul className="rows" aria-label="Alerts" aria-busy={alerts === null}>
        {(alerts ?? []).map((a) => {
          const unit = unitOf(a.metric);
          const rule = describeAlert(a, unit);
          return (
            <li key={a.id} className="card stack metric-alert" aria-label={rule}>
              <div className="row wrap">
                <StatusChip status={a.enabled ? a.state : 'disabled'} />
                <span className="mono grow metric-rule">{rule}</span>
                <PriorityBadge priority={a.priority} />
              </div>
              <dl className="hb-facts">
                <div>
                  <dt>{a.state === 'firing' ? 'Firing since' : 'OK since'}</dt>
                  <dd>{formatDate(a.since)}</dd>
                </div>
                <div>
                  <dt>Last value</dt>
                  <dd className="metric-last">{formatValue(a.lastValue, unit)}</dd>
                </div>
                {a.message ? (
                  <div>
                    <dt>Message</dt>
                    <dd>{a.message}</dd>
                  </div>
                ) : null}
              </dl>
              <div className="actions">
                <button
                  type="button"
                  aria-expanded={editing === a.id}
                  onClick={() => setEditing(editing === a.id ? null : a.id)}
                >
                  Edit<span className="sr-only">{` alert ${rule}`}</span>
                </button>
                <button type="button" className="danger" onClick={() => void remove(a)}>
                  Delete<span className="sr-only">{` alert ${rule}`}</span>
                </button>
              </div>
              {editing === a.id ? form(a) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
