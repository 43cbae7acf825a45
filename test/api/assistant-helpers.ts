import type { TestServer } from '../helpers/test-server';

export const HOUR = 3_600_000;

/**
 * A heartbeat created through the API, then set `down` since `downForMs` ago in the store (what the
 * assistant reads; the heartbeat state machine has its own tests).
 */
export async function downHeartbeat(
  t: TestServer,
  token: string,
  appid: number,
  name: string,
  downForMs: number,
): Promise<{ id: number; token: string }> {
  const res = await t.request('POST', '/heartbeat', { token, json: { appid, name, intervalSec: 3600 } });
  if (res.status !== 200) throw new Error(`heartbeat: ${res.status} ${res.text}`);
  const db = t.server.ctx.db;
  db.transaction(() =>
    db.run("UPDATE heartbeats SET status = 'down', status_since = ? WHERE id = ?", [
      t.clock.now() - downForMs,
      res.body.id,
    ]),
  );
  return { id: res.body.id as number, token: res.body.token as string };
}
