import { TextField } from '../../components/ui';

/** The one-time code of a second factor: an authenticator code or a recovery code. */
export function CodeField({
  method,
  totpLabel,
  value,
  onChange,
}: {
  /** 'totp' for an authenticator code; anything else asks for a recovery code. */
  method: string;
  totpLabel: string;
  value: string;
  onChange: (code: string) => void;
}) {
  return (
    <TextField
      label={method === 'totp' ? totpLabel : 'Recovery code'}
      inputMode={method === 'totp' ? 'numeric' : 'text'}
      autoComplete="one-time-code"
      value={value}
      onChange={onChange}
      required
    />
  );
}
