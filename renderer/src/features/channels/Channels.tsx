import { useCallback, useEffect, useMemo, useState } from 'react';
import { api, del, get, post } from '../../api/client';
import type { Channel } from '../../api/types';
import { useSignals } from '../../app/live';
import { ErrorText, PriorityBadge, useAction } from '../../components/ui';
import { Delivery, DeliveryJump } from '../delivery/Delivery';
import { HealthDot } from '../heartbeats/HealthDot';
import { ChannelForm } from './ChannelForm';
import { Keys, ShownOnce } from './Keys';
import { IncomingShares, Shares } from './Shares';
import { buildTree, flatten } from './tree';
import { Webhooks } from './Webhooks';

export function Channels() {
  const [channels, setChannels] = useState<Channel[]>([]);
  const [selected, setSelected] = useState<number | 'new' | null>(null);
  const [created, setCreated] = useState<{ id: number; token: string } | null>(null);
  const load = useAction();
  const act = useAction();

  const reload = useCallback(
    () => load.run(async () => setChannels(await get<Channel[]>('/application'))),
    [load.run],
  );
  useEffect(() => void reload(), [reload]);
  // A share accepted, left or revoked elsewhere changes which channels are listed.
  useSignals(() => void reload());

  const rows = useMemo(() => flatten(buildTree(channels)), [channels]);
  const current = typeof selected === 'number' ? channels.find((c) => c.id === selected) : undefined;

  const remove = (c: Channel) =>
    act.run(async () => {
      if (
        !confirm(
          `Delete “${c.name}” with all its messages, keys, shares and webhooks? Its sub-channels are kept.`,
        )
      )
        return;
      await del(`/application/${c.id}`);
      setSelected(null);
      await reload();
    });

  const leave = (c: Channel) =>
    act.run(async () => {
      if (!confirm(`Leave “${c.name}”? Its messages stop coming to you; the owner can invite you again.`))
        return;
      await post('/share/leave', { appid: c.id });
      setSelected(null);
      await reload();
    });

  const uploadLogo = (c: Channel, file: File) =>
    act.run(async () => {
      const fd = new FormData();
      fd.append('file', file);
      await api('POST', `/application/${c.id}/image`, { body: fd });
      await reload();
    });
  const removeLogo = (c: Channel) =>
    act.run(async () => {
      await del(`/application/${c.id}/image`);
      await reload();
    });

  return (
    <div className="split">
      <section aria-labelledby="channels-title" className="list-pane">
        <div className="pane-head">
          <h1 id="channels-title">Channels</h1>
          <button type="button" className="primary" onClick={() => setSelected('new')}>
            New channel
          </button>
        </div>
        <ErrorText error={load.error} />
        {rows.length === 0 && !load.busy ? (
          <p className="empty">No channels yet. A channel is where a program sends its messages.</p>
        ) : null}
        <ul className="rows" aria-label="Channel tree">
          {rows.map(({ channel: c, depth }) => (
            <li key={c.id} style={{ paddingInlineStart: `${depth * 1.25}rem` }}>
              <button
                type="button"
                className={selected === c.id ? 'row-button on' : 'row-button'}
                onClick={() => {
                  setSelected(c.id);
                  setCreated(null);
                }}
                aria-current={selected === c.id ? 'true' : undefined}
              >
                {c.image ? (
                  <img src={c.image} alt="" className="logo" />
                ) : (
                  <span className="logo placeholder" aria-hidden="true" />
                )}
                <span className="grow">{c.name}</span>
                <HealthDot channel={c} />
                {c.internal ? <span className="tag">system</span> : null}
                {c.shared ? <span className="tag">shared ({c.sharePermission})</span> : null}
                {c.tags.map((t) => (
                  <span key={t} className="tag">
                    #{t}
                  </span>
                ))}
                <PriorityBadge priority={c.defaultPriority} />
              </button>
            </li>
          ))}
        </ul>
        <IncomingShares onChanged={reload} />
      </section>
      <section className="detail-pane" aria-label="Channel details">
        {selected === 'new' ? (
          <ChannelForm
            channels={channels}
            onSaved={async (c) => {
              setCreated({ id: c.id, token: c.token });
              setSelected(c.id);
              await reload();
            }}
            onCancel={() => setSelected(null)}
          />
        ) : current ? (
          // Keyed by channel, so a shown-once secret, a half-filled form and a late answer stay with the
          // channel they belong to instead of showing under the next one opened.
          <div className="stack" key={current.id}>
            {created?.id === current.id ? (
              <ShownOnce label="Channel key (shown once)" token={created.token} />
            ) : null}
            {current.internal ? (
              <p className="notice">
                This is Belfry’s own channel for messages to you; it cannot be changed.
              </p>
            ) : current.shared ? (
              <div className="notice row wrap">
                <span className="grow">
                  Shared with you ({current.sharePermission}
                  {current.canShare ? ', may reshare' : ''}).
                </span>
                <button type="button" className="danger" onClick={() => void leave(current)}>
                  Leave channel
                </button>
              </div>
            ) : (
              <>
                <DeliveryJump channel={current} />
                <ChannelForm channel={current} channels={channels} onSaved={() => void reload()} />
                <fieldset className="card stack">
                  <legend>Logo</legend>
                  {current.image ? (
                    <img src={current.image} alt={`${current.name} logo`} className="logo large" />
                  ) : (
                    <p className="hint">No logo.</p>
                  )}
                  <label className="file">
                    <span>Upload a PNG, JPEG, GIF or WebP (at most 2 MiB)</span>
                    <input
                      type="file"
                      accept="image/png,image/jpeg,image/gif,image/webp"
                      onChange={(e) => {
                        const f = e.target.files?.[0];
                        if (f) void uploadLogo(current, f);
                        e.target.value = '';
                      }}
                    />
                  </label>
                  {current.image ? (
                    <button type="button" onClick={() => void removeLogo(current)}>
                      Remove logo
                    </button>
                  ) : null}
                </fieldset>
                <Keys channel={current} />
                <Webhooks channel={current} />
                <Delivery channel={current} onSaved={() => void reload()} />
              </>
            )}
            {!current.internal && (!current.shared || current.canShare) ? <Shares channel={current} /> : null}
            <ErrorText error={act.error} />
            {!current.internal && !current.shared ? (
              <button type="button" className="danger" onClick={() => void remove(current)}>
                Delete channel
              </button>
            ) : null}
          </div>
        ) : (
          <p className="hint">
            Select a channel to edit it, manage its keys, shares, webhooks and re-delivery.
          </p>
        )}
      </section>
    </div>
  );
}
