import {
  createContext,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
} from 'react';
import type { Message } from '../api/types';
import { openMessageSocket, type ServiceEvent, type SocketState } from '../api/ws';

type Handler = (m: Message) => void;

/** A change signal from the SSE stream (docs/api.md "Server-Sent Events"): something about a channel changed. */
export interface ChannelSignal {
  kind: 'share:changed' | 'channel:status_changed';
  appid: number;
}
type SignalHandler = (s: ChannelSignal) => void;
type EventHandler = (e: ServiceEvent) => void;

interface Live {
  state: SocketState;
  subscribe(h: Handler): () => void;
  /** Shares offered, accepted, left or revoked, and channel status changes, as they happen. */
  onSignal(h: SignalHandler): () => void;
  /** Service frames of the socket (heartbeat pings and alerts, …) as they happen. */
  onEvent(h: EventHandler): () => void;
}

const Ctx = createContext<Live>({
  state: 'closed',
  subscribe: () => () => {},
  onSignal: () => () => {},
  onEvent: () => () => {},
});

/**
 * One message socket for the whole signed-in app (not only while the inbox is open), so this device
 * counts as online under Devices and pages subscribe to what arrives.
 */
export function LiveProvider({ token, children }: { token: string; children: ReactNode }) {
  const [state, setState] = useState<SocketState>('connecting');
  const handlers = useRef(new Set<Handler>());
  const signalHandlers = useRef(new Set<SignalHandler>());
  const eventHandlers = useRef(new Set<EventHandler>());
  useEffect(
    () =>
      openMessageSocket(
        token,
        (m) => {
          for (const h of handlers.current) h(m);
        },
        setState,
        (e) => {
          for (const h of eventHandlers.current) h(e);
        },
      ),
    [token],
  );
  // The socket carries messages only; account changes come as named events on the SSE stream, which
  // reconnects by itself (the server sends `retry: 5000`).
  useEffect(() => {
    const stream = new EventSource(`/stream?token=${encodeURIComponent(token)}`);
    const relay = (kind: ChannelSignal['kind']) => (e: MessageEvent) => {
      try {
        const { appid } = JSON.parse(String(e.data)) as { appid: number };
        for (const h of signalHandlers.current) h({ kind, appid });
      } catch {
        /* not a signal */
      }
    };
    stream.addEventListener('share:changed', relay('share:changed'));
    stream.addEventListener('channel:status_changed', relay('channel:status_changed'));
    return () => stream.close();
  }, [token]);
  // Stable functions, so pages can subscribe in an effect without resubscribing on every state change.
  const subscribe = useCallback((h: Handler) => {
    handlers.current.add(h);
    return () => void handlers.current.delete(h);
  }, []);
  const onSignal = useCallback((h: SignalHandler) => {
    signalHandlers.current.add(h);
    return () => void signalHandlers.current.delete(h);
  }, []);
  const onEvent = useCallback((h: EventHandler) => {
    eventHandlers.current.add(h);
    return () => void eventHandlers.current.delete(h);
  }, []);
  const value = useMemo<Live>(
    () => ({ state, subscribe, onSignal, onEvent }),
    [state, subscribe, onSignal, onEvent],
  );
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useLive(): Live {
  return useContext(Ctx);
}

/**
 * Runs `handler` on every change signal while the component is mounted. The latest handler is called,
 * so it may close over props and state without resubscribing.
 */
export function useSignals(handler: SignalHandler): void {
  const { onSignal } = useLive();
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => onSignal((s) => latest.current(s)), [onSignal]);
}

/** Runs `handler` on every service frame of the socket while the component is mounted (latest handler). */
export function useServiceEvents(handler: EventHandler): void {
  const { onEvent } = useLive();
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => onEvent((e) => latest.current(e)), [onEvent]);
}
