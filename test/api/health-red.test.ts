import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { JournalFile, OpenJournalFile } from '../../server/db/journal';
import { openAppendFile } from '../../server/db/journal';
import { SNAPSHOT_CHECK_INTERVAL_MS } from '../../server/jobs/index';
import { deviceToken, makeChannel } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';

let t: TestServer | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await t?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

it('GET /health answers 503 red when the store cannot be used', async () => {
  t = await startTestServer();
  // Simulate a database that fails: the check query throws.
  t.server.store.check = () => {
    throw new Error('disk gone');
  };
  const res = await t.request('GET', '/health');
  expect(res.status).toBe(503);
  expect(res.body).toEqual({ health: 'red', database: 'red' });
});

/** The real journal file, whose fdatasync fails with ENOSPC while `full` is set (the bytes reach the file). */
function fullDisk() {
  const disk = { full: false };
  const openJournalFile: OpenJournalFile = async (path, mode) => {
    const real = await openAppendFile(path, mode);
    const file: JournalFile = {
      write: (d) => real.write(d),
      datasync: () =>
        disk.full
          ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }))
          : real.datasync(),
      truncate: (length) => real.truncate(length),
      close: () => real.close(),
    };
    return file;
  };
  return { disk, openJournalFile };
}

it('a full disk turns /health red, refuses writes without keeping them, and recovers when space returns', async () => {
  const { disk, openJournalFile } = fullDisk();
  dataDir = mkdtempSync(join(tmpdir(), 'belfry-health-'));
  t = await startTestServer({ storeIo: { openJournalFile }, dataDir });
  const dev = (await deviceToken(t)).token;
  const channel = await makeChannel(t, dev, { name: 'disk' });
  const send = (message: string) =>
    t!.request('POST', '/message', { token: channel.token, json: { message } });
  const listed = async () =>
    (await t!.request<{ messages: { message: string }[] }>('GET', '/message', { token: dev })).body.messages
      .map((m) => m.message)
      .sort();
  expect((await send('before')).status).toBe(200);

  disk.full = true;
  const refused = await send('refused');
  expect(refused.status).toBe(503);
  expect(refused.body).toEqual({
    error: 'Service Unavailable',
    errorCode: 503,
    errorDescription: 'the database could not save this change',
  });
  expect(await t.request('GET', '/health')).toMatchObject({
    status: 503,
    body: { health: 'red', database: 'red' },
  });
  expect((await send('refused while red')).status).toBe(503);

  // The periodic job retries; still no space: still red.
  t.clock.advance(SNAPSHOT_CHECK_INTERVAL_MS);
  await t.server.scheduler.tick();
  expect((await t.request('GET', '/health')).status).toBe(503);

  disk.full = false;
  t.clock.advance(SNAPSHOT_CHECK_INTERVAL_MS);
  await t.server.scheduler.tick();
  expect(await t.request('GET', '/health')).toMatchObject({
    status: 200,
    body: { health: 'green', database: 'green' },
  });
  // What was refused is gone (a retrying client does not duplicate it); writes work again.
  expect(await listed()).toEqual(['before']);
  expect((await send('after')).status).toBe(200);
  expect(await listed()).toEqual(['after', 'before']);

  // And nothing refused comes back from disk either.
  await t.close();
  t = await startTestServer({ dataDir });
  expect(await listed()).toEqual(['after', 'before']);
});

it('the final snapshot does not persist writes refused while the journal failed', async () => {
  const { disk, openJournalFile } = fullDisk();
  dataDir = mkdtempSync(join(tmpdir(), 'belfry-health-'));
  t = await startTestServer({ storeIo: { openJournalFile }, dataDir });
  const dev = (await deviceToken(t)).token;
  const channel = await makeChannel(t, dev, { name: 'disk' });
  expect(
    (await t.request('POST', '/message', { token: channel.token, json: { message: 'kept' } })).status,
  ).toBe(200);
  disk.full = true;
  expect(
    (await t.request('POST', '/message', { token: channel.token, json: { message: 'refused' } })).status,
  ).toBe(503);
  disk.full = false; // space returns, but the server stops before it noticed
  await t.close();
  t = await startTestServer({ dataDir });
  const res = await t.request<{ messages: { message: string }[] }>('GET', '/message', { token: dev });
  expect(res.body.messages.map((m) => m.message)).toEqual(['kept']);
});
