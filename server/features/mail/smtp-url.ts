/**
 * Checks BELFRY_SMTP_URL / --smtp-url at start (issue 20): a URL nodemailer can use, smtp: or smtps:.
 * Returns the problem in words, or null. Never repeats the value: it may carry the SMTP password.
 */
export function smtpUrlProblem(value: string): string | null {
  const example =
    'e.g. smtp://user:password@mail.example.com:587 or smtps://user:password@mail.example.com:465';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `--smtp-url / BELFRY_SMTP_URL is not a URL; ${example}`;
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    return `--smtp-url / BELFRY_SMTP_URL must start with smtp:// or smtps://, not ${url.protocol.slice(0, 20)}//; ${example}`;
  if (!url.hostname) return `--smtp-url / BELFRY_SMTP_URL names no host; ${example}`;
  return null;
}
