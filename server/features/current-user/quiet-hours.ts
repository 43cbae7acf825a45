import { z } from 'zod';
import type { AppContext } from '../../context';
import { releaseHeld } from '../../delivery/outbox/store';
import { PRIORITY_MAX, PRIORITY_MIN } from '../../lib/limits';
import { getQuietHoursJson, setQuietHoursJson } from '../users/store';

export interface QuietHours {
  enabled: boolean;
  timezone: string;
  start: string;
  end: string;
  days: number[];
  breakthroughPriority: number;
  digest: boolean;
}

/** Spec "Quiet hours": new users have them off, 23:00 to 08:00; the rest is docs/api.md's choice. */
export const DEFAULT_QUIET_HOURS: Readonly<QuietHours> = {
  enabled: false,
  timezone: 'UTC',
  start: '23:00',
  end: '08:00',
  days: [1, 2, 3, 4, 5, 6, 7],
  breakthroughPriority: 8,
  digest: false,
};

function knownTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

export const quietHoursPatch = z
  .object({
    enabled: z.boolean(),
    timezone: z.string().min(1).max(64).refine(knownTimeZone, 'unknown IANA time zone'),
    start: z.string().regex(HHMM, 'expected HH:MM'),
    end: z.string().regex(HHMM, 'expected HH:MM'),
    days: z
      .array(z.number().int().min(1).max(7))
      .max(7)
      .refine((d) => new Set(d).size === d.length, 'days must be distinct'),
    breakthroughPriority: z.number().int().min(PRIORITY_MIN).max(PRIORITY_MAX),
    digest: z.boolean(),
  })
  .partial();

/** The user's quiet hours (defaults where never set); also read by delivery and the tray. */
export function getQuietHours(ctx: AppContext, userId: number): QuietHours {
  const json = getQuietHoursJson(ctx.db, userId);
  if (!json) return { ...DEFAULT_QUIET_HOURS, days: [...DEFAULT_QUIET_HOURS.days] };
  return { ...DEFAULT_QUIET_HOURS, ...(JSON.parse(json) as Partial<QuietHours>) };
}

export function updateQuietHours(
  ctx: AppContext,
  userId: number,
  patch: z.output<typeof quietHoursPatch>,
): QuietHours {
  const defined = Object.fromEntries(
    Object.entries(patch).filter(([, v]) => v !== undefined),
  ) as Partial<QuietHours>;
  const next: QuietHours = { ...getQuietHours(ctx, userId), ...defined };
  next.days = [...next.days].sort((a, b) => a - b);
  const released = ctx.db.transaction(() => {
    setQuietHoursJson(ctx.db, userId, JSON.stringify(next));
    // Re-delivery (issue 15, §6.4): held entries are judged again now; quiet hours off releases them.
    return releaseHeld(ctx.db, userId, ctx.clock.now(), !next.enabled);
  });
  if (released > 0) ctx.due.poke(ctx.clock.now());
  return next;
}
