import { query } from '../../api/client';
import type { Channel } from '../../api/types';
import { navigate } from '../../app/router';

/** The list page's channel filter: `?channel=` on `path` (replacing the history entry), or all channels. */
export function ChannelFilter({
  id,
  path,
  channels,
  value,
}: {
  id: string;
  path: string;
  channels: Channel[];
  value: number | null;
}) {
  return (
    <div className="toolbar">
      <label htmlFor={id}>Channel</label>
      <select
        id={id}
        value={value ?? ''}
        onChange={(e) =>
          navigate(`${path}${query({ channel: e.target.value ? Number(e.target.value) : null })}`, true)
        }
      >
        <option value="">All channels</option>
        {channels
          .filter((c) => !c.internal)
          .map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
      </select>
    </div>
  );
}
