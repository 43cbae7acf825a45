import { Link, navigate } from '../../app/router';
import { ErrorText, useAction } from '../../components/ui';
import { deleteRule, updateRule } from './api';
import type { InboxRule, RuleMatch } from './types';

export function byPosition(rules: InboxRule[]): InboxRule[] {
  return [...rules].sort((a, b) => a.position - b.position || a.id - b.id);
}

const MATCH_KEYS: (keyof RuleMatch)[] = ['from', 'subject', 'body'];

function MatchSummary({ match }: { match: RuleMatch }) {
  const parts = MATCH_KEYS.filter((k) => match[k]);
  if (parts.length === 0) return <span className="hint">every mail</span>;
  return (
    <span className="rule-match">
      {parts.map((k, i) => (
        <span key={k}>
          {i ? ' and ' : ''}
          {k} <span className="mono">{match[k]}</span>
        </span>
      ))}
    </span>
  );
}

/**
 * An inbox's rules in the order they are tried: the first whose patterns all match takes the mail.
 * Up/down moves a rule to its neighbour's position.
 */
export function RuleList({
  inboxId,
  rules,
  onChanged,
}: {
  inboxId: number;
  rules: InboxRule[];
  onChanged: () => void;
}) {
  const act = useAction();
  const sorted = byPosition(rules);
  const move = (r: InboxRule, to: InboxRule) =>
    act.run(async () => {
      await updateRule(inboxId, r.id, { position: to.position });
      onChanged();
    });
  const remove = (r: InboxRule) =>
    act.run(async () => {
      if (!confirm(`Delete the rule “${r.name}”? Mail it took stays in the list.`)) return;
      await deleteRule(inboxId, r.id);
      onChanged();
    });

  return (
    <>
      <ErrorText error={act.error} />
      {sorted.length === 0 ? (
        <p className="empty">
          No rules yet: every mail becomes a message titled by its subject. Open a mail below and “Make a rule
          from this mail”, or start a new rule.
        </p>
      ) : null}
      <ol className="rows inbox-rules" aria-label="Rules, in the order they are tried">
        {sorted.map((r, i) => (
          <li key={r.id} className="card inbox-rule" aria-label={r.name}>
            <div className="row wrap">
              <span className="hint">{i + 1}.</span>
              <Link to={`/inboxes?id=${inboxId}&rule=${r.id}`} className="inbox-rule-name">
                {r.name}
              </Link>
              <span className={`tag mail-action ${r.action}`}>
                {r.action === 'drop' ? 'drop' : 'message'}
              </span>
            </div>
            <div className="row wrap rule-facts">
              <MatchSummary match={r.match} />
              {r.action === 'message' && r.title ? (
                <span className="hint">
                  title <span className="mono">{r.title}</span>
                </span>
              ) : null}
            </div>
            <div className="actions">
              <button
                type="button"
                aria-label={`Move “${r.name}” up`}
                disabled={act.busy || i === 0}
                onClick={() => void move(r, sorted[i - 1] as InboxRule)}
              >
                ↑ Up
              </button>
              <button
                type="button"
                aria-label={`Move “${r.name}” down`}
                disabled={act.busy || i === sorted.length - 1}
                onClick={() => void move(r, sorted[i + 1] as InboxRule)}
              >
                ↓ Down
              </button>
              <button
                type="button"
                aria-label={`Edit “${r.name}”`}
                onClick={() => navigate(`/inboxes?id=${inboxId}&rule=${r.id}`)}
              >
                Edit
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
