import { post, put } from '../../api/client';
import type { Channel } from '../../api/types';
import { FieldProblem, fieldErrors } from '../../components/field-errors';
import { CopyField, ErrorText, useAction } from '../../components/ui';
import { ChannelPicker } from './ChannelPicker';
import { curlExamples, serviceSetups } from './examples';
import type { WebhookRouter } from './types';

/** The masked hint (`Rab****…x7Qz`) stands in for the token everywhere but the first GET and rotate. */
export function isFullToken(r: WebhookRouter): boolean {
  return !r.token.includes('*');
}

/**
 * The record to show after an answer: a PUT answers the masked token, but the full one shown on this
 * visit (first GET or rotate) is still the same token, so it stays on screen.
 */
export function keepFullToken(prev: WebhookRouter | null, next: WebhookRouter): WebhookRouter {
  if (!prev || isFullToken(next) || !isFullToken(prev)) return next;
  return { ...next, token: prev.token, url: prev.url };
}

/**
 * The router itself: its URL (full with a copy button right after it was made or rotated, masked after
 * that), on/off, the channel for events no rule takes, a new URL, and how to send to it.
 */
export function RouterSettings({
  router,
  channels,
  onChange,
}: {
  router: WebhookRouter;
  channels: Channel[];
  onChange: (r: WebhookRouter) => void;
}) {
  const act = useAction();
  const errs = fieldErrors(act.error, ['enabled', 'defaultAppid']);
  const full = isFullToken(router);
  const save = (body: Partial<Pick<WebhookRouter, 'enabled' | 'defaultAppid'>>) =>
    act.run(async () => onChange(await put<WebhookRouter>('/webhook-router', body)));
  const rotate = () => {
    if (
      !confirm(
        'Make a new router URL? The old one stops working at once: update every service that sends to it.',
      )
    )
      return;
    void act.run(async () => onChange(await post<WebhookRouter>('/webhook-router/rotate-token')));
  };

  return (
    <section className={full ? 'card stack shown-once' : 'card stack'} aria-labelledby="router-url-title">
      <h2 id="router-url-title">Router URL</h2>
      {full ? (
        <div className="stack" role="status">
          <CopyField label="Router URL (shown now only)" value={router.url} secret />
          <p className="hint">
            Copy it now: Belfry keeps only a fingerprint of its token, and once you leave this page the URL is
            shown masked. “New URL” makes another one.
          </p>
        </div>
      ) : (
        <p className="hint">
          <span className="mono router-url">{router.url}</span>
          <br />
          The full URL was shown when the router was made or last rotated; it is masked now. “New URL”
          replaces it.
        </p>
      )}
      <div className="grid2">
        <label className="check">
          <input
            type="checkbox"
            checked={router.enabled}
            disabled={act.busy}
            onChange={(e) => void save({ enabled: e.target.checked })}
          />{' '}
          Router on (off: every request is answered 404 and nothing is kept)
        </label>
        <ChannelPicker
          label="Default channel"
          hint="Where an event goes when no rule takes it; none: only kept below"
          none="None: keep the event only"
          channels={channels}
          value={router.defaultAppid}
          disabled={act.busy}
          onChange={(defaultAppid) => void save({ defaultAppid })}
        />
      </div>
      <FieldProblem text={errs.of('enabled') ?? errs.of('defaultAppid')} />
      <ErrorText error={errs.rest} />
      <div className="actions">
        <button type="button" onClick={rotate} disabled={act.busy}>
          New URL
        </button>
      </div>
      <details>
        <summary>Examples: curl, GitHub, GitLab, Stripe, Docker Hub</summary>
        <div className="stack">
          <p className="hint">
            Anything after the token is the event’s path: give each service its own (
            <span className="mono">/github</span>, <span className="mono">/stripe</span>) and let rules tell
            them apart. POST, PUT, PATCH and GET are taken; no credentials needed, the token in the URL is the
            key{full ? '' : ' (the lines below show it masked)'}.
          </p>
          {curlExamples(router.url).map((e) =>
            full ? (
              <CopyField key={e.label} label={e.label} value={e.value} />
            ) : (
              <div key={e.label} className="field">
                <span className="hint">{e.label}</span>
                <code className="mono example">{e.value}</code>
              </div>
            ),
          )}
          <h3>Where to paste it</h3>
          <ul className="router-setups">
            {serviceSetups(router.url).map((s) => (
              <li key={s.service}>
                <strong>{s.service}</strong>: {s.where}: <code className="mono">{s.url}</code>. {s.tip}
              </li>
            ))}
          </ul>
        </div>
      </details>
    </section>
  );
}
