import type { Message } from './types';

export type SocketState = 'connecting' | 'open' | 'closed';

/** A service frame of `/ws?events=1` (docs/api.md "Live events"): `{kind, appid, at, data}`, no `id`. */
export interface ServiceEvent {
  kind: string;
  appid: number;
  at: string;
  data: Record<string, unknown>;
}

/**
 * The message socket `/ws?token=` (spec "Live streams"): every frame is a Message; with `onEvent` the
 * socket asks for service frames too (`&events=1`), told apart by their `kind`. Reconnects with
 * backoff (1 s doubling to 30 s) until closed; reports its state so the inbox can say "live" or not.
 */
export function openMessageSocket(
  token: string,
  onMessage: (m: Message) => void,
  onState: (s: SocketState) => void,
  onEvent?: (e: ServiceEvent) => void,
): () => void {
  let ws: WebSocket | null = null;
  let closed = false;
  let delay = 1000;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const connect = () => {
    if (closed) return;
    onState('connecting');
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    ws = new WebSocket(
      `${proto}//${location.host}/ws?token=${encodeURIComponent(token)}${onEvent ? '&events=1' : ''}`,
    );
    ws.onopen = () => {
      delay = 1000;
      onState('open');
    };
    ws.onmessage = (ev) => {
      try {
        const m = JSON.parse(String(ev.data)) as Message | ServiceEvent;
        if ('id' in m && typeof m.id === 'number' && typeof m.appid === 'number') onMessage(m);
        else if (onEvent && 'kind' in m && typeof m.kind === 'string' && typeof m.appid === 'number')
          onEvent(m);
      } catch {
        /* not a message frame */
      }
    };
    ws.onclose = () => {
      onState('closed');
      if (closed) return;
      timer = setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30_000);
    };
  };
  connect();
  return () => {
    closed = true;
    if (timer) clearTimeout(timer);
    ws?.close();
  };
}
