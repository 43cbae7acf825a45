import { hash, randomBytes } from 'node:crypto';

/** Token prefixes of the spec ("Token kinds"). M is both the API token and the metric-source token. */
export type TokenPrefix = 'A' | 'S' | 'M' | 'C' | 'H' | 'R' | 'T' | 'W';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const TOKEN_BODY_LENGTH = 22;
export const TOKEN_LENGTH = TOKEN_BODY_LENGTH + 1;

/** prefix + 22 characters of [A-Za-z0-9] from the CSPRNG, without modulo bias (rejection sampling). */
export function generateToken(prefix: TokenPrefix): string {
  let out = prefix;
  while (out.length < TOKEN_LENGTH) {
    for (const b of randomBytes(32)) {
      if (b >= 248) continue; // 248 = 62 * 4: keeps every character equally likely
      out += ALPHABET[b % 62];
      if (out.length === TOKEN_LENGTH) break;
    }
  }
  return out;
}

/**
 * What the store keeps instead of the token. One-shot `crypto.hash` (Node >= 20.12): every
 * authenticated request hashes its token, and building a Hash object for it cost ~3× as much.
 */
export function tokenDigest(token: string): string {
  return hash('sha256', token, 'hex');
}

/** A masked form for lists: same length, first three and last four characters visible. */
export function tokenHint(token: string): string {
  if (token.length <= 7) return '*'.repeat(token.length);
  return `${token.slice(0, 3)}${'*'.repeat(token.length - 7)}${token.slice(-4)}`;
}

export function tokenPrefix(token: string): TokenPrefix | null {
  if (token.length !== TOKEN_LENGTH) return null;
  const p = token[0];
  return p === 'A' || p === 'S' || p === 'M' || p === 'C' || p === 'H' || p === 'R' || p === 'T' || p === 'W'
    ? p
    : null;
}

/** A fresh token with its digest and hint, as stores want it. */
export function issueToken(prefix: TokenPrefix): { token: string; digest: string; hint: string } {
  const token = generateToken(prefix);
  return { token, digest: tokenDigest(token), hint: tokenHint(token) };
}
