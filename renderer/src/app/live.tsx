import { createContext, type ReactNode, useContext, useEffect, useRef, useState } from 'react';
import type { Message } from '../api/types';
import { openMessageSocket, type SocketState } from '../api/ws';

type Handler = (m: Message) => void;

interface Live {
  state: SocketState;
  subscribe(h: Handler): () => void;
}

const Ctx = createContext<Live>({ state: 'closed', subscribe: () => () => {} });

/**
 * One message socket for the whole signed-in app (not only while the inbox is open), so this device
 * counts as online under Devices and pages subscribe to what arrives.
 */
export function LiveProvider({ token, children }: { token: string; children: ReactNode }) {
  const [state, setState] = useState<SocketState>('connecting');
  const handlers = useRef(new Set<Handler>());
  useEffect(
    () =>
      openMessageSocket(
        token,
        (m) => {
          for (const h of handlers.current) h(m);
        },
        setState,
      ),
    [token],
  );
  const value: Live = {
    state,
    subscribe: (h) => {
      handlers.current.add(h);
      return () => handlers.current.delete(h);
    },
  };
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useLive(): Live {
  return useContext(Ctx);
}
