import { useSyncExternalStore } from 'react';

/**
 * Which provider answers the assistant, as last seen: `local` or the model's name. The server says so in
 * every chat answer and in polished insights (`GET /assistant/insights` names the model only when it
 * reworded the items), not before, so the browser remembers the last one it saw: the page can name the
 * model (or say how to configure one) and the insights card can offer polishing before the first
 * question of a session. Each answer corrects it when the server's settings changed.
 */
const KEY = 'belfry.assistant.provider';
const listeners = new Set<() => void>();

function read(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function rememberProvider(provider: string): void {
  if (read() === provider) return;
  try {
    localStorage.setItem(KEY, provider);
  } catch {
    // No storage (a private window): the provider is learnt again from the next answer.
  }
  for (const l of listeners) l();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** The provider last seen, or null before any answer named one. */
export function useAssistantProvider(): string | null {
  return useSyncExternalStore(subscribe, read);
}
