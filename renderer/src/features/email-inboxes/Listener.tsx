import { useEffect, useState } from 'react';
import { getListener } from './api';
import type { ListenerState } from './types';

/** Whether this server's SMTP listener runs (null until known; a failed read stays unknown). */
export function useListener(): ListenerState | null {
  const [state, setState] = useState<ListenerState | null>(null);
  useEffect(() => {
    let live = true;
    getListener().then(
      (s) => live && setState(s),
      () => {},
    );
    return () => {
      live = false;
    };
  }, []);
  return state;
}

/**
 * The listener's state at the top of the Inboxes pages: where mail is taken when it is on; when it is
 * off, that the addresses cannot receive yet and how to turn it on.
 */
export function ListenerNotice({ state }: { state: ListenerState | null }) {
  if (!state) return null;
  if (state.enabled)
    return (
      <p className="hint listener-on" role="status">
        The SMTP listener takes mail for <span className="mono">@{state.domain}</span> on{' '}
        <span className="mono">{state.address}</span>. Point the domain’s MX record (or the sender’s relay) at
        it.
      </p>
    );
  return (
    <div className="warning stack listener-off" role="status" aria-label="SMTP listener off">
      <p>
        <strong>The SMTP listener is off: these addresses cannot receive mail.</strong>
      </p>
      <p>
        Start Belfry with <code>--smtp-listen 127.0.0.1:2525</code> (or{' '}
        <code>BELFRY_SMTP_LISTEN=127.0.0.1:2525</code>
        ), any <code>host:port</code>. The listener has no login, so a host other than loopback (
        <code>0.0.0.0:25</code>, to take mail from other machines) also needs LAN mode, <code>--lan</code>.{' '}
        <code>--mail-domain</code> sets the domain of the addresses (now{' '}
        <span className="mono">{state.domain}</span>
        ); point its MX record at this machine. Mail up to 10 MiB is taken.
      </p>
    </div>
  );
}
