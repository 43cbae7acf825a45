import { describe, expect, it } from 'vitest';
import {
  decideNotification,
  type IncomingMessage,
  type NotificationContext,
  notificationBody,
} from './os-notifications';

const msg = (over: Partial<IncomingMessage> = {}): IncomingMessage => ({
  id: 1,
  appid: 10,
  title: 'Disk',
  message: 'almost full',
  priority: 5,
  ...over,
});
const noon = new Date('2026-01-05T12:00:00Z');
const night = new Date('2026-01-05T23:30:00Z');
const ctx = (over: Partial<NotificationContext> = {}): NotificationContext => ({
  channelIds: new Set([10, 11]),
  mutedChannelIds: new Set(),
  quietHours: {
    enabled: true,
    timezone: 'UTC',
    start: '23:00',
    end: '08:00',
    days: [],
    breakthroughPriority: 8,
    digest: false,
  },
  pausedUntil: null,
  now: noon,
  ...over,
});

describe('notification decisions', () => {
  it('shows a normal message with sound outside quiet hours', () => {
    expect(decideNotification(msg(), ctx())).toEqual({
      show: true,
      silent: false,
      urgency: 'normal',
      reason: 'normal',
    });
  });
  it('skips channels the user cannot see and channels muted on this device', () => {
    expect(decideNotification(msg({ appid: 99 }), ctx())).toEqual({ show: false, reason: 'not-visible' });
    expect(decideNotification(msg(), ctx({ mutedChannelIds: new Set([10]) }))).toEqual({
      show: false,
      reason: 'muted',
    });
  });
  it('skips a message marked service::silent by a maintenance window, whatever its priority', () => {
    expect(decideNotification(msg({ priority: 10, extras: { 'service::silent': true } }), ctx())).toEqual({
      show: false,
      reason: 'maintenance',
    });
    expect(decideNotification(msg({ extras: { 'service::silent': false } }), ctx()).show).toBe(true);
  });
  it('skips everything while paused from the tray, and shows again after the pause', () => {
    const until = noon.getTime() + 1000;
    expect(decideNotification(msg({ priority: 10 }), ctx({ pausedUntil: until }))).toEqual({
      show: false,
      reason: 'paused',
    });
    expect(decideNotification(msg(), ctx({ pausedUntil: until, now: new Date(until) })).show).toBe(true);
  });
  it('maps priority: 0 never pops up, 1-3 silent, 8-10 critical', () => {
    expect(decideNotification(msg({ priority: 0 }), ctx())).toEqual({ show: false, reason: 'min-priority' });
    expect(decideNotification(msg({ priority: 2 }), ctx())).toMatchObject({
      show: true,
      silent: true,
      urgency: 'low',
    });
    expect(decideNotification(msg({ priority: 9 }), ctx())).toMatchObject({
      show: true,
      silent: false,
      urgency: 'critical',
    });
  });
  it('during quiet hours is silent below the breakthrough priority and normal at or above it', () => {
    expect(decideNotification(msg({ priority: 7 }), ctx({ now: night }))).toEqual({
      show: true,
      silent: true,
      urgency: 'low',
      reason: 'quiet',
    });
    expect(decideNotification(msg({ priority: 8 }), ctx({ now: night }))).toEqual({
      show: true,
      silent: false,
      urgency: 'critical',
      reason: 'breakthrough',
    });
  });
  it('during quiet hours with a digest holds messages below the breakthrough priority', () => {
    const c = ctx({ now: night });
    c.quietHours = { ...c.quietHours!, digest: true };
    expect(decideNotification(msg({ priority: 7 }), c)).toEqual({ show: false, reason: 'quiet-digest' });
    expect(decideNotification(msg({ priority: 8 }), c).show).toBe(true);
  });
  it('ignores quiet hours when they are off or unknown', () => {
    expect(decideNotification(msg(), ctx({ now: night, quietHours: null })).show).toBe(true);
  });
  it('notificationBody strips markdown for client::display text/markdown and caps length', () => {
    const md = msg({
      message: '## Deploy **done**\n[log](https://x.example) ![img](https://x/y.png) `ok`',
      extras: { 'client::display': { contentType: 'text/markdown' } },
    });
    expect(notificationBody(md)).toBe('Deploy done log img ok');
    expect(notificationBody(msg({ message: '**raw**' }))).toBe('**raw**');
    expect(notificationBody(msg({ message: 'x'.repeat(500) }), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});
