import { randomInt } from 'node:crypto';
import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import type { AppContext, RequestMeta } from '../../context';
import { errors } from '../../http/errors';
import { tokenDigest } from '../../lib/tokens';
import { createDevice, type NewDevice } from '../devices/service';
import { findUserById } from '../users/store';

/** A pairing code lives five minutes and works once (Belfry extension, docs/api.md "Pairing a device"). */
export const PAIRING_TTL_MS = 300_000;
/** Outstanding codes per user; the oldest is dropped beyond this. */
export const PAIRING_MAX_PER_USER = 5;
export const PAIRING_CODE_LENGTH = 22;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

interface PendingPairing {
  id: number;
  userId: number;
  digest: string;
  expiresAt: number;
  claimed?: { deviceId: number; deviceName: string };
}

/**
 * Pairings are kept in memory only: they live minutes, and a restart simply invalidates them (the
 * journal never sees a code). Only a digest of the code is kept.
 */
export class PairingStore {
  private readonly byId = new Map<number, PendingPairing>();
  private nextId = 1;

  constructor(private readonly ctx: AppContext) {}

  private purge(now: number): void {
    // Claimed entries stay until expiry so the showing screen can see "claimed".
    for (const [id, p] of this.byId) if (p.expiresAt <= now) this.byId.delete(id);
  }

  create(userId: number): { id: number; code: string; expiresAt: number } {
    const now = this.ctx.clock.now();
    this.purge(now);
    const mine = [...this.byId.values()].filter((p) => p.userId === userId && !p.claimed);
    while (mine.length >= PAIRING_MAX_PER_USER) this.byId.delete(mine.shift()!.id);
    let code = '';
    for (let i = 0; i < PAIRING_CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
    const entry: PendingPairing = {
      id: this.nextId++,
      userId,
      digest: tokenDigest(code),
      expiresAt: now + PAIRING_TTL_MS,
    };
    this.byId.set(entry.id, entry);
    return { id: entry.id, code, expiresAt: entry.expiresAt };
  }

  status(
    userId: number,
    id: number,
  ): { id: number; status: 'pending' | 'claimed' | 'expired'; deviceId?: number; deviceName?: string } {
    const p = this.byId.get(id);
    if (!p || p.userId !== userId) throw errors.notFound('pairing');
    if (p.claimed) return { id, status: 'claimed', ...p.claimed };
    if (p.expiresAt <= this.ctx.clock.now()) return { id, status: 'expired' };
    return { id, status: 'pending' };
  }

  /** Claims a code once: a new device for the code's user. Unknown, used or expired codes: 404. */
  claim(
    code: string,
    input: { name: string; platform?: string },
    meta: RequestMeta,
  ): NewDevice & { userId: number } {
    const now = this.ctx.clock.now();
    this.purge(now);
    const digest = tokenDigest(code);
    const p = [...this.byId.values()].find((x) => x.digest === digest && !x.claimed);
    if (!p) throw errors.notFound('pairing code');
    const user = findUserById(this.ctx.db, p.userId);
    if (!user) throw errors.notFound('pairing code');
    const created = createDevice(this.ctx, user, input, meta, 'reject');
    p.claimed = { deviceId: created.row.id, deviceName: created.row.name };
    return { ...created, userId: user.id };
  }
}

/**
 * Where a phone can reach this server: with a wildcard bind, every external IPv4 address; with a
 * specific address, that one; with loopback only, the public URL (reachable only when it is a tunnel or
 * a configured address, so `lan` says whether a phone can use it).
 */
export function pairingUrls(
  ctx: AppContext,
  port: number,
  interfaces: () => NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces,
): { urls: string[]; lan: boolean } {
  const host = ctx.config.host;
  const configured = ctx.config.publicUrl ? [ctx.config.publicUrl.replace(/\/+$/, '')] : [];
  if (host === '0.0.0.0' || host === '::') {
    const lan: string[] = [];
    for (const list of Object.values(interfaces()))
      for (const i of list ?? [])
        if (!i.internal && i.family === 'IPv4') lan.push(`http://${i.address}:${port}`);
    return { urls: [...configured, ...lan], lan: configured.length + lan.length > 0 };
  }
  const loopback = host === 'localhost' || host === '::1' || host.startsWith('127.');
  if (!loopback)
    return { urls: [...configured, `http://${host.includes(':') ? `[${host}]` : host}:${port}`], lan: true };
  return configured.length ? { urls: configured, lan: true } : { urls: [ctx.publicUrl()], lan: false };
}
