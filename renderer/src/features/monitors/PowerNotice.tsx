import { useCallback, useEffect, useState } from 'react';
import { get } from '../../api/client';
import { useServiceEvents } from '../../app/live';
import { formatDate } from '../../components/ui';
import type { PowerState } from './types';

/**
 * Battery awareness (`GET /power`, docs/api.md "Power: battery awareness"): read when the monitors show,
 * again after a `monitor:status_changed` frame (going on battery turns browser workflows `unknown`) or a
 * `power:changed` frame, and whenever `version` changes. On battery it says what that does to the checks,
 * and where the state comes from: the desktop app's power monitor, or the headless server's settings
 * (`BELFRY_ON_BATTERY`, `BELFRY_BATTERY_INTERVAL_FACTOR`, read at start; the API sets neither).
 */
export function PowerNotice({ version = 0 }: { version?: number }) {
  const [power, setPower] = useState<PowerState | null>(null);
  const load = useCallback(() => {
    get<PowerState>('/power').then(setPower, () => setPower(null));
  }, []);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the refetch trigger
  useEffect(load, [load, version]);
  useServiceEvents((e) => {
    if (e.kind === 'monitor:status_changed' || e.kind === 'power:changed') load();
  });
  if (!power?.onBattery) return null;
  const factor = power.intervalFactor;
  return (
    <div className="warning stack mon-power" role="status" aria-label="Battery power">
      <strong>
        On battery: browser workflows paused
        {factor > 1 ? `, other checks every ${factor}× longer` : ''}.
      </strong>
      <small>
        Back on mains power the paused workflows are checked at once and the usual intervals return.{' '}
        {power.source === 'electron'
          ? `The desktop app reported it${power.since ? ` at ${formatDate(power.since)}` : ''}.`
          : `This server runs with BELFRY_ON_BATTERY=true (factor: BELFRY_BATTERY_INTERVAL_FACTOR=${power.batteryIntervalFactor}); change the setting and restart the server to leave battery mode.`}
      </small>
    </div>
  );
}
