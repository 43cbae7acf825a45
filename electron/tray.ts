import type { MenuItemOptions, MenuModule, NativeImage, TrayConstructor, TrayInstance } from './electron-api';

export const PAUSE_MS = 60 * 60 * 1000;

/** The count shown beside the tray icon: nothing at zero, capped at 99+. */
export function trayTitle(unread: number): string {
  if (!Number.isFinite(unread) || unread <= 0) return '';
  return unread > 99 ? '99+' : String(Math.floor(unread));
}

export function trayTooltip(
  unread: number,
  pausedUntil: number | null,
  now: number,
  lanUrl: string | null,
): string {
  const parts = [unread > 0 ? `Belfry: ${unread} unread` : 'Belfry: no unread messages'];
  if (pausedUntil !== null && pausedUntil > now) {
    const t = new Date(pausedUntil);
    parts.push(
      `notifications paused until ${String(t.getHours()).padStart(2, '0')}:${String(t.getMinutes()).padStart(2, '0')}`,
    );
  }
  if (lanUrl) parts.push(`on your network at ${lanUrl}`);
  return parts.join('\n');
}

export interface TrayActions {
  open(): void;
  pause(): void;
  resume(): void;
  quit(): void;
}

export interface TrayState {
  unread: number;
  pausedUntil: number | null;
  lanUrl: string | null;
}

export function trayMenuTemplate(state: TrayState, now: number, actions: TrayActions): MenuItemOptions[] {
  const paused = state.pausedUntil !== null && state.pausedUntil > now;
  const items: MenuItemOptions[] = [
    {
      label: state.unread > 0 ? `Open Belfry (${trayTitle(state.unread)} unread)` : 'Open Belfry',
      click: actions.open,
    },
    paused
      ? { label: 'Resume notifications', click: actions.resume }
      : { label: 'Pause notifications for 1 hour', click: actions.pause },
  ];
  if (state.lanUrl) items.push({ label: `LAN: ${state.lanUrl}`, enabled: false });
  items.push({ type: 'separator' }, { label: 'Quit Belfry', click: actions.quit });
  return items;
}

/** Owns the tray icon; render() after any state change. */
export class TrayController {
  private readonly tray: TrayInstance;
  private state: TrayState = { unread: 0, pausedUntil: null, lanUrl: null };

  constructor(
    Tray: TrayConstructor,
    private readonly Menu: MenuModule,
    icon: NativeImage,
    private readonly actions: TrayActions,
    private readonly now: () => number,
  ) {
    this.tray = new Tray(icon);
    this.tray.on('click', actions.open);
    this.render();
  }

  update(patch: Partial<TrayState>): void {
    this.state = { ...this.state, ...patch };
    this.render();
  }

  get current(): TrayState {
    return this.state;
  }

  render(): void {
    const now = this.now();
    this.tray.setTitle(trayTitle(this.state.unread));
    this.tray.setToolTip(trayTooltip(this.state.unread, this.state.pausedUntil, now, this.state.lanUrl));
    this.tray.setContextMenu(this.Menu.buildFromTemplate(trayMenuTemplate(this.state, now, this.actions)));
  }

  destroy(): void {
    this.tray.destroy();
  }
}
