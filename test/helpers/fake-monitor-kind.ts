import type { Feature } from '../../server/features/index';
import {
  type CheckOutcome,
  type MonitorKind,
  registerMonitorKind,
  SECRET_MASK,
} from '../../server/features/monitors/kind';
import { errors } from '../../server/http/errors';

/**
 * A monitor kind whose outcome the test decides (a test double for the engine's tests until the real
 * kinds are on main): `target` names a behaviour; `host` is what the witness sees. A behaviour may hold
 * the check open on a gate (a slow target) and counts the checks in flight per target.
 */
export interface FakeSettings {
  target: string;
  host: string;
  secret: string | null;
}

export interface Behaviour {
  ok: boolean;
  error?: string;
  responseTimeMs?: number;
  /** The check waits for this (a slow target); an abort (timeout) ends it first. */
  gate?: Promise<void>;
}

export interface FakeKind {
  kind: MonitorKind<FakeSettings>;
  feature: Feature;
  set(target: string, b: Behaviour): void;
  /** Checks started per target, and the most that were ever in flight at once. */
  started: Map<string, number>;
  maxInFlight: Map<string, number>;
}

export function fakeMonitorKind(name = 'fake-monitor'): FakeKind {
  const behaviours = new Map<string, Behaviour>();
  const started = new Map<string, number>();
  const inFlight = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  const kind: MonitorKind<FakeSettings> = {
    kind: name,
    defaults: { intervalSec: 60, timeoutSec: 10, timeoutMaxSec: 120 },
    parse(body, prev) {
      const out: FakeSettings = prev ? { ...prev } : { target: '', host: 'localhost', secret: null };
      if (body.target !== undefined) {
        if (typeof body.target !== 'string' || body.target === '')
          throw errors.badRequest('target: must be a string');
        out.target = body.target;
      } else if (!prev) throw errors.badRequest('target: required');
      if (body.host !== undefined) {
        if (typeof body.host !== 'string') throw errors.badRequest('host: must be a string');
        out.host = body.host;
      }
      if (body.secret !== undefined && body.secret !== SECRET_MASK) {
        if (body.secret !== null && typeof body.secret !== 'string')
          throw errors.badRequest('secret: must be a string');
        out.secret = body.secret as string | null;
      }
      return out;
    },
    present: (s) => ({ target: s.target, host: s.host, secret: s.secret === null ? null : SECRET_MASK }),
    target: (s) => `fake://${s.target}`,
    hosts: (s) => [s.host],
    async check(s, _state, io): Promise<CheckOutcome> {
      started.set(s.target, (started.get(s.target) ?? 0) + 1);
      const n = (inFlight.get(s.target) ?? 0) + 1;
      inFlight.set(s.target, n);
      maxInFlight.set(s.target, Math.max(maxInFlight.get(s.target) ?? 0, n));
      try {
        const b = behaviours.get(s.target) ?? { ok: true };
        if (b.gate) {
          await new Promise<void>((resolve, reject) => {
            b.gate!.then(resolve);
            io.signal.addEventListener('abort', () => reject(io.signal.reason));
          });
        }
        return {
          ok: b.ok,
          ...(b.ok ? {} : { error: b.error ?? 'refused' }),
          responseTimeMs: b.responseTimeMs ?? 5,
          details: { target: s.target, test: io.test },
        };
      } finally {
        inFlight.set(s.target, (inFlight.get(s.target) ?? 1) - 1);
      }
    },
  };
  return {
    kind,
    feature: { name: `test-kind-${name}`, init: (ctx) => registerMonitorKind(ctx, kind) },
    set: (target, b) => behaviours.set(target, b),
    started,
    maxInFlight,
  };
}
