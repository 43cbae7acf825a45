import {
  contextOf,
  countUnread,
  type FetchLike,
  loadSnapshot,
  SessionClient,
  type SessionSnapshot,
} from './desktop-session';
import type { NativeImage, NativeImageModule, NotificationConstructor } from './electron-api';
import { DEVICE_TOKEN_RE } from './ipc/channels';
import {
  decideNotification,
  type IncomingMessage,
  iconFromBytes,
  type NotificationDecision,
  showNotification,
} from './os-notifications';

export interface NotifierDeps {
  baseUrl: () => string;
  fetch: FetchLike;
  now: () => number;
  Notification: NotificationConstructor;
  nativeImage: NativeImageModule;
  onOpenMessage(msg: IncomingMessage): void;
  /** The tray redraws from these two. */
  onState(state: { unread: number; pausedUntil: number | null }): void;
  log: (msg: string, err?: unknown) => void;
}

/**
 * Tray count and native notifications for the user signed in to the window. Fed by the server's bus
 * ('message:created'); reads everything else through the HTTP API with the window's device token.
 */
export class DesktopNotifier {
  private client: SessionClient | null = null;
  private snapshot: SessionSnapshot | null = null;
  private pausedUntil: number | null = null;
  private unread = 0;
  private readonly icons = new Map<number, NativeImage | undefined>();
  private recountTimer: NodeJS.Timeout | null = null;
  /** Decisions taken, newest last (kept short; tests and diagnostics read it). */
  readonly recent: { id: number; decision: NotificationDecision }[] = [];

  constructor(private readonly deps: NotifierDeps) {}

  get state(): { unread: number; pausedUntil: number | null; signedIn: boolean } {
    return { unread: this.unread, pausedUntil: this.activePause(), signedIn: this.client !== null };
  }

  /** The window signed in (a device token) or out (null). Anything else is refused. */
  async setSession(token: unknown): Promise<void> {
    if (token !== null && (typeof token !== 'string' || !DEVICE_TOKEN_RE.test(token)))
      throw new Error('setSession expects a device token or null');
    this.client = token ? new SessionClient(this.deps.baseUrl, token, this.deps.fetch) : null;
    this.snapshot = null;
    this.icons.clear();
    this.unread = 0;
    if (this.client) {
      await this.refresh();
      await this.recount();
    }
    this.emit();
  }

  async refresh(): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      const snap = await loadSnapshot(client);
      if (client === this.client) this.snapshot = snap;
    } catch (err) {
      this.deps.log('desktop: could not read channels, mutes or quiet hours', err);
    }
  }

  async recount(): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      const n = await countUnread(client);
      if (client === this.client) this.unread = n;
    } catch (err) {
      this.deps.log('desktop: could not count unread messages', err);
    }
    this.emit();
  }

  /** Debounced recount after the window reports reads or deletes. */
  scheduleRecount(delayMs = 300): void {
    if (this.recountTimer) clearTimeout(this.recountTimer);
    this.recountTimer = setTimeout(() => {
      this.recountTimer = null;
      void this.recount();
    }, delayMs);
    this.recountTimer.unref?.();
  }

  pause(ms: number): void {
    this.pausedUntil = this.deps.now() + ms;
    this.emit();
  }

  resume(): void {
    this.pausedUntil = null;
    this.emit();
  }

  async onMessage(msg: IncomingMessage): Promise<NotificationDecision | null> {
    if (!this.client) return null;
    if (!this.snapshot?.channels.has(msg.appid)) await this.refresh(); // a channel made since
    const snap = this.snapshot;
    if (!snap) return null;
    const decision = decideNotification(msg, contextOf(snap, this.activePause(), new Date(this.deps.now())));
    this.recent.push({ id: msg.id, decision });
    if (this.recent.length > 50) this.recent.shift();
    if (decision.reason === 'not-visible') return decision;
    this.unread += 1;
    this.emit();
    if (!decision.show) return decision;
    const channel = snap.channels.get(msg.appid);
    const icon = await this.iconFor(msg.appid, channel?.image ?? '');
    showNotification(msg, channel?.name ?? 'Belfry', decision, {
      Notification: this.deps.Notification,
      onClick: (m) => this.deps.onOpenMessage(m),
      ...(icon ? { icon } : {}),
    });
    return decision;
  }

  dispose(): void {
    if (this.recountTimer) clearTimeout(this.recountTimer);
    this.client = null;
  }

  private activePause(): number | null {
    if (this.pausedUntil !== null && this.pausedUntil <= this.deps.now()) this.pausedUntil = null;
    return this.pausedUntil;
  }

  private async iconFor(appid: number, image: string): Promise<NativeImage | undefined> {
    if (this.icons.has(appid)) return this.icons.get(appid);
    let icon: NativeImage | undefined;
    try {
      icon =
        image && this.client
          ? iconFromBytes(this.deps.nativeImage, await this.client.bytes(image))
          : undefined;
    } catch {
      icon = undefined;
    }
    this.icons.set(appid, icon);
    return icon;
  }

  private emit(): void {
    this.deps.onState({ unread: this.unread, pausedUntil: this.activePause() });
  }
}
