import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { JournalFile, OpenJournalFile } from '../../server/db/journal';
import { openAppendFile } from '../../server/db/journal';
import { startTestServer, type TestServer } from '../helpers/test-server';
import { hub, openWs, until } from './realtime-helpers';
import { addRule, deliver, fixture, routerUser } from './router-helpers';

// A message is pushed to sockets only once the journal fsync covering it is done (the HTTP answer waits
// for the same fsync). Messages that source families write inside their own transactions (here the
// router's batch: event, rule match and message in one transaction) must not be announced before that
// transaction commits: a push before COMMIT shows a message that a rollback or a crash takes back.

let t: TestServer | undefined;
let dataDir: string | undefined;
let disk: ReturnType<typeof gatedDisk> | undefined;
afterEach(async () => {
  disk?.release(); // a failed assertion must not leave the close waiting on a held fsync
  await t?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

/** The real journal file whose fdatasync waits while the gate is held. */
function gatedDisk() {
  let release: () => void = () => {};
  const gate = { held: false, open: Promise.resolve() };
  const hold = () => {
    gate.held = true;
    gate.open = new Promise<void>((r) => {
      release = r;
    });
  };
  const openJournalFile: OpenJournalFile = async (path, mode) => {
    const real = await openAppendFile(path, mode);
    const file: JournalFile = {
      write: (d) => real.write(d),
      datasync: async () => {
        if (gate.held) await gate.open;
        return real.datasync();
      },
      truncate: (length) => real.truncate(length),
      close: () => real.close(),
    };
    return file;
  };
  return {
    openJournalFile,
    hold,
    release: () => {
      gate.held = false;
      release();
    },
  };
}

it('a routed message reaches the sockets only after the fsync of its batch', async () => {
  disk = gatedDisk();
  dataDir = mkdtempSync(join(tmpdir(), 'belfry-durable-push-'));
  t = await startTestServer({ storeIo: { openJournalFile: disk.openJournalFile }, dataDir });
  const u = await routerUser(t);
  await addRule(t, u.device.token, {
    name: 'pushes',
    appid: u.channel.id,
    pathPattern: '/github',
    title: 'push to {{$.repository.full_name}}',
  });
  const ws = await openWs(t, '/ws', u.device.token);
  await t.server.store.sync();
  const delivered = hub(t).counters.delivered;
  const events = () =>
    Number(t!.server.ctx.db.first<{ n: number }>('SELECT count(*) AS n FROM router_events')?.n ?? 0);

  disk!.hold();
  const answer = deliver(t, u.token, '/github', fixture('github-push'));
  // The batch has committed (its event row is there) while its fsync is held: nothing may be pushed yet.
  await until(() => events() === 1);
  expect(hub(t).counters.delivered).toBe(delivered);
  expect(ws.frames).toEqual([]);

  disk!.release();
  const res = await answer;
  expect(res.status).toBe(200);
  const frame = (await ws.next()) as { id: number; title: string };
  expect(frame.id).toBe((res.body as { messageId: number }).messageId);
  expect(frame.title).toMatch(/^push to /);
  expect(hub(t).counters.delivered).toBe(delivered + 1);
  ws.ws.close();
});

it('a message:created listener that throws does not fail the writes it announces, alone or batched', async () => {
  t = await startTestServer();
  const { deviceToken, makeChannel } = await import('../helpers/factories');
  const dev = await deviceToken(t);
  const channel = await makeChannel(t, dev.token);
  let calls = 0;
  const off = t.server.ctx.bus.on('message:created', () => {
    calls++;
    throw new Error('listener broke');
  });
  try {
    const post = (i: number) =>
      t!.request('POST', '/message', { token: channel.token, json: { message: `m${i}` } });
    // One alone (its own transaction), then 20 at once (one write batch: a transaction of savepoints).
    const alone = await post(0);
    const batch = await Promise.all(Array.from({ length: 20 }, (_, i) => post(i + 1)));
    expect([alone, ...batch].map((r) => r.status)).toEqual(Array(21).fill(200));
    const stored = t.server.ctx.db.first<{ n: number }>(
      'SELECT count(*) AS n FROM messages WHERE channel_id = ?',
      [channel.id],
    );
    expect(stored?.n).toBe(21);
    expect(calls).toBe(21);
    expect(t.log.lines.filter((l) => l.includes('an event listener failed')).length).toBe(21);
  } finally {
    off();
  }
});
