import { z } from 'zod';
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_CHARS, PLAN_NAMES, type PlanName } from '../../lib/limits';

/** Spec "Limits": 8 characters minimum, 72 bytes maximum (bcrypt's limit). */
export const passwordSchema = z
  .string()
  .min(PASSWORD_MIN_CHARS, `must be at least ${PASSWORD_MIN_CHARS} characters`)
  .refine(
    (p) => Buffer.byteLength(p, 'utf8') <= PASSWORD_MAX_BYTES,
    `must be at most ${PASSWORD_MAX_BYTES} bytes`,
  );

export const emailSchema = z.string().trim().max(254).email('not a valid email address');

export const planSchema = z.enum(PLAN_NAMES as [PlanName, ...PlanName[]]);
