import { useEffect, useState } from 'react';
import { api } from '../api/client';

/**
 * The standing warning of LAN mode: the server says in GET /serverinfo (`plainHttpLan`) that it is
 * reachable from the network over plain HTTP. Asked once per page load; shown on every screen,
 * sign-in and pairing included, since that is where passwords are typed.
 */
let asked: Promise<boolean> | null = null;

function plainHttpLan(): Promise<boolean> {
  asked ??= api<{ plainHttpLan?: unknown }>('GET', '/serverinfo', { anonymous: true }).then(
    (info) => info?.plainHttpLan === true,
    () => {
      asked = null; // ask again on the next screen
      return false;
    },
  );
  return asked;
}

export function PlainHttpLanBanner() {
  const [on, setOn] = useState(false);
  useEffect(() => {
    let live = true;
    void plainHttpLan().then((v) => {
      if (live) setOn(v);
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
