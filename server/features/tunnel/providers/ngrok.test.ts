import type { Config, Listener } from '@ngrok/ngrok';
import { describe, expect, it } from 'vitest';
import { ngrokProvider } from './ngrok';

/** A stand-in for the SDK's forward(): records its config, answers a listener with `url`. */
function fakeForward(url: string | null, fail?: string) {
  const calls: Config[] = [];
  let closed = 0;
  const forward = async (config: Config): Promise<Listener> => {
    calls.push(config);
    if (fail) throw new Error(fail);
    return {
      url: () => url,
      close: async () => {
        closed++;
      },
    } as unknown as Listener;
  };
  return { forward, calls, closed: () => closed };
}

const target = { host: '127.0.0.1', port: 43210 };

describe('ngrok provider', () => {
  it('parses its settings: authtoken required, domain a host name', () => {
    const p = ngrokProvider();
    expect(p.parse({ authtoken: ' tok ', domain: 'Bell.NGROK.app' })).toEqual({
      authtoken: 'tok',
      domain: 'bell.ngrok.app',
    });
    expect(p.parse({ authtoken: 'tok', domain: null })).toEqual({ authtoken: 'tok', domain: undefined });
    expect(() => p.parse({})).toThrow('ngrok.authtoken: required');
    expect(() => p.parse({ authtoken: 'tok', domain: 'a b' })).toThrow(/^ngrok\.domain: must be a host name/);
    expect(() => p.parse('tok')).toThrow('ngrok: must be an object');
    expect(p.secretFields).toEqual(['authtoken']);
  });

  it('forwards to the target with the authtoken and domain; the listener URL is the public URL; stop closes it', async () => {
    const f = fakeForward('https://bell.ngrok.app/');
    const p = ngrokProvider({ forward: f.forward, serverAddr: '127.0.0.1:9' });
    const t = await p.start(
      { authtoken: 'tok', domain: 'bell.ngrok.app' },
      target,
      new AbortController().signal,
    );
    expect(t.publicUrl).toBe('https://bell.ngrok.app');
    expect(f.calls[0]).toMatchObject({
      addr: '127.0.0.1:43210',
      authtoken: 'tok',
      domain: 'bell.ngrok.app',
      server_addr: '127.0.0.1:9',
    });
    await t.stop();
    await t.stop();
    expect(f.closed()).toBe(1);
  });

  it('a lost session ends the tunnel (onExit) once; the error of a failed start never shows the authtoken', async () => {
    const f = fakeForward('https://x.ngrok.app');
    const p = ngrokProvider({ forward: f.forward });
    const t = await p.start({ authtoken: 'tok' }, { host: '::1', port: 8 }, new AbortController().signal);
    expect(f.calls[0]!.addr).toBe('[::1]:8');
    const reasons: string[] = [];
    t.onExit((r) => reasons.push(r));
    f.calls[0]!.onStatusChange!('connected');
    f.calls[0]!.onStatusChange!('closed');
    f.calls[0]!.onStatusChange!('closed');
    expect(reasons).toEqual(['ngrok: the connection to ngrok was lost']);
    expect(f.closed()).toBe(1);

    const bad = ngrokProvider({
      forward: fakeForward(null, 'authentication failed: token secret-12345 is invalid').forward,
    });
    await expect(
      bad.start({ authtoken: 'secret-12345' }, target, new AbortController().signal),
    ).rejects.toThrow('ngrok: authentication failed: token ******** is invalid');
  });
});
