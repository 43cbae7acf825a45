import { type FormEvent, useId, useMemo, useState } from 'react';
import { post, put } from '../../api/client';
import type { Channel } from '../../api/types';
import { FieldProblem, fieldErrors } from '../../components/field-errors';
import { ErrorText, Field, useAction } from '../../components/ui';
import { buildTree, flatten } from '../channels/tree';
import { browserTimeZone, formatDuration, timeZones } from '../heartbeats/schedule';
import { bodyOf, draftOf, sameSource, toggle, WEEK, type WindowDraft, weeklyMinutes } from './schedule';
import type { MaintenanceWindow, SourceRef } from './types';

/** A heartbeat or monitor the window may cover, as the pickers list it. */
export interface SourceOption extends SourceRef {
  name: string;
  label: string;
  appid: number;
}

/** The fields a server 400 may name (docs/api.md "Maintenance windows"); shown under each. */
const FIELDS = [
  'name',
  'schedule',
  'schedule.startsAt',
  'schedule.endsAt',
  'schedule.days',
  'schedule.start',
  'schedule.end',
  'schedule.timezone',
  'channelIds',
  'monitors',
] as const;

/**
 * Create or edit a maintenance window: once (two local date-times) or weekly (days, `HH:MM` start and end
 * in an IANA zone, the browser's by default), the channels it covers (with their sub-channels on request)
 * and single heartbeats or monitors. `PUT` replaces the whole record, so the form always sends all of it.
 */
export function MaintenanceForm({
  window: w,
  channels,
  sources,
  onSaved,
  onCancel,
}: {
  window?: MaintenanceWindow;
  channels: Channel[];
  sources: SourceOption[];
  onSaved: (w: MaintenanceWindow) => void;
  onCancel: () => void;
}) {
  const [d, setD] = useState<WindowDraft>(() => draftOf(w, browserTimeZone()));
  const patch = (p: Partial<WindowDraft>) => setD((prev) => ({ ...prev, ...p }));
  const zones = useMemo(() => {
    const list = timeZones();
    return list.includes(d.timezone) ? list : [d.timezone, ...list];
  }, [d.timezone]);
  // Own channels only (a window covers what its owner owns), in tree order.
  const own = flatten(buildTree(channels.filter((c) => !c.internal && !c.shared)));
  const save = useAction();
  const errs = fieldErrors(save.error, FIELDS);
  const titleId = useId();
  const typeName = useId();
  const title = w ? `Edit “${w.name}”` : 'New maintenance window';
  const mins = d.type === 'weekly' ? weeklyMinutes(d.start, d.end) : null;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run(async () => {
      const body = bodyOf(d);
      onSaved(
        w
          ? await put<MaintenanceWindow>(`/maintenance-window/${w.id}`, body)
          : await post<MaintenanceWindow>('/maintenance-window', body),
      );
    });
  };

  return (
    <form className="card stack mw-form" onSubmit={submit} aria-labelledby={titleId}>
      <h1 id={titleId}>{title}</h1>
      <p className="hint">
        While a window is on, the heartbeats and monitors it covers show <em>maintenance</em> and send no down
        or recovery messages, and messages into its channels arrive silently.
      </p>
      <div className="grid2">
        <Field label="Name">
          {(id) => (
            <input
              id={id}
              value={d.name}
              maxLength={200}
              onChange={(e) => patch({ name: e.target.value })}
              required
            />
          )}
        </Field>
        <label className="check">
          <input type="checkbox" checked={d.enabled} onChange={(e) => patch({ enabled: e.target.checked })} />{' '}
          Enabled
        </label>
      </div>
      <FieldProblem text={errs.of('name')} />

      <fieldset className="stack">
        <legend>When</legend>
        <div className="segmented">
          <label className={d.type === 'weekly' ? 'on' : ''}>
            <input
              type="radio"
              name={typeName}
              checked={d.type === 'weekly'}
              onChange={() => patch({ type: 'weekly' })}
            />
            Every week
          </label>
          <label className={d.type === 'once' ? 'on' : ''}>
            <input
              type="radio"
              name={typeName}
              checked={d.type === 'once'}
              onChange={() => patch({ type: 'once' })}
            />
            Once
          </label>
        </div>
        {d.type === 'once' ? (
          <div className="grid2">
            <Field label="Starts" hint="Your local time">
              {(id) => (
                <input
                  id={id}
                  type="datetime-local"
                  value={d.startsAt}
                  onChange={(e) => patch({ startsAt: e.target.value })}
                  required
                />
              )}
            </Field>
            <Field label="Ends" hint="Your local time">
              {(id) => (
                <input
                  id={id}
                  type="datetime-local"
                  value={d.endsAt}
                  onChange={(e) => patch({ endsAt: e.target.value })}
                  required
                />
              )}
            </Field>
            <FieldProblem text={errs.of('schedule.startsAt')} />
            <FieldProblem text={errs.of('schedule.endsAt')} />
          </div>
        ) : (
          <>
            <fieldset className="mw-days">
              <legend>Days</legend>
              {WEEK.map((day) => (
                <label key={day.day} className={`check ${d.days.includes(day.day) ? 'on' : ''}`}>
                  <input
                    type="checkbox"
                    aria-label={day.long}
                    checked={d.days.includes(day.day)}
                    onChange={(e) => patch({ days: toggle(d.days, day.day, e.target.checked) })}
                  />{' '}
                  <span aria-hidden="true">{day.short}</span>
                </label>
              ))}
            </fieldset>
            <FieldProblem text={errs.of('schedule.days')} />
            <div className="grid2">
              <Field label="Start time">
                {(id) => (
                  <input
                    id={id}
                    type="time"
                    value={d.start}
                    onChange={(e) => patch({ start: e.target.value })}
                    required
                  />
                )}
              </Field>
              <Field label="End time" hint="Before the start: runs past midnight; equal: 24 hours">
                {(id) => (
                  <input
                    id={id}
                    type="time"
                    value={d.end}
                    onChange={(e) => patch({ end: e.target.value })}
                    required
                  />
                )}
              </Field>
            </div>
            <FieldProblem text={errs.of('schedule.start') ?? errs.of('schedule.end')} />
            <Field
              label="Time zone"
              hint="The days and times are read in this zone, daylight saving included"
            >
              {(id) => (
                <select id={id} value={d.timezone} onChange={(e) => patch({ timezone: e.target.value })}>
                  {zones.map((z) => (
                    <option key={z} value={z}>
                      {z}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <FieldProblem text={errs.of('schedule.timezone')} />
            {mins !== null && d.days.length ? (
              <p className="hint">
                Each occurrence lasts {formatDuration(mins * 60)}
                {d.end <= d.start ? ', ending the next day' : ''}.
              </p>
            ) : null}
          </>
        )}
        <FieldProblem text={errs.of('schedule')} />
      </fieldset>

      <fieldset className="stack">
        <legend>Channels</legend>
        <p className="hint">Every heartbeat and monitor of these channels, and messages into them.</p>
        {own.length === 0 ? <p className="empty">No channels of your own yet.</p> : null}
        <ul className="mw-picks" aria-label="Channels">
          {own.map(({ channel: c, depth }) => (
            <li key={c.id} style={{ paddingInlineStart: `${depth * 1.25}rem` }}>
              <label className="check">
                <input
                  type="checkbox"
                  checked={d.channelIds.includes(c.id)}
                  onChange={(e) => patch({ channelIds: toggle(d.channelIds, c.id, e.target.checked) })}
                />{' '}
                {c.name}
              </label>
            </li>
          ))}
        </ul>
        <label className="check">
          <input
            type="checkbox"
            checked={d.includeSubtree}
            onChange={(e) => patch({ includeSubtree: e.target.checked })}
          />{' '}
          Include sub-channels
        </label>
        <FieldProblem text={errs.of('channelIds')} />
      </fieldset>

      <fieldset className="stack">
        <legend>Heartbeats and monitors</legend>
        <p className="hint">Single sources, wherever they write.</p>
        {sources.length === 0 ? <p className="empty">No heartbeats or monitors yet.</p> : null}
        <ul className="mw-picks" aria-label="Heartbeats and monitors">
          {sources.map((s) => (
            <li key={`${s.kind}:${s.id}`}>
              <label className="check">
                <input
                  type="checkbox"
                  checked={d.monitors.some((m) => sameSource(m, s))}
                  onChange={(e) =>
                    patch({
                      monitors: toggle(d.monitors, { kind: s.kind, id: s.id }, e.target.checked, sameSource),
                    })
                  }
                />{' '}
                {s.name} <span className="tag">{s.label}</span>
              </label>
            </li>
          ))}
        </ul>
        <FieldProblem text={errs.of('monitors')} />
      </fieldset>

      <ErrorText error={errs.rest} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy}>
          {w ? 'Save window' : 'Create window'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
