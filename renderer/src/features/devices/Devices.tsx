import { useCallback, useEffect, useState } from 'react';
import { del, get, put } from '../../api/client';
import type { Channel, Device } from '../../api/types';
import { useLive } from '../../app/live';
import { Dialog, ErrorText, formatDate, useAction } from '../../components/ui';
import { DesktopSettingsCard } from './DesktopSettings';
import { PairDevice } from './PairDevice';

export function Devices() {
  const [devices, setDevices] = useState<Device[]>([]);
  const [online, setOnline] = useState<Set<number>>(new Set());
  const [channels, setChannels] = useState<Channel[]>([]);
  const [muting, setMuting] = useState<Device | null>(null);
  const [pairing, setPairing] = useState(false);
  const load = useAction();
  const act = useAction();
  const { state: live } = useLive();

  const reload = useCallback(
    () =>
      load.run(async () => {
        const [d, o] = await Promise.all([
          get<Device[]>('/client'),
          get<number[]>('/client/online').catch(() => []),
        ]);
        setDevices(d);
        setOnline(new Set(o));
      }),
    [load.run],
  );
  useEffect(() => {
    void reload();
    get<Channel[]>('/application').then(setChannels, () => {});
  }, [reload]);
  // The online dots follow sockets opening and closing (ours included, once it is open).
  useEffect(() => {
    const refresh = () =>
      get<number[]>('/client/online').then(
        (o) => setOnline(new Set(o)),
        () => {},
      );
    if (live === 'open') void refresh();
    const t = setInterval(refresh, 5_000);
    return () => clearInterval(t);
  }, [live]);

  const rename = (d: Device) =>
    act.run(async () => {
      const name = prompt('New name for this device', d.name);
      if (!name?.trim()) return;
      await put(`/client/${d.id}`, { name: name.trim() });
      await reload();
    });
  const setStatus = (d: Device, status: Device['status']) =>
    act.run(async () => {
      if (
        status === 'revoked' &&
        !confirm(`Revoke “${d.name}”? It is signed out for good; this cannot be undone.`)
      )
        return;
      await put(`/client/${d.id}/status`, { status });
      await reload();
    });
  const remove = (d: Device) =>
    act.run(async () => {
      if (!confirm(`Delete “${d.name}”? It is signed out.`)) return;
      await del(`/client/${d.id}`);
      await reload();
    });
  const removeOthers = () =>
    act.run(async () => {
      if (!confirm('Sign out and delete every other device?')) return;
      await del('/client');
      await reload();
    });

  return (
    <section aria-labelledby="devices-title" className="stack">
      <div className="pane-head">
        <h1 id="devices-title">Devices</h1>
        <div className="actions">
          <button type="button" className="primary" onClick={() => setPairing(true)}>
            Pair a phone
          </button>
          <button type="button" onClick={() => void removeOthers()}>
            Sign out other devices
          </button>
        </div>
      </div>
      <ErrorText error={load.error} />
      <ErrorText error={act.error} />
      <ul className="device-list" aria-label="Devices">
        {devices.map((d) => (
          <li key={d.id} className={`card device ${d.status}`}>
            <div className="row wrap">
              <span
                className={online.has(d.id) ? 'online-dot on' : 'online-dot'}
                role="img"
                aria-label={online.has(d.id) ? 'online' : 'offline'}
                title={online.has(d.id) ? 'Online (connected now)' : 'Offline'}
              />
              <strong className="grow">
                {d.name}
                {d.current ? <span className="tag">this device</span> : null}
              </strong>
              <span className={`tag status-${d.status}`}>{d.status}</span>
            </div>
            <p className="hint">
              {d.platform || 'unknown platform'} · last used {formatDate(d.lastUsed)}
              {d.lastIp ? ` from ${d.lastIp}` : ''} · added {formatDate(d.createdAt)}
            </p>
            <div className="actions">
              <button type="button" onClick={() => void rename(d)} aria-label={`Rename ${d.name}`}>
                Rename
              </button>
              <button type="button" onClick={() => setMuting(d)} aria-label={`Mutes on ${d.name}`}>
                Mutes
              </button>
              {!d.current && d.status === 'active' ? (
                <button
                  type="button"
                  onClick={() => void setStatus(d, 'suspended')}
                  aria-label={`Suspend ${d.name}`}
                >
                  Suspend
                </button>
              ) : null}
              {d.status === 'suspended' ? (
                <button
                  type="button"
                  onClick={() => void setStatus(d, 'active')}
                  aria-label={`Reactivate ${d.name}`}
                >
                  Reactivate
                </button>
              ) : null}
              {!d.current && d.status !== 'revoked' ? (
                <button
                  type="button"
                  className="danger"
                  onClick={() => void setStatus(d, 'revoked')}
                  aria-label={`Revoke ${d.name}`}
                >
                  Revoke
                </button>
              ) : null}
              {!d.current ? (
                <button
                  type="button"
                  className="danger"
                  onClick={() => void remove(d)}
                  aria-label={`Delete ${d.name}`}
                >
                  Delete
                </button>
              ) : null}
            </div>
          </li>
        ))}
      </ul>
      <DesktopSettingsCard />
      <Dialog title="Pair a phone" open={pairing} onClose={() => setPairing(false)}>
        <PairDevice
          onPaired={() => {
            void reload();
          }}
        />
      </Dialog>
      <Dialog
        title={muting ? `Muted channels on ${muting.name}` : 'Mutes'}
        open={muting !== null}
        onClose={() => setMuting(null)}
      >
        {muting ? <Mutes device={muting} channels={channels} onDone={() => setMuting(null)} /> : null}
      </Dialog>
    </section>
  );
}

function Mutes({ device, channels, onDone }: { device: Device; channels: Channel[]; onDone: () => void }) {
  const [muted, setMuted] = useState<Set<number> | null>(null);
  const { busy, error, run } = useAction();
  useEffect(() => {
    void run(async () => {
      const r = await get<{ channelIds: number[] }>(`/client/${device.id}/subscriptions`);
      setMuted(new Set(r.channelIds));
    });
  }, [device.id, run]);
  if (!muted) return <ErrorText error={error} />;
  return (
    <form
      className="stack"
      onSubmit={(e) => {
        e.preventDefault();
        void run(async () => {
          await put(`/client/${device.id}/subscriptions`, { channelIds: [...muted] });
          onDone();
        });
      }}
    >
      <p>A muted channel’s messages are kept, but this device is not notified of them.</p>
      <fieldset className="stack">
        <legend className="sr-only">Channels</legend>
        {channels.map((c) => (
          <label key={c.id} className="check">
            <input
              type="checkbox"
              checked={muted.has(c.id)}
              onChange={(e) => {
                const next = new Set(muted);
                if (e.target.checked) next.add(c.id);
                else next.delete(c.id);
                setMuted(next);
              }}
            />{' '}
            Mute {c.name}
          </label>
        ))}
      </fieldset>
      <ErrorText error={error} />
      <button type="submit" className="primary" disabled={busy}>
        Save mutes
      </button>
    </form>
  );
}
