import type { AppContext } from '../context';

/**
 * Power awareness (issue 13): on battery, browser workflows pause (a Chromium check every few minutes
 * drains a laptop) and every other monitor's interval is stretched by `BELFRY_BATTERY_INTERVAL_FACTOR`
 * (default 2). The state comes from the `BELFRY_ON_BATTERY` setting (a headless server) or from Electron's
 * powerMonitor `on-battery` / `on-ac`, which the desktop app forwards through the hosted server
 * (electron/desktop.ts). Per server, never module-global: tests run several servers.
 */

/** Where the current state came from: the setting (start-up value) or the desktop app's powerMonitor. */
export type PowerSource = 'setting' | 'electron';

export interface PowerState {
  onBattery: boolean;
  source: PowerSource;
  /** Wall time (ctx.clock) of the last change; null while the start-up setting holds. */
  since: number | null;
}

const states = new WeakMap<AppContext, PowerState>();

function state(ctx: AppContext): PowerState {
  let s = states.get(ctx);
  if (!s) {
    s = { onBattery: ctx.config.onBattery, source: 'setting', since: null };
    states.set(ctx, s);
  }
  return s;
}

export function isOnBattery(ctx: AppContext): boolean {
  return state(ctx).onBattery;
}

/**
 * The machine went on battery (`true`) or back to mains power. Emits `power:changed {onBattery}` when the
 * state changes (the monitors engine re-plans its checks on it); repeating the current state is a no-op.
 */
export function setOnBattery(ctx: AppContext, on: boolean, source: PowerSource = 'electron'): void {
  const s = state(ctx);
  s.source = source;
  if (s.onBattery === on) return;
  s.onBattery = on;
  s.since = ctx.clock.now();
  ctx.bus.emit('power:changed', { onBattery: on });
}

/** How much longer monitor intervals are now: 1 on mains power, the setting's factor on battery. */
export function intervalFactor(ctx: AppContext): number {
  return isOnBattery(ctx) ? ctx.config.batteryIntervalFactor : 1;
}

/** `GET /power` (docs/api.md, "Power"): what the UI shows. */
export function presentPower(ctx: AppContext) {
  const s = state(ctx);
  return {
    onBattery: s.onBattery,
    source: s.source,
    intervalFactor: intervalFactor(ctx),
    batteryIntervalFactor: ctx.config.batteryIntervalFactor,
    browserWorkflowsPaused: s.onBattery,
    since: s.since === null ? null : new Date(s.since).toISOString(),
  };
}
