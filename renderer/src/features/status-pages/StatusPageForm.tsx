import { type FormEvent, useId, useState } from 'react';
import { post, put } from '../../api/client';
import type { Channel } from '../../api/types';
import { useSession } from '../../app/session';
import { FieldProblem, fieldErrors } from '../../components/field-errors';
import { ErrorText, Field, useAction } from '../../components/ui';
import { buildTree, flatten } from '../channels/tree';
import { blankPage, canHideBranding, type PageDraft, SLUG_PATTERN, slugFrom } from './summary';
import type { PageLang, StatusPage, StatusPageInput } from './types';

const FIELDS = ['appid', 'slug', 'title', 'description', 'lang', 'brandingHidden'] as const;

/**
 * Create or edit a status page (docs/api.md "Status pages"). The channel is one of the caller's own: the
 * page lists every heartbeat and monitor of it and its sub-channels. Hiding "Powered by Belfry" is a pro
 * and business feature: on the free plan the box is off (a page that kept the flag after a downgrade may
 * still clear it). An edit sends only what changed (`PUT` is partial).
 */
export function StatusPageForm({
  page,
  channels,
  defaultAppid,
  onSaved,
  onCancel,
  asPage,
}: {
  /** The form is the page (create): its heading is the page's h1. */
  asPage?: boolean;
  page?: StatusPage;
  channels: Channel[];
  defaultAppid?: number | null;
  onSaved: (p: StatusPage) => void;
  onCancel: () => void;
}) {
  const { user } = useSession();
  const own = flatten(buildTree(channels.filter((c) => !c.internal && !c.shared)));
  const first = own.find((n) => n.channel.id === defaultAppid)?.channel.id ?? own.at(0)?.channel.id ?? '';
  const [d, setD] = useState<PageDraft>(() => (page ? { ...page } : blankPage(first)));
  const [slugTouched, setSlugTouched] = useState(Boolean(page));
  const patch = (p: Partial<PageDraft>) => setD((prev) => ({ ...prev, ...p }));
  const appid = d.appid === '' ? first : d.appid;
  const canHide = canHideBranding(user?.plan);
  const save = useAction();
  const errs = fieldErrors(save.error, FIELDS);
  const titleId = useId();
  const brandHint = useId();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run(async () => {
      const body: StatusPageInput = {
        appid: Number(appid),
        slug: d.slug.trim(),
        title: d.title.trim(),
        description: d.description.trim(),
        enabled: d.enabled,
        lang: d.lang,
        brandingHidden: d.brandingHidden,
      };
      if (!page) return onSaved(await post<StatusPage>('/status-page', body));
      const changed = Object.fromEntries(
        Object.entries(body).filter(([k, v]) => page[k as keyof StatusPageInput] !== v),
      );
      onSaved(await put<StatusPage>(`/status-page/${page.id}`, changed));
    });
  };

  return (
    <form className="card stack sp-form" onSubmit={submit} aria-labelledby={titleId}>
      {asPage ? (
        <h1 id={titleId}>{page ? `Edit “${page.title || page.slug}”` : 'New status page'}</h1>
      ) : (
        <h2 id={titleId}>{page ? `Edit “${page.title || page.slug}”` : 'New status page'}</h2>
      )}
      <div className="grid2">
        <Field label="Title">
          {(id) => (
            <input
              id={id}
              value={d.title}
              maxLength={200}
              onChange={(e) =>
                patch({ title: e.target.value, ...(slugTouched ? {} : { slug: slugFrom(e.target.value) }) })
              }
            />
          )}
        </Field>
        <Field label="Slug" hint="The page’s address: 3-60 characters of a-z, 0-9 and -">
          {(id) => (
            <input
              id={id}
              className="mono"
              value={d.slug}
              pattern={SLUG_PATTERN.slice(1, -1)}
              maxLength={60}
              onChange={(e) => {
                setSlugTouched(true);
                patch({ slug: e.target.value.toLowerCase() });
              }}
              required
            />
          )}
        </Field>
      </div>
      <FieldProblem text={errs.of('title')} />
      <FieldProblem text={errs.of('slug')} />
      <Field
        label="Channel"
        hint="Its heartbeats and monitors, and those of its sub-channels, are the page’s services"
      >
        {(id) => (
          <select id={id} value={appid} onChange={(e) => patch({ appid: Number(e.target.value) })} required>
            {own.length === 0 ? <option value="">No channel of your own yet: make one first</option> : null}
            {own.map(({ channel: c, depth }) => (
              <option key={c.id} value={c.id}>
                {`${'\u00a0\u00a0'.repeat(depth)}${c.name}`}
              </option>
            ))}
          </select>
        )}
      </Field>
      <FieldProblem text={errs.of('appid')} />
      <Field label="Description">
        {(id) => (
          <textarea
            id={id}
            rows={2}
            maxLength={2000}
            value={d.description}
            onChange={(e) => patch({ description: e.target.value })}
          />
        )}
      </Field>
      <FieldProblem text={errs.of('description')} />
      <div className="grid2">
        <Field label="Language" hint="Of the public page and the subscriber mails">
          {(id) => (
            <select id={id} value={d.lang} onChange={(e) => patch({ lang: e.target.value as PageLang })}>
              <option value="en">English</option>
              <option value="ru">Русский</option>
            </select>
          )}
        </Field>
        <label className="check">
          <input type="checkbox" checked={d.enabled} onChange={(e) => patch({ enabled: e.target.checked })} />{' '}
          Published (off: the public address answers 404)
        </label>
      </div>
      <FieldProblem text={errs.of('lang')} />
      <div className="stack">
        <label className="check">
          <input
            type="checkbox"
            checked={d.brandingHidden}
            disabled={!canHide && !d.brandingHidden}
            aria-describedby={canHide ? undefined : brandHint}
            onChange={(e) => patch({ brandingHidden: e.target.checked })}
          />{' '}
          Hide “Powered by Belfry”
        </label>
        {canHide ? null : (
          <small className="hint" id={brandHint}>
            {d.brandingHidden
              ? 'Your plan is free: the footer shows until you move to the pro or business plan.'
              : 'Needs the pro or business plan.'}
          </small>
        )}
        <FieldProblem text={errs.of('brandingHidden')} />
      </div>
      <ErrorText error={errs.rest} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.busy || appid === ''}>
          {page ? 'Save page' : 'Create page'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
