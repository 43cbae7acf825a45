import { useEffect, useState } from 'react';
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

/** `serverInfo()` for a component: undefined until it answers, null when it failed. */
export function useServerInfo(): ServerInfo | null | undefined {
  const [info, setInfo] = useState<ServerInfo | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    void serverInfo().then((answer) => {
      if (live) setInfo(answer);
    });
    return () => {
      live = false;
    };
  }, []);
  return info;
}
