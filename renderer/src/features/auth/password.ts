/** The server's password rule (server/lib/limits.ts): 8 characters or more, at most 72 bytes. */
export const PASSWORD_HINT = '8 characters or more';

/** Why a new password (typed twice) would be refused, or null when it is fine. */
export function newPasswordProblem(pass: string, again: string): string | null {
  if (pass !== again) return 'The new passwords differ.';
  if (pass.length < 8) return 'The new password needs at least 8 characters.';
  if (new TextEncoder().encode(pass).length > 72) return 'The new password is longer than 72 bytes.';
  return null;
}
