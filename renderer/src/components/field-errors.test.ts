import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import { fieldErrors, fieldOfError } from './field-errors';

const bad = (message: string, status = 400) => new ApiError(status, { errorDescription: message }, message);
const FIELDS = [
  'name',
  'schedule',
  'schedule.endsAt',
  'schedule.days',
  'channelIds',
  'monitors',
  'brandingHidden',
];

describe('fieldOfError', () => {
  it('names the field of a `<field>: <problem>` answer, the longest listed one first', () => {
    expect(fieldOfError(bad('name: required'), FIELDS)).toEqual({ field: 'name', text: 'name: required' });
    expect(fieldOfError(bad('schedule.endsAt: must be after startsAt'), FIELDS)?.field).toBe(
      'schedule.endsAt',
    );
    expect(fieldOfError(bad('schedule.start: must be HH:MM'), FIELDS)?.field).toBe('schedule');
    expect(fieldOfError(bad('monitors[1]: no such monitor'), FIELDS)?.field).toBe('monitors');
  });

  it('takes a plan answer that starts with the field name only when it is exactly that field', () => {
    const plan = bad('brandingHidden needs the pro or business plan', 403);
    expect(fieldOfError(plan, FIELDS)?.field).toBe('brandingHidden');
    expect(fieldOfError(bad('schedule.days needs something', 403), ['schedule'])).toBeNull();
  });

  it('leaves other errors to the form', () => {
    const limit = bad('plan limit reached: at most 1 maintenance windows on the free plan', 403);
    expect(fieldOfError(limit, FIELDS)).toBeNull();
    expect(fieldOfError(bad('slug: already taken', 409), FIELDS)).toBeNull();
    expect(fieldOfError(new Error('name: required'), FIELDS)).toBeNull();
    const split = fieldErrors(limit, FIELDS);
    expect(split.rest).toBe(limit);
    expect(split.of('name')).toBeNull();
    const named = fieldErrors(bad('channelIds: no such channel 9'), FIELDS);
    expect(named.rest).toBeNull();
    expect(named.of('channelIds')).toBe('channelIds: no such channel 9');
  });
});
