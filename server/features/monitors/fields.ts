import { z } from 'zod';
import type { AppContext } from '../../context';
import { errors } from '../../http/errors';
import { parseBody } from '../../http/validate';
import { PRIORITY_MAX, PRIORITY_MIN } from '../../lib/limits';
import { seal, unseal } from '../../lib/seal';
import type { AnyMonitorKind } from './kind';
import type { MonitorCommon, MonitorRow } from './store';

/** The common fields of every kind (§2.2); the kind's own fields are its parse()'s concern. */
const common = {
  appid: z.number().int().positive(),
  name: z.string().trim().min(1, 'required').max(200),
  paused: z.boolean(),
  intervalSec: z.number().int().min(1).max(86_400),
  timeoutSec: z.number().int().min(1),
  retries: z.number().int().min(0).max(10),
  resendEverySec: z.number().int().min(0).max(604_800),
  priority: z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX),
};
const createBody = z.object({ ...z.object(common).partial().shape, appid: common.appid, name: common.name });
const updateBody = z.object(common).partial();
/** `/test`: the create body without `appid` and `name` (§2.6). */
const testBody = z.object(common).partial();

export type CommonInput = z.output<typeof updateBody>;

/** The body as an object (kinds read their own fields from it), or 400. */
function bodyObject(req: { body?: unknown }): Record<string, unknown> {
  const b = req.body ?? {};
  if (typeof b !== 'object' || b === null || Array.isArray(b))
    throw errors.badRequest('body: must be an object');
  return b as Record<string, unknown>;
}

export function parseCreate(req: { body?: unknown }) {
  return { input: parseBody(req, createBody), body: bodyObject(req) };
}

export function parseUpdate(req: { body?: unknown }) {
  return { input: parseBody(req, updateBody) as CommonInput, body: bodyObject(req) };
}

export function parseTest(req: { body?: unknown }) {
  return { input: parseBody(req, testBody) as CommonInput, body: bodyObject(req) };
}

/** The common fields after a create or a partial update, with the bounds that depend on settings. */
export function mergeCommon(
  ctx: AppContext,
  kind: AnyMonitorKind,
  base: Omit<MonitorCommon, 'channelId' | 'name'> & Partial<MonitorCommon>,
  input: CommonInput,
): Omit<MonitorCommon, 'channelId' | 'name'> & Partial<MonitorCommon> {
  const next = { ...base };
  if (input.name !== undefined) next.name = input.name;
  if (input.intervalSec !== undefined) next.intervalSec = input.intervalSec;
  if (input.timeoutSec !== undefined) next.timeoutSec = input.timeoutSec;
  if (input.retries !== undefined) next.retries = input.retries;
  if (input.resendEverySec !== undefined) next.resendEverySec = input.resendEverySec;
  if (input.priority !== undefined) next.priority = input.priority;
  const min = ctx.config.minIntervalSec;
  if (next.intervalSec < min) throw errors.badRequest(`intervalSec: must be at least ${min}`);
  const max = kind.defaults.timeoutMaxSec;
  if (next.timeoutSec > max) throw errors.badRequest(`timeoutSec: must be at most ${max}`);
  if (next.resendEverySec !== 0 && next.resendEverySec < min)
    throw errors.badRequest(`resendEverySec: must be 0 or at least ${min}`);
  return next;
}

/** Defaults of the common fields for a kind (§2.2). */
export function commonDefaults(kind: AnyMonitorKind) {
  return {
    intervalSec: kind.defaults.intervalSec,
    timeoutSec: kind.defaults.timeoutSec,
    retries: 0,
    resendEverySec: 0,
    priority: 8,
  };
}

export function commonOf(row: MonitorRow): MonitorCommon {
  return {
    channelId: row.channel_id,
    name: row.name,
    intervalSec: row.interval_sec,
    timeoutSec: row.timeout_sec,
    retries: row.retries,
    resendEverySec: row.resend_every_sec,
    priority: row.priority,
  };
}

/** Kind settings hold passwords, tokens and cookies: sealed at rest with their own key. */
const PURPOSE = 'monitor-settings';

export function sealSettings(ctx: AppContext, settings: object): string {
  return seal(ctx.secret, PURPOSE, JSON.stringify(settings));
}

export function openSettings<S extends object>(ctx: AppContext, row: Pick<MonitorRow, 'settings'>): S {
  return JSON.parse(unseal(ctx.secret, PURPOSE, row.settings)) as S;
}

export function stateOfRow<K extends object>(row: Pick<MonitorRow, 'state'>): K | null {
  return row.state === null ? null : (JSON.parse(row.state) as K);
}
