import { describe, expect, it } from 'vitest';
import { fakeElectron } from './testing/fake-electron';
import { TrayController, trayMenuTemplate, trayTitle, trayTooltip } from './tray';

describe('tray', () => {
  it('trayTitle shows nothing at zero and caps at 99+', () => {
    expect(trayTitle(0)).toBe('');
    expect(trayTitle(-1)).toBe('');
    expect(trayTitle(7)).toBe('7');
    expect(trayTitle(99)).toBe('99');
    expect(trayTitle(100)).toBe('99+');
    expect(trayTitle(Number.NaN)).toBe('');
  });
  it('trayTooltip says the count, the pause and the LAN address', () => {
    const now = new Date(2026, 0, 5, 13, 0).getTime();
    expect(trayTooltip(0, null, now, null)).toBe('Belfry: no unread messages');
    expect(trayTooltip(3, now + 3_600_000, now, 'http://192.168.1.5:7878')).toBe(
      'Belfry: 3 unread\nnotifications paused until 14:00\non your network at http://192.168.1.5:7878',
    );
  });
  it('the menu offers open, pause for an hour (or resume while paused) and quit', () => {
    const calls: string[] = [];
    const actions = {
      open: () => calls.push('open'),
      pause: () => calls.push('pause'),
      resume: () => calls.push('resume'),
      quit: () => calls.push('quit'),
    };
    const menu = trayMenuTemplate({ unread: 2, pausedUntil: null, lanUrl: null }, 0, actions);
    expect(menu.map((i) => i.label ?? i.type)).toEqual([
      'Open Belfry (2 unread)',
      'Pause notifications for 1 hour',
      'separator',
      'Quit Belfry',
    ]);
    for (const i of menu) i.click?.();
    expect(calls).toEqual(['open', 'pause', 'quit']);
    const paused = trayMenuTemplate(
      { unread: 0, pausedUntil: 100, lanUrl: 'http://10.0.0.2:7878' },
      50,
      actions,
    );
    expect(paused.map((i) => i.label ?? i.type)).toEqual([
      'Open Belfry',
      'Resume notifications',
      'LAN: http://10.0.0.2:7878',
      'separator',
      'Quit Belfry',
    ]);
  });
  it('TrayController redraws title, tooltip and menu on update', () => {
    const e = fakeElectron({ userData: '/tmp/none' });
    const c = new TrayController(
      e.Tray,
      e.Menu,
      e.nativeImage.createEmpty(),
      { open() {}, pause() {}, resume() {}, quit() {} },
      () => 0,
    );
    const tray = e.trays[0]!;
    expect(tray.title).toBe('');
    c.update({ unread: 120 });
    expect(tray.title).toBe('99+');
    expect(tray.tooltip).toBe('Belfry: 120 unread');
    expect(tray.menu[0]!.label).toBe('Open Belfry (99+ unread)');
    c.destroy();
    expect(tray.destroyed).toBe(true);
  });
});
