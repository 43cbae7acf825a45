import { useServerInfo } from '../api/serverinfo';

/**
 * The standing warning of LAN mode: the server says in GET /serverinfo (`plainHttpLan`) that it is
 * reachable from the network over plain HTTP. Asked once per page load; shown on every screen,
 * sign-in and pairing included, since that is where passwords are typed.
 */
export function PlainHttpLanBanner() {
  if (useServerInfo()?.plainHttpLan !== true) return null;
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
