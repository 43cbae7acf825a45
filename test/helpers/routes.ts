import type { TestServer } from './test-server';

/** A route a family mounted, for the sweeps that call every route. */
export interface MountedRoute {
  /** `METHOD /express/path`, as the route inventory names it. */
  route: string;
  method: string;
  path: string;
  /** Whether the path takes a parameter (`:id`, `:token`, …). */
  takesParams: boolean;
  /** The path with each `:name` replaced by `value(':name')` and each wildcard by `a/b`. */
  fill(value: (param: string) => string): string;
}

/** Every route the server mounted, sorted, except the WebSocket upgrade (ws.test.ts covers its refusals). */
export function mountedRoutes(t: TestServer): MountedRoute[] {
  return [...t.server.mounted]
    .sort()
    .map((route): MountedRoute => {
      const [method, path] = route.split(' ') as [string, string];
      return {
        route,
        method,
        path,
        takesParams: /:\w+/.test(path),
        fill: (value) => path.replace(/\*\w+/g, 'a/b').replace(/:\w+/g, value),
      };
    })
    .filter((r) => r.path !== '/ws');
}
