import { useEffect, useState } from 'react';
import { type DesktopSettings, desktop } from '../../api/desktop';
import { CopyField, ErrorText, Field, useAction } from '../../components/ui';

/**
 * Only in the desktop app: start at login, LAN access (shows the LAN URL and warns that it is plain
 * HTTP; the server then runs in LAN mode and every page shows PlainHttpLanBanner) and the port.
 */
export function DesktopSettingsCard() {
  const bridge = desktop();
  const [state, setState] = useState<{ settings: DesktopSettings; lanUrls: string[] } | null>(null);
  const [port, setPort] = useState('');
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  useEffect(() => {
    if (!bridge) return;
    void run(async () => {
      const s = await bridge.getSettings();
      setState(s);
      setPort(String(s.settings.port));
    });
  }, [bridge, run]);
  if (!bridge) return null;
  const save = (patch: Partial<DesktopSettings>) =>
    run(async () => {
      const r = await bridge.setSettings(patch);
      if (r.restarting)
        setNotice('Belfry restarts its server to apply this; the window reloads in a moment.');
      setState((s) => ({ settings: r.settings, lanUrls: s?.lanUrls ?? [] }));
    });
  return (
    <section className="card stack" aria-labelledby="desktop-title">
      <h2 id="desktop-title">This computer</h2>
      {state ? (
        <>
          <label className="check">
            <input
              type="checkbox"
              checked={state.settings.openAtLogin}
              disabled={busy}
              onChange={(e) => void save({ openAtLogin: e.target.checked })}
            />{' '}
            Start Belfry when I log in
          </label>
          <label className="check">
            <input
              type="checkbox"
              checked={state.settings.lanAccess}
              disabled={busy}
              onChange={(e) => void save({ lanAccess: e.target.checked })}
            />{' '}
            LAN access (phones and other computers on this network can connect)
          </label>
          <p className={state.settings.lanAccess ? 'warning' : 'hint'}>
            LAN access is plain HTTP, not encrypted: anyone on the same network can read passwords, tokens and
            messages sent to Belfry. Turn it on only on a network you trust.
          </p>
          {state.settings.lanAccess
            ? state.lanUrls.map((u) => <CopyField key={u} label="LAN address" value={u} />)
            : null}
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              void save({ port: Number(port) });
            }}
          >
            <Field label="Port">
              {(id) => (
                <input
                  id={id}
                  type="number"
                  min={1024}
                  max={65535}
                  value={port}
                  onChange={(e) => setPort(e.target.value)}
                />
              )}
            </Field>
            <button type="submit" disabled={busy}>
              Save port
            </button>
          </form>
        </>
      ) : null}
      {notice ? <p role="status">{notice}</p> : null}
      <ErrorText error={error} />
    </section>
  );
}
