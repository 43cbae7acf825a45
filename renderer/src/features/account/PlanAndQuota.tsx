import { lazy, Suspense, useCallback, useEffect, useState } from 'react';
import { get, post } from '../../api/client';
import type { QuotaBreakdown } from '../../api/types';
import { useSession } from '../../app/session';
import { ErrorText, Field, useAction } from '../../components/ui';

// Loaded on first use: the chart library is about half of the renderer's JavaScript.
const HourlyChart = lazy(() => import('./HourlyChart'));

export function PlanAndQuota() {
  const { user, refreshUser } = useSession();
  const [quota, setQuota] = useState<QuotaBreakdown | null>(null);
  const [plan, setPlan] = useState(user?.plan ?? 'free');
  const load = useAction();
  const act = useAction();
  const reload = useCallback(
    () => load.run(async () => setQuota(await get<QuotaBreakdown>('/user/quota-breakdown'))),
    [load.run],
  );
  useEffect(() => void reload(), [reload]);
  const data = (quota?.hours ?? []).map((h) => ({
    hour: `${new Date(h.at).getUTCHours()}`.padStart(2, '0'),
    events: h.count,
  }));
  const pct = quota?.limit ? Math.min(100, Math.round((quota.used / quota.limit) * 100)) : 0;
  return (
    <section className="card stack" aria-labelledby="plan-title">
      <h2 id="plan-title">Plan and today’s usage</h2>
      <ErrorText error={load.error} />
      {quota ? (
        <>
          <p>
            {quota.used.toLocaleString()} of {quota.limit.toLocaleString()} events used today (UTC day{' '}
            {quota.day}), {quota.remaining.toLocaleString()} left.
          </p>
          <progress max={100} value={pct} aria-label="Share of today's events used" />
          <figure className="chart" aria-label="Events per hour today (UTC)">
            <Suspense fallback={<div className="chart-placeholder" aria-hidden="true" />}>
              <HourlyChart data={data} />
            </Suspense>
            <figcaption className="hint">
              Events per hour today (UTC). Stored: {quota.storage.messages} messages.
            </figcaption>
          </figure>
        </>
      ) : null}
      <form
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          void act.run(async () => {
            await post('/current/user/plan', { plan });
            await refreshUser();
            await reload();
          });
        }}
      >
        <Field
          label="Plan"
          hint="You can move to a smaller plan here; a bigger plan is paid by invoice and set by the operator."
        >
          {(id) => (
            <select id={id} value={plan} onChange={(e) => setPlan(e.target.value as typeof plan)}>
              <option value="free">free</option>
              <option value="pro">pro</option>
              <option value="business">business</option>
            </select>
          )}
        </Field>
        <button type="submit" disabled={act.busy || plan === user?.plan}>
          Change plan
        </button>
      </form>
      <ErrorText error={act.error} />
    </section>
  );
}
