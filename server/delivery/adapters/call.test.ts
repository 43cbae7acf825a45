import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TWILIO_CONFIG as CONFIG,
  describeHttpErrorClasses,
  sampleItem,
  TWILIO_TOKEN as TOKEN,
  testIo,
  twilioReply,
} from '../../../test/helpers/delivery-io';
import { type FakeHttp, startFakeHttp } from '../../../test/helpers/fake-http';
import { callAdapter } from './call';

const SID = CONFIG.accountSid;

describe('call adapter (Twilio Calls)', () => {
  let fake: FakeHttp;
  const path = `/2010-04-01/Accounts/${SID}/Calls.json`;
  beforeAll(async () => {
    fake = await startFakeHttp();
    fake.on('POST', path, (req) => twilioReply(req, 'Calls.json'));
  });
  afterAll(() => fake.close());

  it('places a call with inline TwiML <Say loop="2">, XML-escaped and ≤ 500 characters', async () => {
    await callAdapter.send(
      testIo({ apiUrls: { twilio: fake.url } }),
      CONFIG,
      sampleItem({ title: 'CPU <high> & hot', message: 'x'.repeat(800) }),
    );
    const req = fake.requests.at(-1)!;
    expect(req.path).toBe(path);
    const form = Object.fromEntries(new URLSearchParams(req.body));
    expect(form.To).toBe('+447700900123');
    expect(form.From).toBe('+15005550006');
    const m = /^<Response><Say loop="2">(.*)<\/Say><\/Response>$/.exec(form.Twiml!);
    expect(m).not.toBeNull();
    expect(m![1]!.startsWith('Infra. CPU &lt;high&gt; &amp; hot. xxx')).toBe(true);
    const spoken = m![1]!.replace(/&lt;|&gt;|&amp;/g, '_');
    expect([...spoken].length).toBe(500);
  });

  describeHttpErrorClasses({
    adapter: callAdapter,
    target: (base) => ({ config: CONFIG, apiUrls: { twilio: base } }),
    path,
    secrets: [TOKEN],
    permanent: {
      status: 400,
      body: { code: 21215, message: 'Account not authorized to call +447700900123.', status: 400 },
      text: 'HTTP 400: Account not authorized to call +447700900123. (21215)',
    },
  });
});
