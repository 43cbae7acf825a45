import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiToken, deviceToken, insertChannelKeyRow, makeChannel, makeUser } from '../helpers/factories';
import { startTestServer, type TestServer } from '../helpers/test-server';
import {
  addRule,
  events,
  inboxUser,
  ok,
  RawSmtp,
  sendMail,
  sendRaw,
  smtpPort,
} from './email-inboxes-helpers';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ config: { smtpListen: '127.0.0.1:0' } });
});
afterAll(async () => {
  await t?.close();
});

const iso = () => new Date(t.clock.now()).toISOString();

describe('inbox records', () => {
  it('POST /email-inbox creates an inbox with a generated 12-character local part on the public URL host (localhost for an IP)', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const ch = await makeChannel(t, d.token);
    const box = ok(
      await t.request('POST', '/email-inbox', {
        token: d.token,
        json: { appid: ch.id, name: '  Billing  ' },
      }),
      'create',
    );
    expect(box).toEqual({
      id: expect.any(Number),
      appid: ch.id,
      name: 'Billing',
      paused: false,
      status: 'pending',
      lastCheckAt: null,
      createdAt: iso(),
      localPart: expect.stringMatching(/^[a-z0-9]{12}$/),
      address: `${box.localPart}@localhost`,
      priority: null,
    });
    expect(ok(await t.request('GET', `/email-inbox/${box.id}`, { token: d.token }), 'get')).toEqual(box);
    expect(ok(await t.request('GET', '/email-inbox', { token: d.token }), 'list')).toEqual([box]);
    expect(
      ok(await t.request('GET', `/email-inbox?appid=${ch.id + 1000}`, { token: d.token }), 'filtered'),
    ).toEqual([]);
  });

  it('localPart is lowercased and pattern-checked; a taken one is 409 localPart: already taken (also on PUT)', async () => {
    const u = await inboxUser(t, { localPart: `Ops.Alerts_${Date.now()}` });
    expect(u.inbox.localPart).toBe(`ops.alerts_${u.inbox.localPart.split('_')[1]}`);
    const post = (json: Record<string, unknown>) =>
      t.request('POST', '/email-inbox', {
        token: u.device.token,
        json: { appid: u.channel.id, name: 'x', ...json },
      });
    const taken = await post({ localPart: u.inbox.localPart.toUpperCase() });
    expect([taken.status, taken.body]).toEqual([
      409,
      { error: 'Conflict', errorCode: 409, errorDescription: 'localPart: already taken' },
    ]);
    for (const bad of ['-lead', '.lead', 'has space', 'ü-mail', 'a@b', '', 'x'.repeat(65)])
      expect((await post({ localPart: bad })).body.errorDescription).toMatch(/^localPart: /);
    const other = ok(await post({ localPart: 'z'.repeat(64) }), 'max');
    const put = await t.request('PUT', `/email-inbox/${other.id}`, {
      token: u.device.token,
      json: { localPart: u.inbox.localPart },
    });
    expect(put.status).toBe(409);
    // Someone else's local part is taken too: addresses are global.
    const v = makeUser(t);
    const dv = await deviceToken(t, v);
    const cv = await makeChannel(t, dv.token);
    const theirs = await t.request('POST', '/email-inbox', {
      token: dv.token,
      json: { appid: cv.id, name: 'mine', localPart: u.inbox.localPart },
    });
    expect(theirs.status).toBe(409);
  });

  it('PUT changes name, priority, localPart and pauses; null clears priority; DELETE answers {} and frees the address', async () => {
    const u = await inboxUser(t, { priority: 7 });
    const tok = u.device.token;
    const local = `renamed-${u.user.id}`;
    const put = (json: unknown) => t.request('PUT', `/email-inbox/${u.inbox.id}`, { token: tok, json });
    const changed = ok(await put({ name: 'Renamed', localPart: local, paused: true }), 'put');
    expect(changed).toMatchObject({
      name: 'Renamed',
      localPart: local,
      address: `${local}@localhost`,
      priority: 7,
      paused: true,
      status: 'paused',
    });
    expect(ok(await put({ priority: null }), 'clear').priority).toBeNull();
    expect((await put({ priority: 11 })).body.errorDescription).toMatch(/^priority: /);
    expect((await put({ appid: 999_999 })).body.errorDescription).toBe('appid: no such channel');
    expect(ok(await t.request('DELETE', `/email-inbox/${u.inbox.id}`, { token: tok }), 'delete')).toEqual({});
    expect((await t.request('GET', `/email-inbox/${u.inbox.id}`, { token: tok })).status).toBe(404);
    const again = ok(
      await t.request('POST', '/email-inbox', {
        token: tok,
        json: { appid: u.channel.id, name: 'n', localPart: local },
      }),
      'reuse',
    );
    expect(again.localPart).toBe(local);
  });

  it('create refuses missing fields, unknown channels and the system channel with the catalog errors', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const post = (json: unknown) => t.request('POST', '/email-inbox', { token: d.token, json });
    expect((await post({ name: 'x' })).body.errorDescription).toBe('appid: required');
    const ch = await makeChannel(t, d.token);
    expect((await post({ appid: ch.id })).body.errorDescription).toBe('name: required');
    expect((await post({ appid: ch.id, name: '   ' })).body.errorDescription).toMatch(/^name: /);
    expect((await post({ appid: 999_999, name: 'x' })).body.errorDescription).toBe('appid: no such channel');
    const channels = ok(await t.request('GET', '/application', { token: d.token }), 'channels');
    const internal = channels.find((c: { internal?: boolean }) => c.internal);
    if (internal) expect((await post({ appid: internal.id, name: 'x' })).status).toBe(403);
  });

  it('at most 100 inboxes per user: the 101st is 403 limit reached', async () => {
    const u = makeUser(t);
    const d = await deviceToken(t, u);
    const ch = await makeChannel(t, d.token);
    const ctx = t.server.ctx;
    ctx.db.transaction(() => {
      for (let i = 0; i < 100; i++)
        ctx.db.run(
          `INSERT INTO email_inboxes (user_id, channel_id, name, local_part, status, status_since, created_at)
           VALUES (?, ?, 'bulk', ?, 'pending', 0, 0)`,
          [u.id, ch.id, `bulk-${u.id}-${i}`],
        );
    });
    const res = await t.request('POST', '/email-inbox', {
      token: d.token,
      json: { appid: ch.id, name: 'one more' },
    });
    expect([res.status, res.body.errorDescription]).toEqual([
      403,
      'limit reached: at most 100 email inboxes per user',
    ]);
  });

  it("someone else's inbox, rules and events are 404; channel keys 403; a scoped API token sees only its channels", async () => {
    const a = await inboxUser(t);
    await sendMail(t, { from: 'x@y.example', to: a.inbox.address, subject: 's', text: 't' });
    const [ev] = await events(t, a.device.token, a.inbox.id);
    const rule = await addRule(t, a.device.token, a.inbox.id, { name: 'r' });
    const b = await inboxUser(t);
    const tok = b.device.token;
    for (const [method, path] of [
      ['GET', `/email-inbox/${a.inbox.id}`],
      ['PUT', `/email-inbox/${a.inbox.id}`],
      ['DELETE', `/email-inbox/${a.inbox.id}`],
      ['GET', `/email-inbox/${a.inbox.id}/rules`],
      ['POST', `/email-inbox/${a.inbox.id}/rules`],
      ['PUT', `/email-inbox/${a.inbox.id}/rules/${rule.id}`],
      ['DELETE', `/email-inbox/${a.inbox.id}/rules/${rule.id}`],
      ['PUT', `/email-inbox/${b.inbox.id}/rules/${rule.id}`],
      ['GET', `/email-inbox/event/${ev.id}`],
      ['DELETE', `/email-inbox/event/${ev.id}`],
      ['POST', `/email-inbox/rule/from-event/${ev.id}`],
      ['GET', `/email-inbox/event?inboxId=${a.inbox.id}`],
    ] as const) {
      const res = await t.request(method, path, method === 'GET' ? { token: tok } : { token: tok, json: {} });
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    expect(await events(t, tok)).toEqual([]);
    const key = insertChannelKeyRow(t, a.channel.id, { canRead: true });
    expect((await t.request('GET', '/email-inbox', { token: key })).status).toBe(403);
    const other = await makeChannel(t, a.device.token);
    const scoped = await apiToken(t, a.device, { appIds: [other.id] });
    expect(ok(await t.request('GET', '/email-inbox', { token: scoped.token }), 'scoped')).toEqual([]);
    expect((await t.request('GET', `/email-inbox/${a.inbox.id}`, { token: scoped.token })).status).toBe(404);
    expect(await events(t, scoped.token)).toEqual([]);
    // A token scoped to the inbox's channel sees its events, and only those (an inbox on another channel
    // of the same user stays out).
    const elsewhere = ok(
      await t.request('POST', '/email-inbox', {
        token: a.device.token,
        json: { appid: other.id, name: 'other' },
      }),
      'elsewhere',
    );
    await sendMail(t, { from: 'x@y.example', to: elsewhere.address, subject: 'other channel', text: 't' });
    const inScope = await apiToken(t, a.device, { appIds: [a.channel.id] });
    expect((await events(t, inScope.token)).map((e) => e.id)).toEqual([ev.id]);
    expect((await events(t, a.device.token)).map((e) => e.subject)).toEqual(['other channel', 's']);
    const created = await t.request('POST', '/email-inbox', {
      token: scoped.token,
      json: { appid: a.channel.id, name: 'out of scope' },
    });
    expect(created.body.errorDescription).toBe('appid: no such channel');
    const read = await apiToken(t, a.device, { access: 'read' });
    expect((await t.request('GET', `/email-inbox/${a.inbox.id}`, { token: read.token })).status).toBe(200);
    expect((await t.request('DELETE', `/email-inbox/${a.inbox.id}`, { token: read.token })).status).toBe(403);
  });

  it('the inbox is an event source of its channel and goes with it', async () => {
    const u = await inboxUser(t);
    const sources = ok(
      await t.request('GET', `/application/${u.channel.id}/event-sources`, { token: u.device.token }),
      'sources',
    );
    expect(sources.sources).toContainEqual({
      kind: 'email-inbox',
      id: u.inbox.id,
      name: 'Alerts inbox',
      appid: u.channel.id,
      status: 'pending',
      paused: false,
      lastCheckAt: null,
    });
    ok(
      await t.request('DELETE', `/application/${u.channel.id}`, { token: u.device.token }),
      'delete channel',
    );
    expect((await t.request('GET', `/email-inbox/${u.inbox.id}`, { token: u.device.token })).status).toBe(
      404,
    );
  });
});

describe('rules', () => {
  it('POST /email-inbox/{id}/rules adds rules last; position inserts and PUT reorders; DELETE renumbers', async () => {
    const u = await inboxUser(t);
    const tok = u.device.token;
    const a = await addRule(t, tok, u.inbox.id, { name: 'a', match: { from: '@github.com' } });
    expect(a).toEqual({
      id: expect.any(Number),
      inboxId: u.inbox.id,
      name: 'a',
      match: { from: '@github.com' },
      action: 'message',
      title: null,
      priority: null,
      position: 1,
      createdAt: iso(),
    });
    const b = await addRule(t, tok, u.inbox.id, {
      name: 'b',
      action: 'drop',
      match: { subject: '/^\\[spam\\]/i' },
    });
    const c = await addRule(t, tok, u.inbox.id, { name: 'c', position: 1, title: '{{from}}: {{subject}}' });
    const order = async () =>
      ok(await t.request('GET', `/email-inbox/${u.inbox.id}/rules`, { token: tok }), 'rules').map(
        (r: { name: string; position: number }) => `${r.position}:${r.name}`,
      );
    expect(await order()).toEqual(['1:c', '2:a', '3:b']);
    ok(
      await t.request('PUT', `/email-inbox/${u.inbox.id}/rules/${b.id}`, {
        token: tok,
        json: { position: 1 },
      }),
      'move',
    );
    expect(await order()).toEqual(['1:b', '2:c', '3:a']);
    ok(
      await t.request('PUT', `/email-inbox/${u.inbox.id}/rules/${b.id}`, {
        token: tok,
        json: { position: 99 },
      }),
      'end',
    );
    expect(await order()).toEqual(['1:c', '2:a', '3:b']);
    const changed = ok(
      await t.request('PUT', `/email-inbox/${u.inbox.id}/rules/${a.id}`, {
        token: tok,
        json: { match: { body: 'disk' }, title: null, priority: 3 },
      }),
      'change',
    );
    expect([changed.match, changed.title, changed.priority, changed.name]).toEqual([
      { body: 'disk' },
      null,
      3,
      'a',
    ]);
    ok(await t.request('DELETE', `/email-inbox/${u.inbox.id}/rules/${c.id}`, { token: tok }), 'delete');
    expect(await order()).toEqual(['1:a', '2:b']);
  });

  it('rule bodies are validated: patterns, action, title length, priority', async () => {
    const u = await inboxUser(t);
    const post = (json: unknown) =>
      t.request('POST', `/email-inbox/${u.inbox.id}/rules`, { token: u.device.token, json });
    expect((await post({ match: { subject: '/(unclosed/' } })).body.errorDescription).toBe(
      'match.subject: not a valid regular expression',
    );
    expect((await post({ match: { from: 5 } })).body.errorDescription).toBe('match.from: must be a string');
    expect((await post({ match: { body: '' } })).body.errorDescription).toMatch(/^match\.body: /);
    expect((await post({ match: [] })).body.errorDescription).toMatch(/^match: /);
    expect((await post({ action: 'forward' })).body.errorDescription).toMatch(/^action: /);
    expect((await post({ title: 'x'.repeat(1_001) })).body.errorDescription).toMatch(/^title: /);
    expect((await post({ priority: -1 })).body.errorDescription).toMatch(/^priority: /);
    expect((await post({ position: 0 })).body.errorDescription).toMatch(/^position: /);
    // Unknown match keys are ignored (§0.1).
    expect(ok(await post({ match: { to: 'x', from: 'y' } }), 'unknown key').match).toEqual({ from: 'y' });
  });
});

describe('events', () => {
  it('GET /email-inbox/event pages newest first with paging as GET /message; get and delete one', async () => {
    const u = await inboxUser(t);
    const tok = u.device.token;
    for (let i = 1; i <= 5; i++)
      await sendMail(t, { from: 'pager@y.example', to: u.inbox.address, subject: `n${i}`, text: 'x' });
    const first = ok(
      await t.request('GET', `/email-inbox/event?inboxId=${u.inbox.id}&limit=2`, { token: tok }),
      'p1',
    );
    expect(first.events.map((e: { subject: string }) => e.subject)).toEqual(['n5', 'n4']);
    expect(first.paging).toEqual({
      size: 2,
      limit: 2,
      since: first.events[1].id,
      next: `${t.url}/email-inbox/event?inboxId=${u.inbox.id}&limit=2&since=${first.events[1].id}`,
    });
    const second = ok(await t.request('GET', first.paging.next.slice(t.url.length), { token: tok }), 'p2');
    expect(second.events.map((e: { subject: string }) => e.subject)).toEqual(['n3', 'n2']);
    const last = ok(
      await t.request(
        'GET',
        `/email-inbox/event?inboxId=${u.inbox.id}&limit=2&since=${second.paging.since}`,
        {
          token: tok,
        },
      ),
      'p3',
    );
    expect(last.events.map((e: { subject: string }) => e.subject)).toEqual(['n1']);
    expect(last.paging).toEqual({ size: 1, limit: 2 });
    const one = ok(await t.request('GET', `/email-inbox/event/${last.events[0].id}`, { token: tok }), 'one');
    expect(one).toEqual(last.events[0]);
    expect(ok(await t.request('DELETE', `/email-inbox/event/${one.id}`, { token: tok }), 'delete')).toEqual(
      {},
    );
    expect((await t.request('GET', `/email-inbox/event/${one.id}`, { token: tok })).status).toBe(404);
    expect(
      (await t.request('GET', '/email-inbox/event?limit=0', { token: tok })).body.errorDescription,
    ).toMatch(/^limit: /);
    expect(
      (await t.request('GET', '/email-inbox/event?inboxId=abc', { token: tok })).body.errorDescription,
    ).toMatch(/^inboxId: /);
  });

  it('retention: events older than 30 days go, and all but the newest 1,000 of an inbox', async () => {
    const u = await inboxUser(t);
    const ctx = t.server.ctx;
    const now = t.clock.now();
    const insert = (n: number, at: number) =>
      ctx.db.transaction(() => {
        for (let i = 0; i < n; i++)
          ctx.db.run(
            `INSERT INTO email_inbox_events (inbox_id, user_id, channel_id, mail_from, mail_to, subject, text, size,
               received_at, action) VALUES (?, ?, ?, 'a@b', 'c@d', 'old', '', 0, ?, 'message')`,
            [u.inbox.id, u.user.id, u.channel.id, at],
          );
      });
    insert(5, now - 31 * 86_400_000);
    insert(1_003, now - 86_400_000);
    await sendMail(t, { from: 'fresh@y.example', to: u.inbox.address, subject: 'young', text: 'x' });
    const count = () =>
      ctx.db.first<{ n: number }>('SELECT COUNT(*) AS n FROM email_inbox_events WHERE inbox_id = ?', [
        u.inbox.id,
      ])!.n;
    expect(count()).toBe(1_009);
    await t.server.scheduler.runNow('retention');
    expect(count()).toBe(1_000);
    const [newest] = await events(t, u.device.token, u.inbox.id, 1);
    expect(newest.subject).toBe('young');
    const oldest = ctx.db.first<{ at: number }>(
      'SELECT MIN(received_at) AS at FROM email_inbox_events WHERE inbox_id = ?',
      [u.inbox.id],
    )!;
    expect(oldest.at).toBe(now - 86_400_000);
  });
});

describe('rules from events', () => {
  it('POST /email-inbox/rule/from-event/{eid} drafts from the sender and the subject, digit runs as \\d+', async () => {
    const u = await inboxUser(t);
    const tok = u.device.token;
    await sendMail(t, {
      from: 'Backups <backup@nas.example>',
      to: u.inbox.address,
      subject: 'Backup job 2026-11-27 finished (12 files, 3.5 GB)',
      text: 'ok',
    });
    await sendMail(t, {
      from: 'cron@host.example',
      to: u.inbox.address,
      subject: 'Daily report',
      text: 'ok',
    });
    const [plain, digits] = await events(t, tok, u.inbox.id);
    const draft = ok(
      await t.request('POST', `/email-inbox/rule/from-event/${digits.id}`, { token: tok, json: {} }),
      'd',
    );
    expect(draft).toEqual({
      rule: {
        id: null,
        inboxId: u.inbox.id,
        name: 'Backup job 2026-11-27 finished (12 files, 3.5 GB)',
        match: {
          from: 'backup@nas.example',
          subject: '/^Backup job \\d+-\\d+-\\d+ finished \\(\\d+ files, \\d+\\.\\d+ GB\\)$/i',
        },
        action: 'message',
        title: '{{subject}}',
        priority: null,
        position: null,
        createdAt: null,
      },
    });
    const re = /^Backup job \d+-\d+-\d+ finished \(\d+ files, \d+\.\d+ GB\)$/i;
    expect(draft.rule.match.subject).toBe(`/${re.source}/i`);
    const plainDraft = ok(
      await t.request('POST', `/email-inbox/rule/from-event/${plain.id}`, { token: tok }),
      'p',
    );
    expect(plainDraft.rule.match).toEqual({ from: 'cron@host.example', subject: 'Daily report' });
    // Nothing was saved.
    expect(ok(await t.request('GET', `/email-inbox/${u.inbox.id}/rules`, { token: tok }), 'none')).toEqual(
      [],
    );

    const saved = ok(
      await t.request('POST', `/email-inbox/rule/from-event/${digits.id}`, {
        token: tok,
        json: { save: true },
      }),
      'saved',
    );
    expect(saved.rule).toEqual({
      ...draft.rule,
      id: expect.any(Number),
      position: 1,
      createdAt: iso(),
    });
    // The saved rule matches the next run of the same job.
    await sendMail(t, {
      from: 'backup@nas.example',
      to: u.inbox.address,
      subject: 'Backup job 2026-11-28 finished (7 files, 1.25 GB)',
      text: 'ok',
    });
    const [next] = await events(t, tok, u.inbox.id, 1);
    expect(next.matchedRuleId).toBe(saved.rule.id);
    expect(
      (
        await t.request('POST', `/email-inbox/rule/from-event/${digits.id}`, {
          token: tok,
          json: { save: 'yes' },
        })
      ).body.errorDescription,
    ).toMatch(/^save: /);
  });
});

describe('the mail domain', () => {
  it('BELFRY_MAIL_DOMAIN sets the address domain; RCPT to the old default domain is relaying denied', async () => {
    const s = await startTestServer({ config: { smtpListen: '127.0.0.1:0', mailDomain: 'In.Example.com' } });
    try {
      const u = await inboxUser(s, { localPart: 'deploys' });
      expect(u.inbox.address).toBe('deploys@in.example.com');
      const { s: smtp } = await RawSmtp.open(smtpPort(s));
      await smtp.command('EHLO c');
      await smtp.command('MAIL FROM:<a@b.example>');
      expect(await smtp.command('RCPT TO:<deploys@localhost>')).toBe('550 5.7.1 relaying denied');
      expect(await smtp.command('RCPT TO:<deploys@IN.EXAMPLE.COM>')).toMatch(/^250 /);
      await smtp.quit();
      await sendRaw(s, 'a@b.example', ['deploys@in.example.com'], 'Subject: hi\r\n\r\nbody\r\n');
      const [ev] = await events(s, u.device.token, u.inbox.id);
      expect([ev.to, ev.subject]).toEqual(['deploys@in.example.com', 'hi']);
      // The listener's state, as the Inboxes page shows it: on, bound where, and the domain.
      const state = await s.request('GET', '/email-inbox/listener', { token: u.device.token });
      expect(state.body).toEqual({
        enabled: true,
        address: `127.0.0.1:${smtpPort(s)}`,
        domain: 'in.example.com',
      });
    } finally {
      await s.close();
    }
  });

  it('without BELFRY_SMTP_LISTEN no SMTP listener runs; the inbox API still works', async () => {
    const s = await startTestServer();
    try {
      expect(s.server.smtp).toBeNull();
      const u = await inboxUser(s);
      expect(u.inbox.address).toMatch(/^[a-z0-9]{12}@localhost$/);
      const state = await s.request('GET', '/email-inbox/listener', { token: u.device.token });
      expect(state.status).toBe(200);
      expect(state.body).toEqual({ enabled: false, address: null, domain: 'localhost' });
      // Signed-in only: no token, or a channel key, is refused.
      expect((await s.request('GET', '/email-inbox/listener')).status).toBe(401);
      const key = insertChannelKeyRow(s, u.channel.id, { canRead: true });
      expect((await s.request('GET', '/email-inbox/listener', { token: key })).status).toBe(403);
    } finally {
      await s.close();
    }
  });
});
