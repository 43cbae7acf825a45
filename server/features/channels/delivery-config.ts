import type { DeliveryAdapter } from '../../delivery/adapter';
import { adapterNamed, adapterNames } from '../../delivery/registry';
import { errors } from '../../http/errors';
import { seal, unseal } from '../../lib/seal';

/**
 * `deliveryConfig` of a channel: one validated settings object per re-delivery adapter (spec "Channel";
 * conventions habit 10: kinds behind one registry). Each adapter's schema, secret fields and user-chosen
 * URL come from server/delivery/registry.ts. Secrets are masked in output; the mask sent back in an
 * update keeps the stored secret. Stored secrets are sealed (AES-256-GCM, server/lib/seal.ts).
 */
export const SECRET_MASK = '********';

/** What masking, keeping and sealing need of an adapter (`url`: see DeliveryAdapter). */
type AdapterConfig = Pick<DeliveryAdapter, 'schema' | 'secrets' | 'secretMaps' | 'url'>;

export type DeliveryConfig = Record<string, Record<string, unknown>>;

/** The real adapter's settings (never a test override's: they share the real schema anyway). */
function adapterOf(name: string): AdapterConfig | undefined {
  return adapterNamed(null, name);
}

type Plain = Record<string, unknown>;

function isPlain(v: unknown): v is Plain {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Keys that would reach an object's prototype when used as a lookup or an assignment. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const NESTING_MAX = 8;

/** 400 for a prototype key anywhere in a user object (and for nesting deeper than any adapter needs). */
function rejectPrototypeKeys(value: unknown, path: string, depth = 0): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth > NESTING_MAX) throw errors.badRequest(`${path}: nested too deeply`);
  for (const [key, inner] of Object.entries(value)) {
    if (PROTOTYPE_KEYS.has(key)) throw errors.badRequest(`${path}.${key}: reserved name`);
    rejectPrototypeKeys(inner, `${path}.${key}`, depth + 1);
  }
}

/** Query parameters whose names look like they carry a credential. */
const SECRET_PARAM_RE = /token|key|secret|sig|pass|pwd|auth|credential|session|code/i;

/** A URL with its credentials and secret-looking query values masked (itself when it has none). */
export function maskUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return SECRET_MASK;
  }
  let masked = false;
  if (url.username) {
    url.username = SECRET_MASK;
    masked = true;
  }
  if (url.password) {
    url.password = SECRET_MASK;
    masked = true;
  }
  for (const name of new Set(url.searchParams.keys()))
    if (SECRET_PARAM_RE.test(name)) {
      url.searchParams.set(name, SECRET_MASK);
      masked = true;
    }
  return masked ? url.toString() : raw;
}

/** Puts the stored secrets back where an update sent the mask (docs/api.md "deliveryConfig"). */
function keepMaskedSecrets(
  name: string,
  adapter: AdapterConfig,
  raw: Plain,
  stored: Plain | undefined,
): Plain {
  const path = `deliveryConfig.${name}`;
  const copy: Plain = { ...raw };
  let kept = false;
  for (const key of adapter.secrets) {
    if (copy[key] !== SECRET_MASK) continue;
    if (stored?.[key] === undefined) throw errors.badRequest(`${path}.${key}: no stored secret to keep`);
    copy[key] = stored[key];
    kept = true;
  }
  for (const key of adapter.secretMaps ?? []) {
    const map = copy[key];
    if (!isPlain(map)) continue;
    const storedMap = isPlain(stored?.[key]) ? (stored[key] as Plain) : {};
    const out: Plain = { ...map };
    for (const [k, v] of Object.entries(map)) {
      if (v !== SECRET_MASK) continue;
      if (!Object.hasOwn(storedMap, k))
        throw errors.badRequest(`${path}.${key}.${k}: no stored secret to keep`);
      out[k] = storedMap[k];
      kept = true;
    }
    copy[key] = out;
  }
  if (adapter.url) {
    const url = copy[adapter.url];
    const storedUrl = stored?.[adapter.url];
    if (typeof url === 'string' && url.includes(SECRET_MASK)) {
      if (typeof storedUrl !== 'string' || url !== maskUrl(storedUrl))
        throw errors.badRequest(
          `${path}.${adapter.url}: masked credentials of another URL; enter them again`,
        );
      copy[adapter.url] = storedUrl;
    } else if (kept && url !== storedUrl)
      throw errors.badRequest(`${path}: the url changed; enter its secrets again instead of the mask`);
  }
  return copy;
}

/**
 * Validates an incoming deliveryConfig. A secret equal to the mask keeps the stored value (so a client
 * can send back what it read); a mask with nothing stored is a 400.
 */
export function validateDeliveryConfig(input: unknown, stored: DeliveryConfig = {}): DeliveryConfig {
  if (!isPlain(input)) throw errors.badRequest('deliveryConfig: expected an object');
  rejectPrototypeKeys(input, 'deliveryConfig');
  const out: DeliveryConfig = {};
  for (const [name, raw] of Object.entries(input)) {
    const adapter = adapterOf(name);
    if (!adapter)
      throw errors.badRequest(
        `deliveryConfig.${name}: unknown adapter (known: ${adapterNames().join(', ')})`,
      );
    const value = isPlain(raw) ? keepMaskedSecrets(name, adapter, raw, stored[name]) : raw;
    const parsed = adapter.schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const path = ['deliveryConfig', name, ...issue.path.map(String)].join('.');
      throw errors.badRequest(`${path}: ${issue.message}`);
    }
    out[name] = parsed.data;
  }
  return out;
}

/** For output: every secret replaced by the mask. */
export function maskDeliveryConfig(config: DeliveryConfig): DeliveryConfig {
  const out: DeliveryConfig = {};
  for (const [name, value] of Object.entries(config)) {
    const adapter = adapterOf(name);
    const copy = { ...value };
    for (const key of adapter?.secrets ?? []) if (copy[key] !== undefined) copy[key] = SECRET_MASK;
    for (const key of adapter?.secretMaps ?? []) {
      const map = copy[key];
      if (isPlain(map)) copy[key] = Object.fromEntries(Object.keys(map).map((k) => [k, SECRET_MASK]));
    }
    if (adapter?.url && typeof copy[adapter.url] === 'string')
      copy[adapter.url] = maskUrl(copy[adapter.url] as string);
    out[name] = copy;
  }
  return out;
}

// --- at rest ---------------------------------------------------------------------------------------

const SEAL_PURPOSE = 'belfry:delivery-secret';
/** The stored adapter object keeps its secret fields, as JSON, sealed under this key. */
const SEALED_FIELD = '$sealed';

function secretFields(adapter: AdapterConfig | undefined): string[] {
  if (!adapter) return [];
  return [...adapter.secrets, ...(adapter.secretMaps ?? []), ...(adapter.url ? [adapter.url] : [])];
}

/** The stored form: every adapter's secret fields sealed into one `$sealed` field. */
export function sealDeliveryConfig(installSecret: Buffer, config: DeliveryConfig): DeliveryConfig {
  const out: DeliveryConfig = {};
  for (const [name, value] of Object.entries(config)) {
    const fields = secretFields(adapterOf(name));
    const clear: Plain = {};
    const hidden: Plain = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === SEALED_FIELD) continue;
      if (fields.includes(k)) hidden[k] = v;
      else clear[k] = v;
    }
    if (Object.keys(hidden).length > 0)
      clear[SEALED_FIELD] = seal(installSecret, SEAL_PURPOSE, JSON.stringify(hidden));
    out[name] = clear;
  }
  return out;
}

/** Whether a stored config still holds a secret in clear (a row written before sealing existed). */
export function hasUnsealedSecrets(stored: DeliveryConfig): boolean {
  return Object.entries(stored).some(([name, value]) =>
    secretFields(adapterOf(name)).some((k) => value[k] !== undefined),
  );
}

/**
 * The stored column back in clear. Rows from before sealing are read as they are. A secret that cannot be
 * unsealed (secret.key replaced) reads as absent, so the channel stays usable and the secret can be
 * entered again.
 */
export function openDeliveryConfig(installSecret: Buffer, column: string): DeliveryConfig {
  const stored = JSON.parse(column) as DeliveryConfig;
  const out: DeliveryConfig = {};
  for (const [name, value] of Object.entries(stored)) {
    const { [SEALED_FIELD]: sealed, ...rest } = value;
    if (typeof sealed === 'string') {
      try {
        Object.assign(rest, JSON.parse(unseal(installSecret, SEAL_PURPOSE, sealed)) as Plain);
      } catch {
        // Left out: see above.
      }
    }
    out[name] = rest;
  }
  return out;
}

export function enabledAdapters(config: DeliveryConfig): string[] {
  return Object.entries(config)
    .filter(([, v]) => v.enabled !== false)
    .map(([k]) => k);
}
