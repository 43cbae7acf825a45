import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (TOTP secrets, delivery adapter secrets): AES-256-GCM with a key derived from the
 * install secret (`secret.key`) and a purpose label, so each kind of secret has its own key. The sealed
 * form is `v1.<iv>.<ciphertext>.<tag>` (base64url).
 */
function keyFor(installSecret: Buffer, purpose: string): Buffer {
  return createHmac('sha256', installSecret).update(purpose).digest();
}

export function seal(installSecret: Buffer, purpose: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(installSecret, purpose), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `v1.${iv.toString('base64url')}.${body.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
}

export function unseal(installSecret: Buffer, purpose: string, sealed: string): string {
  const [v, iv, body, tag] = sealed.split('.');
  if (v !== 'v1' || !iv || body === undefined || !tag) throw new Error('unknown sealed secret format');
  const decipher = createDecipheriv(
    'aes-256-gcm',
    keyFor(installSecret, purpose),
    Buffer.from(iv, 'base64url'),
  );
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
