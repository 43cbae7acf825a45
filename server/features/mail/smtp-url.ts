/**
 * Checks BELFRY_SMTP_URL / --smtp-url at start (issue 20): a URL nodemailer can use, smtp: or smtps:.
 * Returns the problem in words, or null (loadConfig adds where the setting comes from: `(set by --smtp-url
 * or BELFRY_SMTP_URL)`). Never repeats the value: it may carry the SMTP password.
 */
export function smtpUrlProblem(value: string): string | null {
  const example =
    'e.g. smtp://user:password@mail.example.com:587 or smtps://user:password@mail.example.com:465';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `not a URL; ${example}`;
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    return `must start with smtp:// or smtps://, not ${url.protocol.slice(0, 20)}//; ${example}`;
  if (!url.hostname) return `names no host; ${example}`;
  return null;
}
