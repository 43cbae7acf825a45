import { useCallback, useEffect, useState } from 'react';
import { get } from '../../api/client';
import type { OutboxMail } from '../../api/types';
import { ErrorText, formatDate, useAction } from '../../components/ui';

/**
 * Mail kept when no SMTP server is configured (BELFRY_SMTP_URL unset): verification and reset links;
 * with SMTP, mail the server refused so far (retried with backoff) or gave up on.
 */
export function Outbox() {
  const [mails, setMails] = useState<OutboxMail[]>([]);
  const [open, setOpen] = useState<number | null>(null);
  const load = useAction();
  const reload = useCallback(
    () => load.run(async () => setMails(await get<OutboxMail[]>('/admin/outbox?limit=100'))),
    [load.run],
  );
  useEffect(() => void reload(), [reload]);
  return (
    <section className="stack" aria-labelledby="outbox-title">
      <div className="pane-head">
        <h1 id="outbox-title">Mail outbox</h1>
        <button type="button" onClick={() => void reload()}>
          Refresh
        </button>
      </div>
      <p className="hint">
        With no SMTP server configured, Belfry keeps outgoing mail here so you can pass links on by hand. With
        SMTP, mail the server has not accepted yet waits here: it is retried with growing pauses, and after
        the last attempt it is marked failed.
      </p>
      <ErrorText error={load.error} />
      {mails.length === 0 && !load.busy ? <p className="empty">No mail.</p> : null}
      <ul className="rows">
        {mails.map((m) => (
          <li key={m.id} className="card">
            <button
              type="button"
              className="row-button"
              aria-expanded={open === m.id}
              onClick={() => setOpen(open === m.id ? null : m.id)}
            >
              <span className="grow">
                <strong>{m.subject}</strong> to {m.to}{' '}
                {m.status === 'kept' ? null : <span className="tag">{statusLabel(m)}</span>}
              </span>
              <time dateTime={m.createdAt}>{formatDate(m.createdAt)}</time>
            </button>
            {open === m.id && m.lastError ? (
              <p className="hint">
                Last error: <code>{m.lastError}</code>
              </p>
            ) : null}
            {open === m.id ? <pre className="mail-text">{m.text}</pre> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** "sending again <date> (2 attempts)" or "failed after 8 attempts". */
function statusLabel(m: OutboxMail): string {
  const tries = `${m.attempts} attempt${m.attempts === 1 ? '' : 's'}`;
  if (m.status === 'failed') return `failed after ${tries}`;
  return m.nextAttemptAt ? `retrying ${formatDate(m.nextAttemptAt)} (${tries})` : `sending (${tries})`;
}
