import type { IpcMain, IpcMainInvokeEvent } from '../electron-api';
import type { InvokeChannel } from './channels';

export class IpcRefused extends Error {}

export type IpcHandlers = Record<InvokeChannel, (...args: unknown[]) => unknown>;

/**
 * Registers every handler behind the sender check: an untrusted sender gets an error and the handler
 * never runs. Handlers receive only the arguments, never the event (nothing to leak or misuse).
 */
export function registerIpc(
  ipcMain: IpcMain,
  handlers: IpcHandlers,
  isTrusted: (event: IpcMainInvokeEvent) => boolean,
  onRefused: (channel: string, event: IpcMainInvokeEvent) => void = () => {},
): () => void {
  const channels = Object.keys(handlers) as InvokeChannel[];
  for (const channel of channels) {
    ipcMain.handle(channel, (event, ...args) => {
      if (!isTrusted(event)) {
        onRefused(channel, event);
        throw new IpcRefused(`${channel}: refused for an untrusted sender`);
      }
      return handlers[channel](...args);
    });
  }
  return () => {
    for (const channel of channels) ipcMain.removeHandler(channel);
  };
}
