import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { AppContext } from '../../context';
import { postSystemMessage } from '../messages/service';
import { monitorNet } from './kind';

/** A verdict is reused this long: a hundred failing monitors ask the network once, not a hundred times. */
export const WITNESS_CACHE_MS = 15_000;
/** Each probe gives up after this. */
const PROBE_TIMEOUT_MS = 3_000;

export const OFFLINE_TITLE = 'Belfry is offline';
export const ONLINE_TITLE = 'Belfry is back online';

interface WitnessState {
  online: boolean;
  checkedAt: number | null;
  asking: Promise<boolean> | null;
  /** Users told "offline" in this outage; each gets one "back online" when it ends. */
  told: Set<number>;
}

const states = new WeakMap<AppContext, WitnessState>();

function stateOf(ctx: AppContext): WitnessState {
  let s = states.get(ctx);
  if (!s) {
    s = { online: true, checkedAt: null, asking: null, told: new Set() };
    states.set(ctx, s);
  }
  return s;
}

/** A non-internal interface with an address: without one, no probe can answer. */
function interfaceUp(): boolean {
  return Object.values(networkInterfaces()).some((list) => (list ?? []).some((a) => !a.internal));
}

function probe(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Two independent probes by default (BELFRY_WITNESS_PROBES: 1.1.1.1:443 and 9.9.9.9:443, two anycast
 * networks run by different operators): online when either accepts a TCP connection.
 */
async function probeOnline(ctx: AppContext): Promise<boolean> {
  if (!interfaceUp()) return false;
  const answers = await Promise.all(ctx.config.witnessProbes.map((p) => probe(p.host, p.port)));
  return answers.includes(true);
}

/**
 * Is this machine online? Asked before a failing check of a non-loopback target counts (issue 12's
 * connectivity witness). Cached for WITNESS_CACHE_MS by ctx.clock; concurrent askers share one probe.
 * Tests replace the probes with `monitorNet(ctx).online`.
 */
export async function isOnline(ctx: AppContext): Promise<boolean> {
  const s = stateOf(ctx);
  const now = ctx.clock.now();
  if (s.checkedAt !== null && now - s.checkedAt < WITNESS_CACHE_MS) return s.online;
  if (!s.asking) {
    const ask = monitorNet(ctx).online ?? (() => probeOnline(ctx));
    s.asking = ask()
      .catch(() => false)
      .then((online) => {
        s.checkedAt = ctx.clock.now();
        s.online = online;
        s.asking = null;
        return online;
      });
  }
  return s.asking;
}

/**
 * A check of `userId`'s monitor was not judged because the machine is offline: the first time in this
 * outage, the user gets one "Belfry is offline" notice in their internal channel; never more.
 */
export function offlineSeen(ctx: AppContext, userId: number): void {
  const s = stateOf(ctx);
  s.online = false;
  if (s.told.has(userId)) return;
  s.told.add(userId);
  postSystemMessage(
    ctx,
    userId,
    OFFLINE_TITLE,
    'This machine has no network connection. Monitors of other hosts show "unknown" until it is back; no down alerts are sent meanwhile.',
  );
}

/**
 * A check reached a non-loopback target, or the probes answered: the machine is online. Users told it
 * was offline get one "back online" notice each.
 */
export function onlineSeen(ctx: AppContext): void {
  const s = stateOf(ctx);
  s.online = true;
  s.checkedAt = ctx.clock.now();
  if (s.told.size === 0) return;
  const users = [...s.told];
  s.told.clear();
  for (const userId of users)
    postSystemMessage(
      ctx,
      userId,
      ONLINE_TITLE,
      'The network connection is back; monitors are checked again.',
    );
}
