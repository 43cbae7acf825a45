import { useCallback, useEffect, useState } from 'react';
import { put } from '../../api/client';
import type { Channel, DeliveryConfig } from '../../api/types';
import { AdapterForm } from './AdapterForm';
import { ADAPTERS } from './adapters';
import { DeliveryLog } from './DeliveryLog';
import './delivery.css';

/** The labels of the adapters turned on in a (masked) deliveryConfig, in the registry's order. */
function methodsOn(config: DeliveryConfig): string[] {
  return ADAPTERS.filter((a) => config[a.name] && config[a.name]?.enabled !== false).map((a) => a.label);
}

/**
 * The line at the top of a channel's page that says which methods re-deliver and leads down to the
 * Re-delivery card and the Deliveries log (the page is long, most of all on a phone).
 */
export function DeliveryJump({ channel }: { channel: Channel }) {
  const on = methodsOn(channel.deliveryConfig ?? {});
  return (
    <p className="hint dl-jump">
      <a href={`#delivery-${channel.id}`}>Re-delivery</a>: {on.length ? `on (${on.join(', ')})` : 'off'} ·{' '}
      <a href={`#deliveries-${channel.id}`}>Deliveries log</a>
    </p>
  );
}

/**
 * A channel's re-delivery (docs/api.md "deliveryConfig" and "Delivery (re-delivery until read)"): one
 * form per adapter, then the channel's deliveries log. Shown to the channel's owner only (others get no
 * `deliveryConfig`).
 */
export function Delivery({ channel, onSaved }: { channel: Channel; onSaved: (c: Channel) => void }) {
  const [config, setConfig] = useState<DeliveryConfig>(channel.deliveryConfig ?? {});
  // A test writes `test` entries: the log reloads when this changes.
  const [version, setVersion] = useState(0);
  const incoming = JSON.stringify(channel.deliveryConfig ?? {});
  useEffect(() => setConfig(JSON.parse(incoming) as DeliveryConfig), [incoming]);

  // `PUT` replaces the whole object: the other adapters go back as they were read (masked secrets keep
  // the stored ones), this one as the form has it.
  const saveAdapter = useCallback(
    async (name: string, body: Record<string, unknown> | null) => {
      const next: DeliveryConfig = { ...config };
      if (body) next[name] = body;
      else delete next[name];
      const c = await put<Channel>(`/application/${channel.id}`, { deliveryConfig: next });
      setConfig(c.deliveryConfig ?? {});
      setVersion((v) => v + 1);
      onSaved(c);
    },
    [channel.id, config, onSaved],
  );
  const on = methodsOn(config);

  return (
    <>
      <section className="card stack" aria-labelledby={`delivery-${channel.id}`}>
        <h2 id={`delivery-${channel.id}`} className="dl-anchor">
          Re-delivery
        </h2>
        <p className="hint">
          When a message stays unread, Belfry sends it again through each method turned on here, once the
          method’s delay has passed, retrying failures with growing pauses for up to 24 hours. Reading the
          message on any device, or its “Mark as read” link, stops what is still waiting. During your quiet
          hours (Account) re-deliveries below their priority wait until the quiet time ends.
        </p>
        <p className="hint" role="status">
          {on.length ? `On: ${on.join(', ')}.` : 'No method is on: unread messages stay in Belfry.'}
        </p>
        <ul className="dl-adapters" aria-label="Delivery methods">
          {ADAPTERS.map((info) => {
            const stored = config[info.name];
            const state = !stored ? 'not set up' : stored.enabled === false ? 'off' : 'on';
            return (
              <li key={info.name}>
                <details className="dl-adapter">
                  <summary>
                    <span className="grow">{info.label}</span>
                    <span className={`dl-state ${state === 'not set up' ? 'none' : state}`}>{state}</span>
                  </summary>
                  <AdapterForm
                    info={info}
                    appid={channel.id}
                    stored={stored}
                    save={(body) => saveAdapter(info.name, body)}
                    onTested={() => setVersion((v) => v + 1)}
                  />
                </details>
              </li>
            );
          })}
        </ul>
      </section>
      <DeliveryLog channel={channel} version={version} />
    </>
  );
}
