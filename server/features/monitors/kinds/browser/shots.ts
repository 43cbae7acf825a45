import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { AppContext } from '../../../../context';
import type { Principal } from '../../../../http/auth';
import { errors } from '../../../../http/errors';
import { channelInScope } from '../../../channels/access';

/**
 * Screenshots of failed browser checks (§2.3): a JPEG file per key under `<dataDir>/browser-shots/`, a
 * `browser_shots` row (0015) naming its owner and workflow. Kept 30 days and at most 20 per workflow (the
 * screenshots of `test-step`, which belong to no workflow, at most 20 per user); then 404.
 */
export const SHOT_KEEP_MS = 30 * 86_400_000;
export const SHOTS_PER_WORKFLOW = 20;
const KEY_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const SHOT_KEY = /^[A-Za-z0-9]{22}$/;

/** 22 characters of [A-Za-z0-9] (≈131 bits), unbiased. */
export function newShotKey(): string {
  let out = '';
  while (out.length < 22) {
    for (const b of randomBytes(32)) {
      if (b < 248 && out.length < 22) out += KEY_CHARS[b % 62];
    }
  }
  return out;
}

function dir(ctx: AppContext): string {
  return join(ctx.config.dataDir, 'browser-shots');
}

function file(ctx: AppContext, key: string): string {
  return join(dir(ctx), `${key}.jpg`);
}

function removeFiles(ctx: AppContext, keys: string[]): void {
  for (const k of keys) {
    try {
      rmSync(file(ctx, k), { force: true });
    } catch (err) {
      ctx.log.warn('could not remove a browser screenshot', { key: k, err });
    }
  }
}

/** Stores a screenshot of `userId` (of workflow `monitorId`, or of a test run: null); its key. */
export function saveShot(
  ctx: AppContext,
  o: { userId: number; monitorId: number | null; jpeg: Buffer },
): string | null {
  const key = newShotKey();
  try {
    mkdirSync(dir(ctx), { recursive: true, mode: 0o700 });
    const fd = openSync(file(ctx, key), 'w', 0o600); // the data dir is its owner's only
    try {
      writeSync(fd, o.jpeg);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    ctx.log.warn('could not save a browser screenshot', { err });
    return null;
  }
  const now = ctx.clock.now();
  const dropped = ctx.db.transaction(() => {
    // A workflow deleted while its check ran: the screenshot has nothing to belong to.
    if (o.monitorId !== null && !ctx.db.first('SELECT 1 AS x FROM monitors WHERE id = ?', [o.monitorId]))
      return [key];
    ctx.db.run(
      'INSERT INTO browser_shots (key, user_id, monitor_id, bytes, created_at) VALUES (?, ?, ?, ?, ?)',
      [key, o.userId, o.monitorId, o.jpeg.length, now],
    );
    // At most SHOTS_PER_WORKFLOW per workflow (per user for test runs): the oldest go.
    const over =
      o.monitorId === null
        ? ctx.db.all<{ key: string }>(
            'SELECT key FROM browser_shots WHERE user_id = ? AND monitor_id IS NULL ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?',
            [o.userId, SHOTS_PER_WORKFLOW],
          )
        : ctx.db.all<{ key: string }>(
            'SELECT key FROM browser_shots WHERE monitor_id = ? ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?',
            [o.monitorId, SHOTS_PER_WORKFLOW],
          );
    for (const r of over) ctx.db.run('DELETE FROM browser_shots WHERE key = ?', [r.key]);
    return over.map((r) => r.key);
  });
  removeFiles(ctx, dropped);
  return dropped.includes(key) ? null : key;
}

/**
 * `GET /browser-shot/{key}`: the JPEG of the caller's own screenshot (a scoped API token: of a workflow in
 * its scope). Anything else — unknown, someone else's, older than 30 days, dropped by the per-workflow cap,
 * a malformed key — is 404 `screenshot not found`.
 */
export function readShot(ctx: AppContext, p: Principal, key: string): Buffer {
  const notFound = errors.notFound('screenshot');
  if (!SHOT_KEY.test(key)) throw notFound;
  const row = ctx.db.first<{
    user_id: number;
    monitor_id: number | null;
    created_at: number;
    channel_id: number | null;
  }>(
    'SELECT user_id, monitor_id, created_at, (SELECT channel_id FROM monitors WHERE id = monitor_id) AS channel_id FROM browser_shots WHERE key = ?',
    [key],
  );
  if (!row || row.user_id !== p.userId || row.created_at <= ctx.clock.now() - SHOT_KEEP_MS) throw notFound;
  if (row.channel_id !== null && !channelInScope(ctx, p, row.channel_id)) throw notFound;
  try {
    return readFileSync(file(ctx, key));
  } catch {
    throw notFound;
  }
}

/** Retention task 'browser-shots': rows older than 30 days, and files without a row (a deleted workflow's). */
export function pruneShots(ctx: AppContext): number {
  const old = ctx.db.transaction(() => {
    const rows = ctx.db.all<{ key: string }>('SELECT key FROM browser_shots WHERE created_at <= ?', [
      ctx.clock.now() - SHOT_KEEP_MS,
    ]);
    for (const r of rows) ctx.db.run('DELETE FROM browser_shots WHERE key = ?', [r.key]);
    return rows.map((r) => r.key);
  });
  removeFiles(ctx, old);
  let names: string[] = [];
  try {
    names = readdirSync(dir(ctx));
  } catch {
    return old.length;
  }
  const orphans = names
    .map((n) => /^([A-Za-z0-9]{22})\.jpg$/.exec(n)?.[1])
    .filter((k): k is string => k !== undefined)
    .filter((k) => !ctx.db.first('SELECT 1 AS x FROM browser_shots WHERE key = ?', [k]));
  removeFiles(ctx, orphans);
  return old.length + orphans.length;
}
