import { type FormEvent, useId } from 'react';
import { post, put } from '../../api/client';
import type { Channel } from '../../api/types';
import { FieldProblem, fieldErrors } from '../../components/field-errors';
import { ErrorText, useAction } from '../../components/ui';
import { NameAndChannelFields, useNameAndChannel } from '../sources/NameAndChannel';
import type { MetricSource, MetricSourceInput } from './types';

const FIELDS = ['name', 'appid'] as const;

/** Makes a metric source, or renames it / moves it to another channel. */
export function SourceForm({
  source,
  channels,
  defaultAppid,
  asPage,
  onSaved,
  onCancel,
}: {
  source?: MetricSource;
  channels: Channel[];
  defaultAppid?: number | null;
  /** The form is the page (its heading is the page's h1). */
  asPage?: boolean;
  onSaved: (s: MetricSource) => void;
  onCancel?: () => void;
}) {
  const who = useNameAndChannel(channels, source, defaultAppid);
  const act = useAction();
  const titleId = useId();
  const errs = fieldErrors(act.error, FIELDS);
  const title = source ? `Edit “${source.name}”` : 'New metric source';

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void act.run(async () => {
      const body: MetricSourceInput = { name: who.name.trim(), appid: Number(who.appid) };
      onSaved(
        source
          ? await put<MetricSource>(`/metric-source/${source.id}`, body)
          : await post<MetricSource>('/metric-source', body),
      );
    });
  };

  return (
    <form className="card stack" onSubmit={submit} aria-labelledby={titleId}>
      {asPage ? <h1 id={titleId}>{title}</h1> : <h2 id={titleId}>{title}</h2>}
      {source ? null : (
        <p className="hint">
          A metric source is a URL your scripts, sensors or an exporter send numbers to — as JSON or in the
          Prometheus text format. Belfry keeps them as series, draws them, and alerts you when one crosses a
          threshold or stops coming.
        </p>
      )}
      <NameAndChannelFields {...who} />
      <FieldProblem text={errs.of('name') ?? errs.of('appid')} />
      <ErrorText error={errs.rest} />
      <div className="actions">
        <button type="submit" className="primary" disabled={act.busy || who.appid === ''}>
          {source ? 'Save source' : 'Create source'}
        </button>
        {onCancel ? (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
