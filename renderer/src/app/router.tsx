import { type AnchorHTMLAttributes, type MouseEvent, useSyncExternalStore } from 'react';

/** A small history router: the server falls back to index.html for these paths (server/http/static.ts). */
const subscribers = new Set<() => void>();
window.addEventListener('popstate', () => {
  for (const s of subscribers) s();
});

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const s of subscribers) s();
  window.scrollTo(0, 0);
}

function subscribe(cb: () => void): () => void {
  subscribers.add(cb);
  return () => subscribers.delete(cb);
}

export function useLocation(): { path: string; search: URLSearchParams; hash: string } {
  const href = useSyncExternalStore(subscribe, () => location.pathname + location.search + location.hash);
  const url = new URL(href, location.origin);
  return { path: url.pathname, search: url.searchParams, hash: url.hash };
}

export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={onClick} {...rest} />;
}
