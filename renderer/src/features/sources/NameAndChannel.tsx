import { useEffect, useState } from 'react';
import type { Channel } from '../../api/types';
import { Field } from '../../components/ui';

/** Channels a heartbeat or a monitor may write to: the caller's own, or shared with them with `send`. */
export function writableChannels(channels: Channel[]): Channel[] {
  return channels.filter((c) => !c.internal && (!c.shared || c.sharePermission === 'send'));
}

/**
 * The name and channel of a heartbeat or a monitor being made or edited. The channel starts at the saved
 * one, else `defaultAppid` when the caller may write to it, else the first writable channel.
 */
export function useNameAndChannel(
  channels: Channel[],
  saved: { name: string; appid: number } | undefined,
  defaultAppid: number | null | undefined,
) {
  const targets = writableChannels(channels);
  const [name, setName] = useState(saved?.name ?? '');
  const preferred = saved?.appid ?? (targets.find((c) => c.id === defaultAppid) ?? targets[0])?.id;
  const [appid, setAppid] = useState<number | ''>(preferred ?? '');
  // The channels may arrive after the form opened (a direct link to it).
  useEffect(() => {
    if (appid === '' && preferred !== undefined) setAppid(preferred);
  }, [appid, preferred]);
  return { targets, name, setName, appid, setAppid };
}

/** The Name and Channel fields, side by side, of a heartbeat or monitor form. */
export function NameAndChannelFields({
  targets,
  name,
  setName,
  appid,
  setAppid,
}: ReturnType<typeof useNameAndChannel>) {
  return (
    <div className="grid2">
      <Field label="Name">
        {(id) => (
          <input id={id} value={name} maxLength={200} onChange={(e) => setName(e.target.value)} required />
        )}
      </Field>
      <Field label="Channel" hint="Where its alerts go">
        {(id) => (
          <select
            id={id}
            value={appid}
            onChange={(e) => setAppid(e.target.value ? Number(e.target.value) : '')}
            required
          >
            {targets.length === 0 ? <option value="">No channel yet: make one first</option> : null}
            {targets.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        )}
      </Field>
    </div>
  );
}
