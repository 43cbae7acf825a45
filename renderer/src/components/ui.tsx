import { type ReactNode, useCallback, useEffect, useId, useRef, useState } from 'react';
import { errorText } from '../api/client';

/** An API or network error as a readable sentence, announced to screen readers. */
export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {errorText(error)}
    </p>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

/** A labelled input row; the label is bound to the control for accessibility. */
export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: string;
  children: (id: string) => ReactNode;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id)}
      {hint ? <small className="hint">{hint}</small> : null}
    </div>
  );
}

/** The common case of Field: one text input bound to a string state. */
export function TextField({
  label,
  hint,
  value,
  onChange,
  type,
  autoComplete,
  inputMode,
  required,
}: {
  label: string;
  hint?: string;
  value: string;
  onChange: (value: string) => void;
  type?: 'text' | 'email' | 'password' | 'url' | 'search';
  autoComplete?: string;
  inputMode?: 'text' | 'numeric' | 'email' | 'url';
  required?: boolean;
}) {
  return (
    <Field label={label} {...(hint ? { hint } : {})}>
      {(id) => (
        <input
          id={id}
          type={type}
          autoComplete={autoComplete}
          inputMode={inputMode}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          required={required}
        />
      )}
    </Field>
  );
}

export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Older browsers and plain-http LAN pages have no async clipboard: select-and-copy instead.
    const ta = document.createElement('textarea');
    ta.value = text;
    ta.setAttribute('readonly', '');
    ta.style.position = 'fixed';
    ta.style.opacity = '0';
    document.body.appendChild(ta);
    ta.select();
    document.execCommand('copy');
    ta.remove();
  }
}

/** A read-only value with a copy button; used for keys shown once, curl lines, URLs. */
export function CopyField({ label, value, secret }: { label: string; value: string; secret?: boolean }) {
  const [copied, setCopied] = useState(false);
  const id = useId();
  return (
    <div className="copy-field">
      <label htmlFor={id}>{label}</label>
      <div className="row">
        <input
          id={id}
          readOnly
          value={value}
          className={secret ? 'mono secret' : 'mono'}
          onFocus={(e) => e.target.select()}
        />
        <button
          type="button"
          onClick={async () => {
            await copyText(value);
            setCopied(true);
            setTimeout(() => setCopied(false), 1500);
          }}
          aria-label={`Copy ${label}`}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
    </div>
  );
}

/** A modal dialog (native <dialog>: focus trap and Escape come with it). */
export function Dialog({
  title,
  open,
  onClose,
  children,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <div className="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="ghost" onClick={onClose} aria-label="Close">
          ×
        </button>
      </div>
      {open ? children : null}
    </dialog>
  );
}

export function priorityClass(p: number): string {
  if (p >= 8) return 'prio high';
  if (p >= 4) return 'prio normal';
  if (p >= 1) return 'prio low';
  return 'prio min';
}

export function PriorityBadge({ priority }: { priority: number }) {
  const label = priority >= 8 ? 'high' : priority >= 4 ? 'normal' : priority >= 1 ? 'low' : 'min';
  return (
    <span className={priorityClass(priority)} title={`Priority ${priority} (${label})`}>
      P{priority}
    </span>
  );
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return 'never';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString();
}

/** Runs an async action, tracking busy state and the error to show. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // Stable across renders, so effects may depend on it.
  const run = useCallback(async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}

/** Bumps every `ms` while the page is visible: the periodic part of a page's refresh (live signals do the rest). */
export function useTicker(ms: number): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') setN((x) => x + 1);
    }, ms);
    return () => clearInterval(t);
  }, [ms]);
  return n;
}
