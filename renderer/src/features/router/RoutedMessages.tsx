import { Link } from '../../app/router';
import { formatDate, PriorityBadge } from '../../components/ui';
import type { RoutedMessage, RouterRule } from './types';

/** Messages the router made, newest first, each with the rule and event behind it. */
export function RoutedMessages({
  messages,
  rules,
}: {
  messages: RoutedMessage[] | null;
  rules: RouterRule[];
}) {
  if (messages && messages.length === 0)
    return (
      <p className="empty">
        No messages yet: an event makes one when a rule takes it or a default channel is set.
      </p>
    );
  return (
    <ul className="rows router-messages" aria-label="Routed messages">
      {(messages ?? []).map((m) => (
        <li key={m.id} className="card" aria-label={m.title}>
          <div className="row wrap">
            <PriorityBadge priority={m.priority} />
            <Link to={`/inbox?channel=${m.appid}#message-${m.id}`} className="grow">
              {m.title || '(no title)'}
            </Link>
            <span className="hint">{formatDate(m.date)}</span>
          </div>
          <div className="row wrap hint">
            <span>
              {m.ruleId
                ? `rule “${rules.find((r) => r.id === m.ruleId)?.name ?? `#${m.ruleId}`}”`
                : 'default channel (no rule)'}
            </span>
            <span aria-hidden="true">·</span>
            <Link to={`/routing?event=${m.routerEventId}`}>event #{m.routerEventId}</Link>
          </div>
        </li>
      ))}
    </ul>
  );
}
