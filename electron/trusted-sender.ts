import type { IpcMainInvokeEvent } from './electron-api';
import { isAppUrl } from './trusted-url';

/**
 * Every IPC handler first checks who is calling (conventions, habit 15): only our own window, and only
 * while its top frame shows the hosted server's origin (not a page it was somehow navigated to).
 */
export function isTrustedSender(
  event: IpcMainInvokeEvent,
  appOrigin: string,
  windowIds: ReadonlySet<number>,
): boolean {
  if (!windowIds.has(event.sender.id)) return false;
  const frameUrl = event.senderFrame?.url;
  if (!frameUrl) return false;
  return isAppUrl(frameUrl, appOrigin);
}
