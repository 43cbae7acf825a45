import type { AppContext } from '../../context';
import type { Principal } from '../../http/auth';
import { errors } from '../../http/errors';
import { rfc3339 } from '../../lib/clock';
import { recordStatus } from '../history/service';
import { isCovered } from '../maintenance/coverage';
import { RECOVERY_PRIORITY, type SourceRef, sendSourceMessage, statusChanged } from '../sources/messages';
import { ALERTS_PER_SOURCE } from './points';
import { KIND, ownSource } from './service';
import {
  type AlertRow,
  type AlertSettings,
  type AlertState,
  alertsOfSource,
  breachesOf,
  type Condition,
  clearBreach,
  clearBreaches,
  countAlerts,
  deleteAlert,
  dueAlerts,
  enabledAlertsOfSource,
  findAlert,
  findSeries,
  findSource,
  firingAlertCount,
  insertAlert,
  nextAlertDue,
  type SourceRow,
  setBreach,
  updateAlertSettings,
  writeAlertState,
  writeSourceStatus,
} from './store';

/**
 * Metric alerts (§8.3). A series breaches (`above`: value > threshold, `below`: <) from its first
 * breaching point until a non-breaching one (metric_breaches); the alert fires when some series has
 * breached for forSec, measured on point times while points arrive and on the clock after (the
 * DueSource 'metric-alert' wakes at the earliest `since + forSec`). `absent` fires when no matching
 * point arrived for forSec after the last one (or creation, enabling, resuming). Firing and resolved
 * messages go through sendSourceMessage; a source a maintenance window covers sends neither (§0.4).
 */

const DUE_BATCH = 100;

export interface EvalPoint {
  seriesId: number;
  name: string;
  tags: readonly [string, string][];
  value: number;
  at: number;
}

// ---------------------------------------------------------------- formatting

/** `{host="a",region="eu"}`, or nothing without tags. */
export function formatTags(tags: readonly [string, string][] | Record<string, string>): string {
  const list = Array.isArray(tags) ? tags : Object.entries(tags).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  if (list.length === 0) return '';
  return `{${list.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
}

function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{\{\s*(value|threshold|metric|tags)\s*\}\}/g, (_m, k: string) => vars[k] ?? '');
}

function ref(source: SourceRow): SourceRef {
  return { kind: KIND, id: source.id, name: source.name, channelId: source.channel_id };
}

function fire(
  ctx: AppContext,
  source: SourceRow,
  alert: AlertRow,
  series: { tags: string; value: number | null },
  at: number,
): void {
  const tags = formatTags(JSON.parse(series.tags) as Record<string, string>);
  const value = series.value === null ? '' : String(series.value);
  const threshold = alert.threshold === null ? '' : String(alert.threshold);
  const title =
    alert.condition === 'absent'
      ? `${source.name}: no data for ${alert.metric}`
      : `${source.name}: ${alert.metric} ${alert.condition} ${threshold}`;
  const text =
    alert.message !== ''
      ? fill(alert.message, { value, threshold, metric: alert.metric, tags })
      : alert.condition === 'absent'
        ? `${alert.metric}${tags} sent no data for ${alert.for_sec} s`
        : `${alert.metric}${tags} is ${value} (${alert.condition} ${threshold} for ${alert.for_sec} s)`;
  send(
    ctx,
    source,
    alert,
    'firing',
    { title, message: text, priority: alert.priority, date: at },
    series.value,
  );
}

function resolve(ctx: AppContext, source: SourceRow, alert: AlertRow, p: EvalPoint, at: number): void {
  send(
    ctx,
    source,
    alert,
    'resolved',
    {
      title: `${source.name}: ${alert.metric} is back to normal`,
      message: `${alert.metric}${formatTags(p.tags)} is ${p.value}`,
      priority: RECOVERY_PRIORITY,
      date: at,
    },
    p.value,
  );
}

function send(
  ctx: AppContext,
  source: SourceRow,
  alert: AlertRow,
  event: 'firing' | 'resolved',
  m: { title: string; message: string; priority: number; date: number },
  value: number | null,
): void {
  // Covered by a maintenance window: no firing or resolved message; the state change stands (§0.4).
  const messageId = isCovered(ctx, { kind: KIND, id: source.id, appid: source.channel_id })
    ? null
    : sendSourceMessage(ctx, ref(source), event, { ...m, sourceFields: { alertId: alert.id } });
  const frame: AlertFrame = {
    appid: source.channel_id,
    kind: 'metric:alert',
    data: {
      id: source.id,
      name: source.name,
      alertId: alert.id,
      metric: alert.metric,
      event,
      state: event === 'firing' ? 'firing' : 'ok',
      value,
      messageId,
    },
    at: m.date,
  };
  if (collecting) collecting.push(frame);
  else ctx.bus.emit('source:event', frame);
}

interface AlertFrame {
  appid: number;
  kind: 'metric:alert';
  data: Record<string, unknown>;
  at: number;
}

/** The transitions of the transaction running now (see withAlertFrames). */
let collecting: AlertFrame[] | null = null;

/**
 * Runs `work` (a transaction that may fire or resolve alerts) and then publishes its transitions as
 * `metric:alert` service frames (`source:event`), in order; none when it throws (rolled back). The hub
 * sends them after the journal fsync, behind the firing/resolved messages they name.
 */
export function withAlertFrames<T>(ctx: AppContext, work: () => T): T {
  const outer = collecting;
  const mine: AlertFrame[] = [];
  collecting = mine;
  let out: T;
  try {
    out = work();
  } finally {
    collecting = outer;
  }
  if (outer) outer.push(...mine);
  else for (const f of mine) ctx.bus.emit('source:event', f);
  return out;
}

// ---------------------------------------------------------------- evaluation

function stateOf(a: AlertRow): AlertState {
  return {
    state: a.state,
    since: a.since,
    last_value: a.last_value,
    last_point_at: a.last_point_at,
    armed_at: a.armed_at,
    due_at: a.due_at,
  };
}

function matches(alert: AlertRow, alertTags: [string, string][], p: EvalPoint): boolean {
  if (p.name !== alert.metric) return false;
  for (const [k, v] of alertTags) {
    let found = false;
    for (const [pk, pv] of p.tags)
      if (pk === k) {
        found = pv === v;
        break;
      }
    if (!found) return false;
  }
  return true;
}

function breaching(alert: AlertRow, value: number): boolean {
  const th = alert.threshold ?? 0;
  return alert.condition === 'above' ? value > th : value < th;
}

function absentDeadline(a: { last_point_at: number | null; armed_at: number; for_sec: number }): number {
  return Math.max(a.last_point_at ?? 0, a.armed_at) + a.for_sec * 1000;
}

/** The points of one ingest request against every enabled alert of the source (inside its transaction). */
export function evaluatePoints(
  ctx: AppContext,
  source: SourceRow,
  points: readonly EvalPoint[],
  now: number,
): void {
  const alerts = enabledAlertsOfSource(ctx.db, source.id);
  for (const alert of alerts) {
    const alertTags = Object.entries(JSON.parse(alert.tags) as Record<string, string>);
    const mine = points.filter((p) => matches(alert, alertTags, p));
    if (mine.length === 0) continue;
    mine.sort((a, b) => a.at - b.at);
    const s = stateOf(alert);
    const lastPoint = mine[mine.length - 1]!;
    s.last_value = lastPoint.value;
    if (alert.condition === 'absent') {
      s.last_point_at = now;
      s.due_at = absentDeadline({ ...s, for_sec: alert.for_sec });
      if (s.state === 'firing') {
        s.state = 'ok';
        s.since = now;
        resolve(ctx, source, alert, lastPoint, now);
      }
      writeAlertState(ctx.db, alert.id, s);
      continue;
    }
    const stored = breachesOf(ctx.db, alert.id);
    const before = new Map(stored.map((b) => [b.series_id, b.value]));
    const breaches = new Map(stored.map((b) => [b.series_id, { ...b }]));
    const forMs = alert.for_sec * 1000;
    for (const p of mine) {
      if (breaching(alert, p.value)) {
        let b = breaches.get(p.seriesId);
        if (b) b.value = p.value;
        else {
          b = { alert_id: alert.id, series_id: p.seriesId, since: p.at, value: p.value };
          breaches.set(p.seriesId, b);
        }
        if (s.state === 'ok' && p.at - b.since >= forMs) {
          s.state = 'firing';
          s.since = now;
          fire(ctx, source, alert, { tags: tagsTextOf(p.tags), value: p.value }, now);
        }
      } else {
        breaches.delete(p.seriesId);
        if (s.state === 'firing' && breaches.size === 0) {
          s.state = 'ok';
          s.since = now;
          resolve(ctx, source, alert, p, now);
        }
      }
    }
    // Only the breaches that changed are written: a batch of breaching points is one statement per series.
    for (const id of before.keys()) if (!breaches.has(id)) clearBreach(ctx.db, alert.id, id);
    for (const b of breaches.values())
      if (before.get(b.series_id) !== b.value) setBreach(ctx.db, alert.id, b.series_id, b.since, b.value);
    settleBreaches(ctx, source, alert, s, [...breaches.values()], now);
    writeAlertState(ctx.db, alert.id, s);
  }
}

function tagsTextOf(tags: readonly [string, string][]): string {
  return JSON.stringify(Object.fromEntries(tags));
}

/**
 * After points (or on the clock): an ok alert whose earliest breach has lasted forSec fires now;
 * otherwise it is due when that breach will have. A firing alert waits for a non-breaching point.
 */
function settleBreaches(
  ctx: AppContext,
  source: SourceRow,
  alert: AlertRow,
  s: AlertState,
  breaches: readonly { series_id: number; since: number; value: number }[],
  now: number,
  firedAt = now,
): void {
  s.due_at = null;
  if (s.state === 'firing' || breaches.length === 0) return;
  let first = breaches[0]!;
  for (const b of breaches) if (b.since < first.since) first = b;
  const at = first.since + alert.for_sec * 1000;
  if (at > now) {
    s.due_at = at;
    return;
  }
  s.state = 'firing';
  s.since = firedAt;
  const series = findSeries(ctx.db, first.series_id);
  fire(ctx, source, alert, { tags: series?.tags ?? '{}', value: first.value }, firedAt);
}

/** Source status from its alerts: `firing` while one fires, else `ok` after a point, else `pending`. */
export function refreshStatus(ctx: AppContext, source: SourceRow, now: number): void {
  const current = findSource(ctx.db, source.id);
  if (!current || current.status === 'paused') return;
  const next =
    firingAlertCount(ctx.db, source.id) > 0 ? 'firing' : current.last_check_at === null ? 'pending' : 'ok';
  if (next === current.status) return;
  writeSourceStatus(ctx.db, source.id, next, now);
  recordStatus(ctx, KIND, source.id, next, now);
}

/** Resumed: absent alerts count their silence from now. */
export function rearmAbsent(ctx: AppContext, sourceId: number, now: number): void {
  for (const a of enabledAlertsOfSource(ctx.db, sourceId)) {
    if (a.condition !== 'absent') continue;
    const s = stateOf(a);
    s.armed_at = now;
    s.due_at = absentDeadline({ ...s, for_sec: a.for_sec });
    writeAlertState(ctx.db, a.id, s);
  }
}

// ---------------------------------------------------------------- DueSource 'metric-alert'

export function alertNextDue(ctx: AppContext): number | null {
  return nextAlertDue(ctx.db);
}

export function runDueAlerts(ctx: AppContext, now: number): void {
  for (;;) {
    const rows = dueAlerts(ctx.db, now, DUE_BATCH);
    if (rows.length === 0) return;
    const changed = new Set<number>();
    withAlertFrames(ctx, () =>
      ctx.db.transaction(() => {
        for (const alert of rows) {
          const source = findSource(ctx.db, alert.source_id)!;
          const s = stateOf(alert);
          const before = source.status;
          if (source.status === 'paused' || alert.enabled !== 1) s.due_at = null;
          else if (alert.condition === 'absent') {
            const deadline = absentDeadline(alert);
            s.due_at = null;
            if (s.state === 'ok' && deadline <= now) {
              s.state = 'firing';
              s.since = deadline;
              fire(ctx, source, alert, { tags: alert.tags, value: null }, deadline);
            } else if (s.state === 'ok') s.due_at = deadline;
          } else
            settleBreaches(ctx, source, alert, s, breachesOf(ctx.db, alert.id), now, alert.due_at ?? now);
          writeAlertState(ctx.db, alert.id, s);
          refreshStatus(ctx, source, now);
          if (findSource(ctx.db, source.id)!.status !== before) changed.add(source.channel_id);
        }
      }),
    );
    for (const appid of changed) statusChanged(ctx, appid);
    if (rows.length < DUE_BATCH) return;
  }
}

// ---------------------------------------------------------------- CRUD

export interface AlertInput {
  metric?: string | undefined;
  tags?: Record<string, string> | undefined;
  condition?: Condition | undefined;
  threshold?: number | null | undefined;
  forSec?: number | undefined;
  priority?: number | undefined;
  message?: string | undefined;
  enabled?: boolean | undefined;
}

function settingsOf(a: AlertRow): AlertSettings {
  return {
    metric: a.metric,
    tags: a.tags,
    condition: a.condition,
    threshold: a.threshold,
    for_sec: a.for_sec,
    priority: a.priority,
    message: a.message,
    enabled: a.enabled,
  };
}

function canonicalTags(tags: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(tags).sort((a, b) => (a[0] < b[0] ? -1 : 1))));
}

function merge(ctx: AppContext, base: AlertSettings, input: AlertInput): AlertSettings {
  const next = { ...base };
  if (input.metric !== undefined) next.metric = input.metric;
  if (input.tags !== undefined) next.tags = canonicalTags(input.tags);
  if (input.condition !== undefined) next.condition = input.condition;
  if (input.threshold !== undefined) next.threshold = input.threshold;
  if (input.forSec !== undefined) next.for_sec = input.forSec;
  if (input.priority !== undefined) next.priority = input.priority;
  if (input.message !== undefined) next.message = input.message;
  if (input.enabled !== undefined) next.enabled = input.enabled ? 1 : 0;
  if (next.condition === 'absent') {
    const min = ctx.config.minIntervalSec;
    if (next.for_sec < min) throw errors.badRequest(`forSec: must be at least ${min} for absent`);
  } else if (next.threshold === null) throw errors.badRequest('threshold: required');
  return next;
}

/** What evaluation depends on: a change of any of these starts the alert over (ok, no breaches). */
function evaluationChanged(a: AlertSettings, b: AlertSettings): boolean {
  return (
    a.metric !== b.metric ||
    a.tags !== b.tags ||
    a.condition !== b.condition ||
    a.threshold !== b.threshold ||
    a.for_sec !== b.for_sec ||
    a.enabled !== b.enabled
  );
}

function ownAlert(ctx: AppContext, p: Principal, sourceId: number, alertId: number) {
  const source = ownSource(ctx, p, sourceId);
  const alert = findAlert(ctx.db, alertId);
  if (!alert || alert.source_id !== source.id) throw errors.notFound('alert');
  return { source, alert };
}

export function listAlerts(ctx: AppContext, p: Principal, sourceId: number): AlertRow[] {
  return alertsOfSource(ctx.db, ownSource(ctx, p, sourceId).id);
}

export function getAlert(ctx: AppContext, p: Principal, sourceId: number, alertId: number): AlertRow {
  return ownAlert(ctx, p, sourceId, alertId).alert;
}

export function createAlert(
  ctx: AppContext,
  p: Principal,
  sourceId: number,
  input: AlertInput & { metric: string; condition: Condition },
): AlertRow {
  const source = ownSource(ctx, p, sourceId);
  if (input.condition === 'absent' && input.forSec === undefined) throw errors.badRequest('forSec: required');
  const settings = merge(
    ctx,
    {
      metric: input.metric,
      tags: '{}',
      condition: input.condition,
      threshold: null,
      for_sec: 0,
      priority: 8,
      message: '',
      enabled: 1,
    },
    input,
  );
  const now = ctx.clock.now();
  const id = ctx.db.transaction(() => {
    if (countAlerts(ctx.db, source.id) >= ALERTS_PER_SOURCE)
      throw errors.perSourceCap(ALERTS_PER_SOURCE, 'alerts');
    const id = insertAlert(ctx.db, source.id, settings, now);
    arm(ctx, source, findAlert(ctx.db, id)!, now);
    return id;
  });
  ctx.due.poke();
  return findAlert(ctx.db, id)!;
}

/** A new or reset alert: ok; an enabled absent alert is due forSec from now (unless paused). */
function arm(ctx: AppContext, source: SourceRow, alert: AlertRow, now: number): void {
  clearBreaches(ctx.db, alert.id);
  const s: AlertState = {
    state: 'ok',
    since: alert.state === 'firing' ? now : alert.since,
    last_value: alert.last_value,
    last_point_at: null,
    armed_at: now,
    due_at: null,
  };
  if (alert.enabled === 1 && alert.condition === 'absent' && source.status !== 'paused')
    s.due_at = absentDeadline({ ...s, for_sec: alert.for_sec });
  writeAlertState(ctx.db, alert.id, s);
}

export function changeAlert(
  ctx: AppContext,
  p: Principal,
  sourceId: number,
  alertId: number,
  input: AlertInput,
): AlertRow {
  const { source, alert } = ownAlert(ctx, p, sourceId, alertId);
  const base = settingsOf(alert);
  const next = merge(ctx, base, input);
  const now = ctx.clock.now();
  ctx.db.transaction(() => {
    updateAlertSettings(ctx.db, alert.id, next);
    if (evaluationChanged(base, next)) arm(ctx, source, findAlert(ctx.db, alert.id)!, now);
    refreshStatus(ctx, source, now);
  });
  ctx.due.poke();
  statusChanged(ctx, source.channel_id);
  return findAlert(ctx.db, alert.id)!;
}

export function removeAlert(ctx: AppContext, p: Principal, sourceId: number, alertId: number): void {
  const { source, alert } = ownAlert(ctx, p, sourceId, alertId);
  ctx.db.transaction(() => {
    deleteAlert(ctx.db, alert.id);
    refreshStatus(ctx, source, ctx.clock.now());
  });
  statusChanged(ctx, source.channel_id);
}

export function presentAlert(a: AlertRow) {
  return {
    id: a.id,
    sourceId: a.source_id,
    metric: a.metric,
    tags: JSON.parse(a.tags) as Record<string, string>,
    condition: a.condition,
    threshold: a.threshold,
    forSec: a.for_sec,
    priority: a.priority,
    message: a.message,
    enabled: a.enabled === 1,
    state: a.state,
    since: rfc3339(a.since),
    lastValue: a.last_value,
    createdAt: rfc3339(a.created_at),
  };
}
