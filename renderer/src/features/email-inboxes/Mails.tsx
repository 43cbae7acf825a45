import { Link } from '../../app/router';
import { formatDate } from '../../components/ui';
import type { InboxRule, MailAction, MailEvent } from './types';

const ACTION_TEXT: Record<MailAction, string> = {
  message: 'message',
  drop: 'dropped',
  paused: 'paused: not sent',
};

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** What became of a mail: the message it made (a link into the inbox), dropped, or held by a pause. */
export function MailOutcome({ e }: { e: MailEvent }) {
  if (e.action === 'message' && e.messageId)
    return <Link to={`/inbox?channel=${e.appid}#message-${e.messageId}`}>message #{e.messageId}</Link>;
  return <span className={`tag mail-action ${e.action}`}>{ACTION_TEXT[e.action]}</span>;
}

/** The rule that took the mail, else "default" (every mail no rule takes becomes a message). */
export function MailRule({ e, rules }: { e: MailEvent; rules: InboxRule[] }) {
  if (!e.matchedRuleId) return <span className="hint">no rule (default)</span>;
  const r = rules.find((x) => x.id === e.matchedRuleId);
  return (
    <Link to={`/inboxes?id=${e.inboxId}&rule=${e.matchedRuleId}`}>
      rule “{r?.name ?? `#${e.matchedRuleId}`}”
    </Link>
  );
}

/** The mail an inbox took, newest first. */
export function MailList({
  inboxId,
  events,
  rules,
}: {
  inboxId: number;
  events: MailEvent[] | null;
  rules: InboxRule[];
}) {
  return (
    <>
      {events && events.length === 0 ? (
        <p className="empty">No mail yet. Send one to the address above.</p>
      ) : null}
      <ul className="rows mail-list" aria-label="Received mail">
        {(events ?? []).map((e) => (
          <li key={e.id} className="card mail-row" aria-label={e.subject || '(no subject)'}>
            <div className="row wrap">
              <Link to={`/inboxes?id=${inboxId}&mail=${e.id}`} className="mail-subject">
                {e.subject || '(no subject)'}
              </Link>
              <span className="hint grow">{formatDate(e.receivedAt)}</span>
            </div>
            <div className="row wrap mail-facts">
              <span className="mono mail-from">{e.from}</span>
              <span aria-hidden="true">·</span>
              <MailRule e={e} rules={rules} />
              <span aria-hidden="true">·</span>
              <MailOutcome e={e} />
            </div>
          </li>
        ))}
      </ul>
    </>
  );
}

/** One mail: who, when, what became of it, its text and the attachments it carried (not kept). */
export function MailView({
  mail: e,
  inboxName,
  rules,
  onMakeRule,
}: {
  mail: MailEvent;
  inboxName: string;
  rules: InboxRule[];
  onMakeRule: () => void;
}) {
  return (
    <section className="stack" aria-labelledby="mail-title">
      <Link to={`/inboxes?id=${e.inboxId}`}>← {inboxName}</Link>
      <h1 id="mail-title" className="mail-subject-title">
        {e.subject || '(no subject)'}
      </h1>
      <dl className="inbox-facts">
        <div>
          <dt>From</dt>
          <dd className="mono">{e.from}</dd>
        </div>
        <div>
          <dt>To</dt>
          <dd className="mono">{e.to}</dd>
        </div>
        <div>
          <dt>Received</dt>
          <dd>{formatDate(e.receivedAt)}</dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd>{formatSize(e.size)}</dd>
        </div>
        <div>
          <dt>Rule</dt>
          <dd>
            <MailRule e={e} rules={rules} />
          </dd>
        </div>
        <div>
          <dt>Result</dt>
          <dd>
            <MailOutcome e={e} />
          </dd>
        </div>
      </dl>
      <div className="actions">
        <button type="button" className="primary" onClick={onMakeRule}>
          Make a rule from this mail
        </button>
      </div>
      <section className="card stack" aria-labelledby="mail-text-title">
        <h2 id="mail-text-title">Text</h2>
        {e.text ? <pre className="mail-text">{e.text}</pre> : <p className="hint">No text.</p>}
      </section>
      <section className="card stack" aria-labelledby="mail-attachments-title">
        <h2 id="mail-attachments-title">Attachments</h2>
        {e.attachments.length === 0 ? (
          <p className="hint">None.</p>
        ) : (
          <>
            <ul className="rows" aria-label="Attachments">
              {e.attachments.map((a, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: two attachments may share a name
                <li key={i} className="row wrap">
                  <span className="mono mail-from">{a.filename || '(unnamed)'}</span>
                  <span className="hint">
                    {a.contentType} · {formatSize(a.size)}
                  </span>
                </li>
              ))}
            </ul>
            <p className="hint">Attachments are listed, not kept.</p>
          </>
        )}
      </section>
    </section>
  );
}
