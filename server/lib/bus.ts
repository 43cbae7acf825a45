import type { Logger } from './log';

/**
 * Domain events published after commit. The live hub, the jobs and the Electron tray subscribe here;
 * nobody reaches into another family's internals. Families add their events to this map.
 */
export interface BusEvents {
  /** A device token stopped being valid (suspended, revoked, rotated, deleted): close its sockets now. */
  'device:invalidated': {
    userId: number;
    deviceId: number;
    reason: 'suspended' | 'revoked' | 'rotated' | 'deleted';
  };
  /** Every device of a user signed out at once (password reset, admin password change, user deleted). */
  'user:devices_invalidated': { userId: number; keepDeviceId?: number };
  /** A channel key or share token stopped being valid: close sockets authenticated by it. */
  'token:invalidated': { kind: 'app' | 'share'; tokenId: number };
  'message:created': { message: BusMessage; ownerId: number };
  'messages:deleted': { userId: number; ids?: number[]; channelIds?: number[] };
  'channel:status_changed': { appid: number; userIds: number[] };
  'share:changed': { appid: number; userIds: number[] };
  /**
   * Something happened to a source writing to `appid` (heartbeat:ping, heartbeat:alert,
   * monitor:status_changed, question:updated ...): a service frame `{kind, appid, at, data}` for the
   * `/ws?events=1` sockets of that channel's audience (docs/api.md, "Live streams"). `at` defaults to now.
   */
  'source:event': { appid: number; kind: string; data: Record<string, unknown>; at?: number };
  /**
   * Time passed without the server watching it (server/jobs/alive.ts): the server was down (`restart`,
   * [aliveAt, start]), the host slept (`sleep`, a wall-clock jump beyond the monotonic clock) or Electron
   * reported a wake (`resume`). Listeners run synchronously; the due timer is re-armed after them.
   */
  'clock:gap': { from: number; to: number; reason: 'restart' | 'sleep' | 'resume' };
  /**
   * A maintenance window started (`active`) or ended, after its covered sources were set to or
   * re-evaluated from `maintenance` (server/features/maintenance/coverage.ts).
   */
  'maintenance:changed': { channelIds: number[]; sources: { kind: string; id: number }[]; active: boolean };
  /** An outbox entry changed status (issue 15, after commit): the Deliveries log may refresh. */
  'delivery:changed': { userId: number; appid: number; id: number; status: string };
  /** The tunnel's status, URL or error changed (server/features/tunnel/service.ts; Settings → Public access). */
  'tunnel:changed': { status: string; publicUrl: string | null; error: string | null };
  /** The machine went on battery or back to mains power (server/lib/power.ts). */
  'power:changed': { onBattery: boolean };
}

/** The wire Message plus what the hub needs to route it. */
export interface BusMessage {
  id: number;
  appid: number;
  message: string;
  title: string;
  priority: number;
  date: string;
  senderName?: string;
  extras?: Record<string, unknown>;
}

type Listener = (payload: never) => void;

export interface EventBusOptions {
  /** Where a listener that throws outside a transaction is reported. */
  log?: Logger;
  /** Whether a database transaction is open now (the store's); emits inside one keep rollback semantics. */
  inTransaction?: () => boolean;
}

/**
 * Listeners run synchronously, in the order they subscribed. Outside a transaction (an event announcing
 * something already committed) each listener is isolated: one that throws is logged and the others still
 * run, so a failing subscriber can neither hide the event from the rest nor turn a committed change into
 * an error answer. Inside a transaction the first throw propagates as before and rolls the transaction
 * back with the listener's part of it. Without a logger, the first error is thrown after every listener
 * has run.
 */
export class EventBus {
  /** Copy-on-write: `on`/off replace the array, so an emit iterates without copying it. */
  private readonly listeners = new Map<keyof BusEvents, readonly Listener[]>();
  constructor(private readonly opts: EventBusOptions = {}) {}

  emit<K extends keyof BusEvents>(name: K, payload: BusEvents[K]): void {
    const list = this.listeners.get(name) as readonly ((p: BusEvents[K]) => void)[] | undefined;
    if (!list) return;
    if (this.opts.inTransaction?.()) {
      for (const l of list) l(payload);
      return;
    }
    let first: { err: unknown } | null = null;
    for (const l of list) {
      try {
        l(payload);
      } catch (err) {
        if (this.opts.log) this.opts.log.error('an event listener failed', { event: name, err });
        else first ??= { err };
      }
    }
    if (first) throw first.err;
  }

  on<K extends keyof BusEvents>(name: K, listener: (payload: BusEvents[K]) => void): () => void {
    const l = listener as Listener;
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), l]);
    return () => {
      const list = this.listeners.get(name) ?? [];
      const i = list.indexOf(l);
      if (i < 0) return;
      const rest = [...list.slice(0, i), ...list.slice(i + 1)];
      if (rest.length > 0) this.listeners.set(name, rest);
      else this.listeners.delete(name);
    };
  }
}
