import { ApiError } from '../api/client';

/**
 * The server names the field a 400 is about as the message's prefix (`schedule.endsAt: must be after
 * startsAt`, `monitors[1]: no such monitor`; docs/api.md "Errors"), and a few plan answers start with the
 * field's name (`brandingHidden needs the pro or business plan`). The form shows such a message under
 * that field; anything else stays a form-level error.
 */
export function fieldOfError(
  err: unknown,
  fields: readonly string[],
): { field: string; text: string } | null {
  if (!(err instanceof ApiError)) return null;
  const m = /^([A-Za-z_][\w.[\]]*)(:| )/.exec(err.message);
  if (!m) return null;
  const path = m[1] as string;
  // The longest listed field that is the path or an ancestor of it (`schedule.days` before `schedule`).
  const hit = [...fields]
    .sort((a, b) => b.length - a.length)
    .find((f) => path === f || path.startsWith(`${f}.`) || path.startsWith(`${f}[`));
  if (!hit) return null;
  if (m[2] === ' ' && path !== hit) return null;
  return { field: hit, text: err.message };
}

/** Splits an action's error into the message of each listed field and what is left for the form. */
export function fieldErrors(err: unknown, fields: readonly string[]) {
  const hit = fieldOfError(err, fields);
  return {
    of: (field: string): string | null => (hit?.field === field ? hit.text : null),
    rest: hit ? null : err,
  };
}

/** A field's server error, under the field and announced. */
export function FieldProblem({ text }: { text: string | null }) {
  if (!text) return null;
  return (
    <small className="error" role="alert">
      {text}
    </small>
  );
}
