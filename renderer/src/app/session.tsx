import { createContext, type ReactNode, useCallback, useContext, useEffect, useState } from 'react';
import { api, get, session } from '../api/client';
import { desktop } from '../api/desktop';
import type { User } from '../api/types';

interface SessionState {
  token: string | null;
  user: User | null;
  loading: boolean;
  error: unknown;
  refreshUser(): Promise<void>;
  signIn(token: string): void;
  signOut(): Promise<void>;
}

const Ctx = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const s = useContext(Ctx);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [token, setToken] = useState(session.token);
  const [user, setUser] = useState<User | null>(null);
  const [loading, setLoading] = useState(!!session.token);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => session.subscribe(setToken), []);

  const refreshUser = useCallback(async () => {
    if (!session.token) return;
    try {
      setUser(await get<User>('/current/user'));
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setLoading(false);
    }
  }, []);

  useEffect(() => {
    // The desktop app learns the device token for the tray count and notifications.
    void desktop()?.setSession(token);
    if (!token) {
      setUser(null);
      setLoading(false);
      return;
    }
    setLoading(true);
    void refreshUser();
  }, [token, refreshUser]);

  const value: SessionState = {
    token,
    user,
    loading,
    error,
    refreshUser,
    signIn: (t) => session.set(t),
    signOut: async () => {
      try {
        await api('POST', '/auth/logout');
      } catch {
        /* logout answers 200 even for a bad token; a network error must not keep the user signed in */
      }
      session.set(null);
    },
  };
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}
