import { api } from './client';

/** What the sign-in screens need from `GET /serverinfo` (docs/api.md, "Server info"). */
export interface ServerInfo {
  register?: boolean;
  plainHttpLan?: boolean;
}

/** `GET /serverinfo`, asked once per page load; a failure is asked again on the next screen. */
let asked: Promise<ServerInfo | null> | null = null;

export function serverInfo(): Promise<ServerInfo | null> {
  asked ??= api<ServerInfo>('GET', '/serverinfo', { anonymous: true }).then(
    (info) => info ?? null,
    () => {
      asked = null;
      return null;
    },
  );
  return asked;
}
