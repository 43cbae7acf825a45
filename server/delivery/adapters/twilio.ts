import { z } from 'zod';
import type { SendIo } from '../adapter';
import { deliveryPost } from '../http';
import { apiBase, commonFields, secretString } from './common';

const phone = z.string().regex(/^\+?[0-9]{6,16}$/, 'expected a phone number');

/** SMS and call settings (Twilio; docs/api.md "deliveryConfig"). */
export const twilioSchema = z.strictObject({
  ...commonFields,
  provider: z.literal('twilio').default('twilio'),
  accountSid: z.string().min(1).max(100),
  authToken: secretString,
  from: phone,
  to: phone,
});

/**
 * POST `{base}/2010-04-01/Accounts/{sid}/{resource}` form-encoded with Basic `accountSid:authToken`
 * (Twilio REST; 201 on success).
 */
export async function twilioPost(
  io: SendIo,
  config: Record<string, unknown>,
  resource: 'Messages.json' | 'Calls.json',
  form: Record<string, string>,
): Promise<void> {
  const sid = config.accountSid as string;
  const token = config.authToken as string;
  const base = apiBase(io.ctx, 'twilio', 'https://api.twilio.com');
  await deliveryPost(io, {
    url: `${base}/2010-04-01/Accounts/${encodeURIComponent(sid)}/${resource}`,
    form: { To: config.to as string, From: config.from as string, ...form },
    basicAuth: { username: sid, password: token },
    secrets: [token],
  });
}
