import './health.css';
import type { HeartbeatStatus } from './types';

/** The heartbeat fields of a channel object (docs/api.md "Channel summary"). */
export interface ChannelHealth {
  hbTotal?: number;
  hbAlerting?: number;
  hbAlertingInfo?: number;
  hbPending?: number;
  hbStatus?: 'none' | 'ok' | 'degraded' | 'alerting' | 'pending';
}

/** What a channel's dot says, in words (its accessible name and tooltip); null when it has no dot. */
export function healthLabel(c: ChannelHealth): string | null {
  const total = c.hbTotal ?? 0;
  const of = (n: number) => `${n} of ${total} heartbeat${total === 1 ? '' : 's'}`;
  switch (c.hbStatus) {
    case 'alerting':
      return `Heartbeats alerting: ${of(c.hbAlerting ?? 0)} down`;
    case 'degraded':
      return `Heartbeats degraded: ${of(c.hbAlertingInfo ?? 0)} late`;
    case 'pending':
      return `Heartbeats pending: waiting for the first ping of ${total === 1 ? 'it' : `all ${total}`}`;
    case 'ok': {
      const pending = c.hbPending ?? 0;
      return `Heartbeats ok: ${total === 1 ? 'the heartbeat is up' : `none of ${total} late or down`}${
        pending ? `, ${pending} waiting for a first ping` : ''
      }`;
    }
    default:
      return null;
  }
}

/** A channel's health dot in the channel trees: nothing for a channel without heartbeats. */
export function HealthDot({ channel }: { channel: ChannelHealth }) {
  const label = healthLabel(channel);
  if (!label) return null;
  return <span className={`health-dot ${channel.hbStatus}`} role="img" aria-label={label} title={label} />;
}

/** A heartbeat's status, shown as its own word (`new`, `up`, `late`, …). */
export function StatusChip({ status }: { status: HeartbeatStatus | (string & {}) }) {
  return <span className={`hb-chip ${status}`}>{status}</span>;
}
