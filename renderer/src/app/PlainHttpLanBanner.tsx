import { useEffect, useState } from 'react';
import { serverInfo } from '../api/serverinfo';

/**
 * The standing warning of LAN mode: the server says in GET /serverinfo (`plainHttpLan`) that it is
 * reachable from the network over plain HTTP. Asked once per page load; shown on every screen,
 * sign-in and pairing included, since that is where passwords are typed.
 */
export function PlainHttpLanBanner() {
  const [on, setOn] = useState(false);
  useEffect(() => {
    let live = true;
    void serverInfo().then((info) => {
      if (live) setOn(info?.plainHttpLan === true);
    });
    return () => {
      live = false;
    };
  }, []);
  if (!on) return null;
  return (
    <aside className="lan-warning" aria-label="Security warning">
      <p>
        <strong>Not encrypted:</strong> this Belfry is reachable from your network over plain HTTP (LAN mode).
        Anyone on the same network can read passwords, tokens and messages sent to it. Use it only on a
        network you trust.
      </p>
    </aside>
  );
}
