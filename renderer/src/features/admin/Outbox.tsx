import { useCallback, useEffect, useState } from 'react';
import { get } from '../../api/client';
import type { OutboxMail } from '../../api/types';
import { ErrorText, formatDate, useAction } from '../../components/ui';

/** Mail kept when no SMTP server is configured (BELFRY_SMTP_URL unset): verification and reset links. */
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
        With no SMTP server configured, Belfry keeps outgoing mail here so you can pass links on by hand.
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
                <strong>{m.subject}</strong> to {m.to}
              </span>
              <time dateTime={m.createdAt}>{formatDate(m.createdAt)}</time>
            </button>
            {open === m.id ? <pre className="mail-text">{m.text}</pre> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
