import { type FormEvent, useEffect, useState } from 'react';
import { get, put } from '../../api/client';
import type { QuietHours } from '../../api/types';
import { ErrorText, Field, useAction } from '../../components/ui';

const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

export function QuietHoursForm() {
  const [qh, setQh] = useState<QuietHours | null>(null);
  const [saved, setSaved] = useState(false);
  const load = useAction();
  const act = useAction();
  useEffect(() => {
    void load.run(async () => setQh(await get<QuietHours>('/current/user/quiet-hours')));
  }, [load.run]);
  const zones =
    (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ??
    [];
  const set = (patch: Partial<QuietHours>) => setQh((q) => (q ? { ...q, ...patch } : q));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!qh) return;
    setSaved(false);
    void act.run(async () => {
      setQh(await put<QuietHours>('/current/user/quiet-hours', qh));
      setSaved(true);
    });
  };
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="qh-title">
      <h2 id="qh-title">Quiet hours</h2>
      <p className="hint">
        During quiet hours, messages below the let-through priority still arrive in the inbox, but without a
        desktop notification, and their re-deliveries (email, SMS, Slack, … set up under Channels) wait until
        the quiet time ends; then whatever is still unread is sent. Turning quiet hours off sends what is
        waiting at once.
      </p>
      <ErrorText error={load.error} />
      {qh ? (
        <>
          <label className="check">
            <input
              type="checkbox"
              checked={qh.enabled}
              onChange={(e) => set({ enabled: e.target.checked })}
            />{' '}
            Keep notifications quiet at night
          </label>
          <div className="grid2">
            <Field label="From">
              {(id) => (
                <input
                  id={id}
                  type="time"
                  value={qh.start}
                  onChange={(e) => set({ start: e.target.value })}
                />
              )}
            </Field>
            <Field label="Until" hint="Earlier than From: runs past midnight">
              {(id) => (
                <input id={id} type="time" value={qh.end} onChange={(e) => set({ end: e.target.value })} />
              )}
            </Field>
            <Field label="Time zone">
              {(id) => (
                <input
                  id={id}
                  list="tz-list"
                  value={qh.timezone}
                  onChange={(e) => set({ timezone: e.target.value })}
                />
              )}
            </Field>
            <Field label="Let through from priority" hint="Messages at or above this still notify normally">
              {(id) => (
                <input
                  id={id}
                  type="number"
                  min={0}
                  max={10}
                  value={qh.breakthroughPriority}
                  onChange={(e) => set({ breakthroughPriority: Number(e.target.value) })}
                />
              )}
            </Field>
          </div>
          <datalist id="tz-list">
            {zones.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
          <fieldset className="chips">
            <legend>Nights (by the day the quiet time starts)</legend>
            {DAYS.map((d, i) => (
              <label key={d} className="check">
                <input
                  type="checkbox"
                  checked={qh.days.includes(i + 1)}
                  onChange={(e) =>
                    set({
                      days: e.target.checked
                        ? [...qh.days, i + 1].sort()
                        : qh.days.filter((x) => x !== i + 1),
                    })
                  }
                />{' '}
                {d}
              </label>
            ))}
          </fieldset>
          <label className="check">
            <input type="checkbox" checked={qh.digest} onChange={(e) => set({ digest: e.target.checked })} />{' '}
            Send a summary of held messages when quiet hours end
          </label>
          <small className="hint">
            With the summary, the held re-deliveries are replaced by one digest per channel and method, and
            one summary message in your Belfry channel lists everything held.
          </small>
          <ErrorText error={act.error} />
          <div className="actions">
            <button type="submit" className="primary" disabled={act.busy}>
              Save quiet hours
            </button>
            {saved ? <span role="status">Saved.</span> : null}
          </div>
        </>
      ) : null}
    </form>
  );
}
