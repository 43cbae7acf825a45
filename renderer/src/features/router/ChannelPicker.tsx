import type { Channel } from '../../api/types';
import { Field } from '../../components/ui';
import { writableChannels } from '../sources/NameAndChannel';

/** A channel the router may write to (own, or shared with `send`), with one "none" entry first. */
export function ChannelPicker({
  label,
  hint,
  none,
  channels,
  value,
  onChange,
  required,
  disabled,
}: {
  label: string;
  hint: string;
  /** The text of the empty choice. */
  none: string;
  channels: Channel[];
  value: number | null | '';
  onChange: (appid: number | null) => void;
  required?: boolean;
  disabled?: boolean;
}) {
  return (
    <Field label={label} hint={hint}>
      {(id) => (
        <select
          id={id}
          value={value ?? ''}
          disabled={disabled}
          required={required}
          onChange={(e) => onChange(e.target.value ? Number(e.target.value) : null)}
        >
          <option value="">{none}</option>
          {writableChannels(channels).map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
