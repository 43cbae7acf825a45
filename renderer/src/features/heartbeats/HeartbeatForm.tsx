import { type FormEvent, useId, useMemo, useState } from 'react';
import { post, put } from '../../api/client';
import type { Channel } from '../../api/types';
import { ErrorText, Field, useAction } from '../../components/ui';
import { NameAndChannelFields, useNameAndChannel } from '../sources/NameAndChannel';
import {
  browserTimeZone,
  formatDuration,
  formatInZone,
  nextFires,
  splitInterval,
  timeZones,
  UNITS,
  type Unit,
  unitSeconds,
} from './schedule';
import type { Heartbeat, HeartbeatInput } from './types';

/** A duration field in the largest unit that divides it (seconds on the wire). */
export function useDuration(sec: number) {
  const initial = splitInterval(sec);
  const [value, setValue] = useState(String(initial.value));
  const [unit, setUnit] = useState<Unit>(initial.unit);
  return {
    value,
    unit,
    sec: Number(value) * unitSeconds(unit),
    onChange: (v: string, u: Unit) => {
      setValue(v);
      setUnit(u);
    },
  };
}

export function DurationInput({
  label,
  hint,
  value,
  unit,
  min,
  onChange,
}: {
  label: string;
  hint?: string;
  value: string;
  unit: Unit;
  min: number;
  onChange: (value: string, unit: Unit) => void;
}) {
  const unitId = useId();
  return (
    <Field label={label} {...(hint ? { hint } : {})}>
      {(id) => (
        <div className="row">
          <input
            id={id}
            type="number"
            min={min}
            step={1}
            value={value}
            onChange={(e) => onChange(e.target.value, unit)}
            required
          />
          <label className="sr-only" htmlFor={unitId}>
            {`${label} unit`}
          </label>
          <select id={unitId} value={unit} onChange={(e) => onChange(value, e.target.value as Unit)}>
            {UNITS.map((u) => (
              <option key={u.unit} value={u.unit}>
                {u.label}
              </option>
            ))}
          </select>
        </div>
      )}
    </Field>
  );
}

/** What the schedule means from now on, in the chosen zone: the next fire times, or the interval's deadlines. */
function SchedulePreview({
  mode,
  intervalSec,
  schedule,
  timezone,
  graceSec,
  Heading,
}: {
  /** h2 when the form is the page, else h3 (headings go down one level at a time). */
  Heading: 'h2' | 'h3';
  mode: 'interval' | 'cron';
  intervalSec: number;
  schedule: string;
  timezone: string;
  graceSec: number;
}) {
  const now = useMemo(() => new Date(), []);
  const headId = useId();
  if (mode === 'interval') {
    const ok = Number.isFinite(intervalSec) && intervalSec > 0;
    return (
      <section className="preview" aria-labelledby={headId}>
        <Heading id={headId}>Preview</Heading>
        {ok ? (
          <p>
            A ping now ({formatInZone(now, browserTimeZone())}) is expected again by{' '}
            <strong>{formatInZone(new Date(now.getTime() + intervalSec * 1000), browserTimeZone())}</strong>
            {'; without one it is late, and down at '}
            <strong>
              {formatInZone(new Date(now.getTime() + (intervalSec + graceSec) * 1000), browserTimeZone())}
            </strong>{' '}
            (every {formatDuration(intervalSec)}, grace {formatDuration(graceSec)}).
          </p>
        ) : (
          <p className="hint">Enter how often the job pings.</p>
        )}
      </section>
    );
  }
  const r = nextFires(schedule, timezone, 5, now);
  return (
    <section className="preview" aria-labelledby={headId}>
      <Heading id={headId}>Next fire times ({timezone})</Heading>
      {r.fires === undefined ? (
        <p className="error" role="alert">
          {r.error}
        </p>
      ) : (
        <>
          <ol aria-label="Next fire times" className="fires">
            {r.fires.map((d) => (
              <li key={d.getTime()}>
                <time dateTime={d.toISOString()}>{formatInZone(d, timezone)}</time>
              </li>
            ))}
          </ol>
          <p className="hint">
            A ping is due at each fire time; without one it is late, and down {formatDuration(graceSec)}{' '}
            later.
          </p>
        </>
      )}
    </section>
  );
}

export function HeartbeatForm({
  heartbeat,
  channels,
  defaultAppid,
  onSaved,
  onCancel,
  asPage,
}: {
  /** The form is the page (its heading is the page's h1). */
  asPage?: boolean;
  heartbeat?: Heartbeat;
  channels: Channel[];
  defaultAppid?: number | null;
  onSaved: (hb: Heartbeat) => void;
  onCancel?: () => void;
}) {
  const hb = heartbeat;
  const who = useNameAndChannel(channels, hb, defaultAppid);
  const { name, appid } = who;
  const [mode, setMode] = useState<'interval' | 'cron'>(hb?.schedule ? 'cron' : 'interval');
  const interval = useDuration(hb?.intervalSec ?? 300);
  const [schedule, setSchedule] = useState(hb?.schedule ?? '0 3 * * *');
  const [timezone, setTimezone] = useState(hb?.schedule ? hb.timezone : (hb?.timezone ?? browserTimeZone()));
  const grace = useDuration(hb?.graceSec ?? 60);
  const [alertMessage, setAlertMessage] = useState(hb?.alertMessage ?? '');
  const [priority, setPriority] = useState(String(hb?.priority ?? 8));
  const [manualResume, setManualResume] = useState(hb?.manualResume ?? false);
  const act = useAction();
  const zones = useMemo(timeZones, []);
  const listId = useId();
  const titleId = useId();

  const intervalSec = interval.sec;
  const graceSec = grace.sec;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void act.run(async () => {
      const body: HeartbeatInput = {
        appid: Number(appid),
        name: name.trim(),
        intervalSec: mode === 'interval' ? intervalSec : null,
        schedule: mode === 'cron' ? schedule.trim() : null,
        timezone: mode === 'cron' ? timezone.trim() : (hb?.timezone ?? 'UTC'),
        graceSec,
        alertMessage,
        priority: Number(priority),
        manualResume,
      };
      onSaved(
        hb ? await put<Heartbeat>(`/heartbeat/${hb.id}`, body) : await post<Heartbeat>('/heartbeat', body),
      );
    });
  };

  return (
    <form className="card stack" onSubmit={submit} aria-labelledby={titleId}>
      {asPage ? (
        <h1 id={titleId}>{hb ? `Edit “${hb.name}”` : 'New heartbeat'}</h1>
      ) : (
        <h2 id={titleId}>{hb ? `Edit “${hb.name}”` : 'New heartbeat'}</h2>
      )}
      <p className="hint">
        A heartbeat expects a ping from a job (a backup, a cron script, a device) on a schedule, and tells you
        when one does not come.
      </p>
      <NameAndChannelFields {...who} />
      <fieldset className="stack">
        <legend>Schedule</legend>
        <div className="segmented">
          <label className={mode === 'interval' ? 'on' : ''}>
            <input
              type="radio"
              name={`${titleId}-mode`}
              checked={mode === 'interval'}
              onChange={() => setMode('interval')}
            />
            Every fixed interval
          </label>
          <label className={mode === 'cron' ? 'on' : ''}>
            <input
              type="radio"
              name={`${titleId}-mode`}
              checked={mode === 'cron'}
              onChange={() => setMode('cron')}
            />
            Cron schedule
          </label>
        </div>
        <div className="grid2">
          {mode === 'interval' ? (
            <DurationInput
              label="Ping every"
              value={interval.value}
              unit={interval.unit}
              min={1}
              onChange={interval.onChange}
            />
          ) : (
            <>
              <Field label="Cron expression" hint="minute hour day month weekday, or @daily, @hourly …">
                {(id) => (
                  <input
                    id={id}
                    className="mono"
                    value={schedule}
                    onChange={(e) => setSchedule(e.target.value)}
                    spellCheck={false}
                    autoComplete="off"
                    required
                  />
                )}
              </Field>
              <Field label="Time zone" hint="The zone the cron expression is read in">
                {(id) => (
                  <input
                    id={id}
                    list={listId}
                    value={timezone}
                    onChange={(e) => setTimezone(e.target.value)}
                    autoComplete="off"
                    required
                  />
                )}
              </Field>
              <datalist id={listId}>
                {zones.map((z) => (
                  <option key={z} value={z} />
                ))}
              </datalist>
            </>
          )}
          <DurationInput
            label="Grace period"
            hint="How late a ping may be before it counts as down"
            value={grace.value}
            unit={grace.unit}
            min={0}
            onChange={grace.onChange}
          />
        </div>
        <SchedulePreview
          Heading={asPage ? 'h2' : 'h3'}
          mode={mode}
          intervalSec={intervalSec}
          schedule={schedule}
          timezone={timezone}
          graceSec={Number.isFinite(graceSec) ? graceSec : 0}
        />
      </fieldset>
      <fieldset className="stack">
        <legend>Alerts</legend>
        <Field label="Alert message" hint="The text of the down message; empty: say when the last ping came">
          {(id) => (
            <textarea
              id={id}
              rows={2}
              maxLength={1000}
              value={alertMessage}
              onChange={(e) => setAlertMessage(e.target.value)}
            />
          )}
        </Field>
        <div className="grid2">
          <Field label="Priority" hint="Of down and failure messages (0-10); recoveries are sent at 2">
            {(id) => (
              <input
                id={id}
                type="number"
                min={0}
                max={10}
                value={priority}
                onChange={(e) => setPriority(e.target.value)}
                required
              />
            )}
          </Field>
          <label className="check">
            <input
              type="checkbox"
              checked={manualResume}
              onChange={(e) => setManualResume(e.target.checked)}
            />{' '}
            Resume by hand only (pings while paused are ignored)
          </label>
        </div>
      </fieldset>
      <ErrorText error={act.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={act.busy || appid === ''}>
          {hb ? 'Save heartbeat' : 'Create heartbeat'}
        </button>
        {onCancel ? (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
