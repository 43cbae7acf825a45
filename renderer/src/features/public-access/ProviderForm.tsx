import type { ReactNode } from 'react';
import { FieldProblem } from '../../components/field-errors';
import { Field } from '../../components/ui';
import type { TunnelForm } from './form';
import type { TunnelProviderName } from './types';

type Errs = { of(field: string): string | null };

const PROVIDERS: readonly { value: TunnelProviderName; label: string }[] = [
  { value: 'none', label: 'None: reachable on this network only' },
  { value: 'ssh', label: 'SSH: forward a port on your own server' },
  { value: 'ngrok', label: 'ngrok' },
  { value: 'cloudflared', label: 'Cloudflare Tunnel (cloudflared)' },
];

/** The field names the server's 400s may start with (`ssh.host: required`). */
export const FORM_FIELDS = [
  'provider',
  'ssh.host',
  'ssh.port',
  'ssh.user',
  'ssh.privateKey',
  'ssh.remotePort',
  'ssh.publicUrl',
  'ssh.bindAddress',
  'ssh.hostFingerprint',
  'ngrok.authtoken',
  'ngrok.domain',
  'cloudflared.token',
  'cloudflared.hostname',
] as const;

/** One text input of a provider, its server error under it. */
function Input({
  label,
  hint,
  value,
  onChange,
  error,
  inputMode,
  placeholder,
  multiline,
  secret,
}: {
  label: string;
  hint?: string;
  value: string;
  onChange: (v: string) => void;
  error: string | null;
  inputMode?: 'numeric' | 'url';
  placeholder?: string;
  multiline?: boolean;
  secret?: boolean;
}): ReactNode {
  return (
    <Field label={label} {...(hint ? { hint } : {})}>
      {(id) => (
        <>
          {multiline ? (
            <textarea
              id={id}
              className="mono"
              rows={4}
              spellCheck={false}
              autoComplete="off"
              value={value}
              placeholder={placeholder}
              onChange={(e) => onChange(e.target.value)}
            />
          ) : (
            <input
              id={id}
              type={secret ? 'password' : 'text'}
              autoComplete="off"
              inputMode={inputMode}
              value={value}
              placeholder={placeholder}
              onChange={(e) => onChange(e.target.value)}
            />
          )}
          <FieldProblem text={error} />
        </>
      )}
    </Field>
  );
}

/** The placeholder of a stored secret: masked, kept unless something is typed over it. */
function secretPlaceholder(f: TunnelForm, path: string, none: string): string {
  return f.storedSecrets.has(path) ? '******** (stored; kept unless you paste a new one)' : none;
}

type Provider = 'ssh' | 'ngrok' | 'cloudflared';

/** One input of a provider's form; `secret` fields show `none` as placeholder when nothing is stored. */
interface Spec<P extends Provider> {
  key: keyof TunnelForm[P] & string;
  label: string;
  hint?: string;
  inputMode?: 'numeric' | 'url';
  multiline?: boolean;
  secret?: { none: string; masked?: boolean };
}

const SSH_MAIN: Spec<'ssh'>[] = [
  { key: 'host', label: 'Host' },
  { key: 'port', label: 'SSH port', inputMode: 'numeric' },
  { key: 'user', label: 'User' },
  {
    key: 'remotePort',
    label: 'Remote port',
    hint: 'The port the server listens on and forwards here',
    inputMode: 'numeric',
  },
];
const SSH_KEY_URL: Spec<'ssh'>[] = [
  {
    key: 'privateKey',
    label: 'Private key',
    hint: 'OpenSSH or PEM, without a passphrase; make a dedicated one (see the docs)',
    multiline: true,
    secret: { none: '-----BEGIN OPENSSH PRIVATE KEY-----' },
  },
  {
    key: 'publicUrl',
    label: 'Public URL',
    hint: 'The address the internet reaches that port at, e.g. https://belfry.example.net',
    inputMode: 'url',
  },
];
const SSH_ADVANCED: Spec<'ssh'>[] = [
  {
    key: 'bindAddress',
    label: 'Bind address',
    hint: 'localhost (a reverse proxy on the server); * or an address needs GatewayPorts',
  },
  {
    key: 'hostFingerprint',
    label: 'Host key fingerprint',
    hint: 'SHA256:… from ssh-keygen -lf on the server; empty accepts any host key',
  },
];
const NGROK: Spec<'ngrok'>[] = [
  { key: 'authtoken', label: 'Authtoken', secret: { none: 'from dashboard.ngrok.com', masked: true } },
  {
    key: 'domain',
    label: 'Domain (optional)',
    hint: 'A reserved or static domain of your ngrok account; empty: ngrok picks one',
  },
];
const CLOUDFLARED: Spec<'cloudflared'>[] = [
  { key: 'token', label: 'Tunnel token (optional)', secret: { none: 'empty: a quick tunnel', masked: true } },
  {
    key: 'hostname',
    label: 'Hostname',
    hint: 'Required with a token: the public hostname routed to this tunnel',
  },
];

export function ProviderForm({
  form,
  onChange,
  errs,
}: {
  form: TunnelForm;
  onChange: (f: TunnelForm) => void;
  errs: Errs;
}) {
  function inputs<P extends Provider>(provider: P, specs: Spec<P>[]) {
    const values = form[provider] as Record<string, string>;
    return specs.map((s) => {
      const path = `${provider}.${s.key}`;
      return (
        <Input
          key={path}
          label={s.label}
          {...(s.hint ? { hint: s.hint } : {})}
          {...(s.inputMode ? { inputMode: s.inputMode } : {})}
          multiline={s.multiline}
          secret={s.secret?.masked}
          value={values[s.key] ?? ''}
          onChange={(v) => onChange({ ...form, [provider]: { ...values, [s.key]: v } })}
          {...(s.secret ? { placeholder: secretPlaceholder(form, path, s.secret.none) } : {})}
          error={errs.of(path)}
        />
      );
    });
  }
  return (
    <div className="stack">
      <Field label="Provider">
        {(id) => (
          <select
            id={id}
            value={form.provider}
            onChange={(e) => onChange({ ...form, provider: e.target.value as TunnelProviderName })}
          >
            {PROVIDERS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <FieldProblem text={errs.of('provider')} />
      {form.provider === 'ssh' ? (
        <fieldset className="stack">
          <legend>SSH server</legend>
          <p className="hint">
            Like <span className="mono">ssh -N -R remotePort:public-listener user@host</span>: Belfry logs in
            with the key and the server forwards its port here. Put a reverse proxy with TLS in front of that
            port on the server, and give its address as the public URL.
          </p>
          <div className="grid2">{inputs('ssh', SSH_MAIN)}</div>
          {inputs('ssh', SSH_KEY_URL)}
          <details>
            <summary>Advanced: bind address, host key pin</summary>
            <div className="grid2">{inputs('ssh', SSH_ADVANCED)}</div>
          </details>
        </fieldset>
      ) : null}
      {form.provider === 'ngrok' ? (
        <fieldset className="stack">
          <legend>ngrok</legend>
          {inputs('ngrok', NGROK)}
        </fieldset>
      ) : null}
      {form.provider === 'cloudflared' ? (
        <fieldset className="stack">
          <legend>Cloudflare Tunnel</legend>
          <p className="hint">
            Needs <span className="mono">cloudflared</span> installed. Without a token: a quick tunnel on a
            random trycloudflare.com address. With a tunnel token: your named tunnel, and its hostname.
          </p>
          {inputs('cloudflared', CLOUDFLARED)}
        </fieldset>
      ) : null}
    </div>
  );
}
