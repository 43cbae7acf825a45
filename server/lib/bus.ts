import { EventEmitter } from 'node:events';

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

export class EventBus {
  private readonly emitter = new EventEmitter();
  constructor() {
    this.emitter.setMaxListeners(0);
  }
  emit<K extends keyof BusEvents>(name: K, payload: BusEvents[K]): void {
    this.emitter.emit(name, payload);
  }
  on<K extends keyof BusEvents>(name: K, listener: (payload: BusEvents[K]) => void): () => void {
    this.emitter.on(name, listener);
    return () => this.emitter.off(name, listener);
  }
}
