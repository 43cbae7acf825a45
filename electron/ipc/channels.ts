/**
 * The IPC surface, one channel per preload function (conventions, habit 15). The preload script
 * (preload/preload.cts) mirrors these names; it cannot import this module because a sandboxed preload
 * is a single CommonJS file, so a unit test keeps the two lists equal.
 */
export const IPC = {
  /** renderer → main: the device token after sign-in (null after sign-out), for tray and notifications. */
  setSession: 'belfry:set-session',
  /** renderer → main: something was read or deleted; recount the tray badge. */
  unreadChanged: 'belfry:unread-changed',
  /** renderer → main: open an http(s) link in the system browser. */
  openExternal: 'belfry:open-external',
  getSettings: 'belfry:get-settings',
  setSettings: 'belfry:set-settings',
  /** main → renderer: a notification was clicked; show this message. */
  openMessage: 'belfry:open-message',
} as const;

export type InvokeChannel = Exclude<(typeof IPC)[keyof typeof IPC], typeof IPC.openMessage>;

export const DEVICE_TOKEN_RE = /^C[A-Za-z0-9]{22}$/;
