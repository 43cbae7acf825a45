import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeHttpErrorClasses, sampleItem, testIo } from '../../../test/helpers/delivery-io';
import { type FakeHttp, startFakeHttp } from '../../../test/helpers/fake-http';
import { PAGERDUTY_SUMMARY_MAX, pagerdutyAdapter, pagerdutySeverity } from './pagerduty';

const KEY = 'R0123456789abcdef0123456789abcde';

describe('pagerduty adapter', () => {
  let fake: FakeHttp;
  beforeAll(async () => {
    fake = await startFakeHttp();
    fake.on('POST', '/v2/enqueue', (req) => {
      // PagerDuty's own checks: routing_key, event_action, payload.summary ≤ 1024, source and severity.
      const b = req.json() as {
        routing_key?: string;
        event_action?: string;
        payload?: Record<string, string>;
      };
      const p = b.payload ?? {};
      const errors: string[] = [];
      if (b.routing_key?.length !== 32)
        errors.push("Length of 'routing_key' is incorrect (should be 32 characters)");
      if (!['trigger', 'acknowledge', 'resolve'].includes(b.event_action ?? ''))
        errors.push("'event_action' is invalid");
      if (!p.summary || p.summary.length > 1024) errors.push("'payload.summary' is missing or too long");
      if (!p.source) errors.push("'payload.source' is missing");
      if (!['critical', 'error', 'warning', 'info'].includes(p.severity ?? ''))
        errors.push("'payload.severity' is invalid");
      if (errors.length > 0)
        return { status: 400, body: { status: 'invalid event', message: 'Event object is invalid', errors } };
      return { status: 202, body: { status: 'success', message: 'Event processed', dedup_key: 'x' } };
    });
  });
  afterAll(() => fake.close());

  it('enqueues an Events v2 trigger with the routing key, dedup key, severity and links', async () => {
    const item = sampleItem({ priority: 7 });
    await pagerdutyAdapter.send(
      testIo({ apiUrls: { pagerduty: fake.url } }),
      { routingKey: KEY, region: 'us' },
      item,
    );
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/v2/enqueue');
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    expect(req.headers.authorization).toBeUndefined();
    const body = req.json() as Record<string, unknown>;
    expect(body).toMatchObject({
      routing_key: KEY,
      event_action: 'trigger',
      dedup_key: 'belfry-msg-42',
      payload: { summary: `[Infra] Disk almost full: ${item.message}`, source: 'belfry', severity: 'error' },
      client_url: item.links.message,
      links: [
        { href: item.links.message, text: 'Open' },
        { href: item.links.read, text: 'Mark as read' },
      ],
    });
  });

  it('cuts the summary to 1,024 characters and maps priorities to severities', async () => {
    await pagerdutyAdapter.send(
      testIo({ apiUrls: { pagerduty: fake.url } }),
      { routingKey: KEY, region: 'eu' },
      sampleItem({ message: 'x'.repeat(3000) }),
    );
    expect(fake.requests.at(-1)!.path).toBe('/v2/enqueue');
    const summary = (fake.requests.at(-1)!.json() as { payload: { summary: string } }).payload.summary;
    expect(summary.length).toBe(PAGERDUTY_SUMMARY_MAX);
    expect([0, 3, 4, 6, 7, 8, 9, 10].map(pagerdutySeverity)).toEqual([
      'info',
      'info',
      'warning',
      'warning',
      'error',
      'error',
      'critical',
      'critical',
    ]);
  });

  describeHttpErrorClasses({
    adapter: pagerdutyAdapter,
    target: (base) => ({
      config: { routingKey: 'shortRoutingKeySecret', region: 'us' },
      apiUrls: { pagerduty: base },
    }),
    path: '/v2/enqueue',
    secrets: ['shortRoutingKeySecret'],
    permanent: {
      status: 400,
      body: {
        status: 'invalid event',
        message: 'Event object is invalid',
        errors: ["Length of 'routing_key' is incorrect (should be 32 characters)"],
      },
      text: "HTTP 400: Event object is invalid: Length of 'routing_key' is incorrect (should be 32 characters)",
    },
  });
});
