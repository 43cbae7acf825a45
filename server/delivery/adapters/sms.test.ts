import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TWILIO_CONFIG as CONFIG,
  describeHttpErrorClasses,
  sampleItem,
  TWILIO_TOKEN as TOKEN,
  testIo,
  twilioReply,
} from '../../../test/helpers/delivery-io';
import { answerLink, questionItem } from '../../../test/helpers/delivery-question';
import { type FakeHttp, startFakeHttp } from '../../../test/helpers/fake-http';
import { SMS_TEXT_MAX, smsAdapter } from './sms';

const SID = CONFIG.accountSid;

describe('sms adapter (Twilio Messages)', () => {
  let fake: FakeHttp;
  const path = `/2010-04-01/Accounts/${SID}/Messages.json`;
  beforeAll(async () => {
    fake = await startFakeHttp();
    fake.on('POST', path, (req) => twilioReply(req, 'Messages.json'));
  });
  afterAll(() => fake.close());

  it('posts a form with To, From and Body under Basic accountSid:authToken', async () => {
    const item = sampleItem();
    await smsAdapter.send(testIo({ apiUrls: { twilio: fake.url } }), CONFIG, item);
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(path);
    const form = Object.fromEntries(new URLSearchParams(req.body));
    expect(form).toEqual({
      To: '+447700900123',
      From: '+15005550006',
      Body: `[Infra] Disk almost full: ${item.message}\nRead: ${item.links.read}`,
    });
  });

  it('cuts the text to 300 characters before the read link', async () => {
    const item = sampleItem({ message: 'é'.repeat(1000) });
    await smsAdapter.send(testIo({ apiUrls: { twilio: fake.url } }), CONFIG, item);
    const body = new URLSearchParams(fake.requests.at(-1)!.body).get('Body')!;
    const [text, read] = body.split('\nRead: ');
    expect([...text!].length).toBe(300);
    expect(read).toBe(item.links.read);
  });

  it(`a choice question: one "{option}: {answer link}" line per option when they fit in ${SMS_TEXT_MAX} characters, else none`, async () => {
    const io = testIo({ apiUrls: { twilio: fake.url } });
    const item = questionItem({ options: ['yes', 'no'] });
    await smsAdapter.send(io, CONFIG, item);
    const body = new URLSearchParams(fake.requests.at(-1)!.body).get('Body');
    expect(body).toBe(
      `[Infra] Question: Restart db-07 now?\nRead: ${item.links.read}\nyes: ${answerLink('yes')}\nno: ${answerLink('no')}`,
    );
    // Three answer links (about 140 characters each) no longer fit: the SMS stays as without a question.
    await smsAdapter.send(io, CONFIG, questionItem());
    expect(new URLSearchParams(fake.requests.at(-1)!.body).get('Body')).toBe(
      `[Infra] Question: Restart db-07 now?\nRead: ${item.links.read}`,
    );
    await smsAdapter.send(io, CONFIG, questionItem({ type: 'multi', options: ['yes', 'no'] }));
    expect(new URLSearchParams(fake.requests.at(-1)!.body).get('Body')).not.toContain('/a/answer');
  });

  it('a wrong auth token is permanent, with Twilio’s reason and without the token', async () => {
    await expect(
      smsAdapter.send(
        testIo({ apiUrls: { twilio: fake.url } }),
        { ...CONFIG, authToken: 'wrongTwilioToken' },
        sampleItem(),
      ),
    ).rejects.toMatchObject({ retryable: false, message: 'HTTP 401: Authenticate (20003)' });
  });

  describeHttpErrorClasses({
    adapter: smsAdapter,
    target: (base) => ({ config: CONFIG, apiUrls: { twilio: base } }),
    path,
    secrets: [TOKEN],
    permanent: {
      status: 400,
      body: {
        code: 21211,
        message: "The 'To' number +447700900123 is not a valid phone number.",
        status: 400,
      },
      text: "HTTP 400: The 'To' number +447700900123 is not a valid phone number. (21211)",
    },
  });
});
