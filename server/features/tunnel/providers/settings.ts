import { z } from 'zod';
import { errors } from '../../../http/errors';

/**
 * What every provider's parse() shares: the settings object validated by a zod schema, a problem named
 * `<provider>.<field>: <problem>` (§0.1), e.g. `ngrok.authtoken: required`.
 */
export function parseSettings<S extends z.ZodType>(provider: string, schema: S, body: unknown): z.output<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw errors.badRequest(`${provider}: must be an object`);
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.length > 0 ? `${provider}.${issue.path.join('.')}` : provider;
  throw errors.badRequest(`${field}: ${issue.message}`);
}

/** A required text setting: `required` when absent or blank, trimmed, at most `max` characters. */
export function requiredText(max = 1_000) {
  return z
    .string({ error: (i) => (i.input === undefined ? 'required' : 'must be a string') })
    .trim()
    .min(1, 'required')
    .max(max, `at most ${max} characters`);
}

/** An optional text setting: absent, null or blank is "not set" (undefined). */
export function optionalText(max = 1_000) {
  return z
    .string({ error: 'must be a string' })
    .trim()
    .max(max, `at most ${max} characters`)
    .nullish()
    .transform((v) => (v ? v : undefined));
}

/** A DNS host name (no scheme, no path, no port), lower-cased. */
export function hostName() {
  return z
    .string({ error: (i) => (i.input === undefined ? 'required' : 'must be a string') })
    .trim()
    .toLowerCase()
    .regex(
      /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/,
      'must be a host name, e.g. belfry.example.com',
    );
}

/** Removes every secret value from a text shown to the user (an error from a library or a child process). */
export function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('********');
  return out;
}
