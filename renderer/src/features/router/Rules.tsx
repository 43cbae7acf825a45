import { useState } from 'react';
import { del, put } from '../../api/client';
import type { Channel } from '../../api/types';
import { Link } from '../../app/router';
import { ErrorText, useAction } from '../../components/ui';
import type { RouterRule } from './types';

export function byPosition(rules: RouterRule[]): RouterRule[] {
  return [...rules].sort((a, b) => a.position - b.position || a.id - b.id);
}

/**
 * The rules in the order they are tried: the first enabled rule whose path, method and conditions hold
 * takes the event. Up/down moves a rule to its neighbour's position.
 */
export function RuleList({
  rules,
  channels,
  onChanged,
}: {
  rules: RouterRule[];
  channels: Channel[];
  onChanged: () => void;
}) {
  const act = useAction();
  // The switch shows the new state at once; the list's reload confirms it (a failure puts it back).
  const [switched, setSwitched] = useState<Record<number, boolean>>({});
  const sorted = byPosition(rules);
  const name = (appid: number | null) =>
    appid === null ? 'no channel' : (channels.find((c) => c.id === appid)?.name ?? `channel ${appid}`);
  const move = (r: RouterRule, to: RouterRule) =>
    act.run(async () => {
      await put(`/webhook-router/rule/${r.id}`, { position: to.position });
      onChanged();
    });
  const toggle = (r: RouterRule, enabled: boolean) =>
    act.run(async () => {
      setSwitched((s) => ({ ...s, [r.id]: enabled }));
      try {
        await put(`/webhook-router/rule/${r.id}`, { enabled });
      } catch (err) {
        setSwitched(({ [r.id]: _, ...rest }) => rest);
        throw err;
      }
      onChanged();
    });
  const remove = (r: RouterRule) =>
    act.run(async () => {
      if (!confirm(`Delete the rule “${r.name}”? Events it took stay in the list.`)) return;
      await del(`/webhook-router/rule/${r.id}`);
      onChanged();
    });

  return (
    <>
      <ErrorText error={act.error} />
      {sorted.length === 0 ? (
        <p className="empty">
          No rules yet. Without one an event goes to the default channel (if set) with its method and path as
          the title. Open an event below and “Make a rule from this”, or start a new rule.
        </p>
      ) : null}
      <ol className="rows router-rules" aria-label="Rules, in the order they are tried">
        {sorted.map((r, i) => (
          <li
            key={r.id}
            className={r.enabled ? 'card router-rule' : 'card router-rule off'}
            aria-label={r.name}
          >
            <div className="row wrap">
              <span className="hint">{i + 1}.</span>
              <Link to={`/routing?rule=${r.id}`} className="router-rule-name">
                {r.name}
              </Link>
              <span className="tag router-method">{r.method ?? 'any'}</span>
              <span className="mono router-path">{r.pathPattern}</span>
              {r.match.length ? (
                <span className="hint">
                  {r.match.length} condition{r.match.length === 1 ? '' : 's'}
                </span>
              ) : null}
              <span className="tag">{name(r.appid)}</span>
              {r.enabled ? null : <span className="tag">disabled: skipped</span>}
            </div>
            <div className="actions">
              <label className="check">
                <input
                  type="checkbox"
                  checked={switched[r.id] ?? r.enabled}
                  disabled={act.busy}
                  onChange={(e) => void toggle(r, e.target.checked)}
                />{' '}
                Enabled
              </label>
              <button
                type="button"
                aria-label={`Move “${r.name}” up`}
                disabled={act.busy || i === 0}
                onClick={() => void move(r, sorted[i - 1] as RouterRule)}
              >
                ↑ Up
              </button>
              <button
                type="button"
                aria-label={`Move “${r.name}” down`}
                disabled={act.busy || i === sorted.length - 1}
                onClick={() => void move(r, sorted[i + 1] as RouterRule)}
              >
                ↓ Down
              </button>
              <button
                type="button"
                className="danger"
                aria-label={`Delete “${r.name}”`}
                onClick={() => void remove(r)}
              >
                Delete
              </button>
            </div>
          </li>
        ))}
      </ol>
    </>
  );
}
