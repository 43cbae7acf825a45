import { useState } from 'react';
import { post } from '../../api/client';
import type { Channel, ChannelKey } from '../../api/types';
import { CopyField, ErrorText, useAction } from '../../components/ui';

export function curlLine(origin: string, key: string): string {
  return `curl -X POST '${origin}/message' -H 'X-Service-Key: ${key}' -H 'Content-Type: application/json' -d '{"title":"Hello","message":"My first Belfry message","priority":5}'`;
}

/**
 * The empty inbox: how to send a first message, with a real key. Keys are shown only once, so the
 * button issues one (making a channel first when there is none) and shows the ready curl line.
 */
export function FirstMessage({
  channels,
  channelId,
  onChannelsChanged,
}: {
  channels: Channel[];
  channelId: number | null;
  onChannelsChanged: () => void;
}) {
  const own = channels.filter((c) => !c.internal && !c.shared);
  const target = own.find((c) => c.id === channelId) ?? own[0];
  const [key, setKey] = useState<string | null>(null);
  const { busy, error, run } = useAction();

  const makeKey = () =>
    run(async () => {
      if (target) {
        const k = await post<ChannelKey>(`/application/${target.id}/token`, {
          name: 'first message',
          canWrite: true,
        });
        setKey(k.token);
      } else {
        const c = await post<Channel>('/application', { name: 'My first channel' });
        setKey(c.token);
        onChannelsChanged();
      }
    });

  return (
    <div className="empty card stack">
      <h2>No messages yet</h2>
      <p>
        Any program can send to Belfry with one HTTP request.{' '}
        {target ? `Make a sending key for “${target.name}”` : 'Create a channel'} and paste the line below
        into a terminal: the message appears here at once.
      </p>
      {key ? (
        <>
          <CopyField label="Send a test message" value={curlLine(location.origin, key)} />
          <p className="hint">The key is shown only now; manage keys under Channels.</p>
        </>
      ) : (
        <button type="button" className="primary" onClick={() => void makeKey()} disabled={busy}>
          {target ? 'Make a key and show the command' : 'Create a channel and show the command'}
        </button>
      )}
      <ErrorText error={error} />
    </div>
  );
}
