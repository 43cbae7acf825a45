import { useState } from 'react';
import { post } from '../../api/client';
import type { Channel } from '../../api/types';
import { Link, useLocation } from '../../app/router';
import { CopyField, ErrorText, useAction } from '../../components/ui';

/** The invitation link from a share email: joins the share with the signed-in account. */
export function JoinShare() {
  const { search } = useLocation();
  const token = search.get('token') ?? '';
  const [joined, setJoined] = useState<Channel | null>(null);
  const { busy, error, run } = useAction();
  return (
    <section className="card stack narrow" aria-labelledby="join-title">
      <h1 id="join-title">Join a shared channel</h1>
      {joined ? (
        <>
          <p role="status">
            You joined “{joined.name}”. <Link to={`/inbox?channel=${joined.id}`}>Open its messages</Link>.
          </p>
          {joined.token ? (
            <CopyField label="Your sending token (shown once)" value={joined.token} secret />
          ) : null}
        </>
      ) : token ? (
        <button
          type="button"
          className="primary"
          disabled={busy}
          onClick={() => void run(async () => setJoined(await post<Channel>('/share/join', { token })))}
        >
          Join with this account
        </button>
      ) : (
        <p className="error">This invitation link has no token.</p>
      )}
      <ErrorText error={error} />
    </section>
  );
}
