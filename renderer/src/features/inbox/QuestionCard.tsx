import './questions.css';
import { type ReactNode, useCallback, useEffect, useId, useRef, useState } from 'react';
import { ApiError, answerQuestion, errorText, getQuestion } from '../../api/client';
import type {
  QuestionExtra,
  QuestionField,
  QuestionRecord,
  QuestionStatus,
  QuestionUpdated,
} from '../../api/types';
import { useLive, useServiceEvents } from '../../app/live';
import { ErrorText, formatDate } from '../../components/ui';
import {
  answeredByText,
  answerRows,
  answerText,
  countdown,
  type FieldValue,
  type FormValues,
  fieldErrorOf,
  fieldLabel,
  formAnswer,
  goneStatus,
  initialValues,
  textAnswerProblem,
} from './question';

const STATUS_TEXT: Record<QuestionStatus, string> = {
  pending: 'Waiting for an answer',
  answered: 'Answered',
  expired: 'Expired',
  cancelled: 'Cancelled',
};

/** The current time, moving every second while `running`. */
function useNow(running: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!running) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [running]);
  return now;
}

/**
 * A question message (wire-families §7) as a card: its text, the controls of its type while it is
 * pending, a live countdown to `expiresAt`, and the final state from `GET /ask-question/{id}`, kept
 * current by `question:updated` frames of the socket.
 */
export function QuestionCard({
  question: q,
  text,
  canAnswer,
  onAnswered,
}: {
  question: QuestionExtra;
  /** False on a channel shared with this user for viewing only (answering needs `send`). */
  canAnswer: boolean;
  /** The question itself (the message text, plain or Markdown). */
  text: ReactNode;
  /** This device answered: the server marked the message read. */
  onAnswered: () => void;
}) {
  const textId = useId();
  const [record, setRecord] = useState<QuestionRecord | null>(null);
  const [status, setStatus] = useState<QuestionStatus>('pending');
  const [loadError, setLoadError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const pending = status === 'pending';
  const now = useNow(pending);
  // The record's deadline wins over the message's: an extended question has a later one.
  const expiresAt = record?.expiresAt ?? q.expiresAt;
  const left = countdown(expiresAt, now);
  const timeUp = left === 'expired';

  // Only the latest read counts: a slow answer from before a frame must not bring back "pending".
  const reads = useRef(0);
  const refresh = useCallback(async () => {
    const at = ++reads.current;
    try {
      const r = await getQuestion<QuestionRecord>(q.id);
      if (at !== reads.current) return;
      setRecord(r);
      setStatus(r.status);
      setLoadError(null);
    } catch (err) {
      if (at !== reads.current) return;
      if (err instanceof ApiError && err.status === 410) {
        setStatus(goneStatus(err.message));
        setLoadError(null);
      } else setLoadError(err);
    }
  }, [q.id]);
  useEffect(() => void refresh(), [refresh]);

  useServiceEvents((e) => {
    if (e.kind !== 'question:updated') return;
    const d = e.data as Partial<QuestionUpdated>;
    if (d.id !== q.id) return;
    if (d.status === 'expired' || d.status === 'cancelled') setStatus(d.status);
    void refresh();
  });

  // Frames sent while the socket was down never arrive: read the record again when it is back.
  const { state: live } = useLive();
  const wasOpen = useRef(false);
  useEffect(() => {
    if (live !== 'open') return;
    if (wasOpen.current && pending) void refresh();
    wasOpen.current = true;
  }, [live, pending, refresh]);

  // At zero the server expires the question on its next tick; its frame follows, this read is a backstop.
  useEffect(() => {
    if (timeUp && pending) void refresh();
  }, [timeUp, pending, refresh]);

  const submit = async (answer: unknown) => {
    setBusy(true);
    setError(null);
    try {
      const r = await answerQuestion<QuestionRecord>(q.id, answer);
      if (r && typeof r === 'object' && typeof r.status === 'string') {
        reads.current++;
        setRecord(r);
        setStatus(r.status);
      } else await refresh();
      onAnswered();
    } catch (err) {
      setError(err);
      if (err instanceof ApiError && err.status === 410) setStatus(goneStatus(err.message));
      else if (err instanceof ApiError && err.status === 409) await refresh();
    } finally {
      setBusy(false);
    }
  };

  const disabled = busy || timeUp;
  return (
    <section className={`question-card q-${status}`} aria-labelledby={textId}>
      <div id={textId} className="q-text">
        {text}
      </div>
      <p className="q-state">
        <span className={`q-badge ${status}`}>{STATUS_TEXT[status]}</span>
        {pending ? (
          <span className="q-countdown" role="timer" aria-label="Time left to answer">
            {timeUp ? (
              'expired'
            ) : (
              <>
                {'Time left '}
                <time dateTime={expiresAt} title={`Answer by ${formatDate(expiresAt)}`}>
                  {left}
                </time>
              </>
            )}
          </span>
        ) : null}
      </p>
      {pending && !canAnswer ? (
        <p className="hint">This channel is shared with you to read: its owner or a sender answers.</p>
      ) : pending ? (
        <Controls question={q} labelledBy={textId} disabled={disabled} error={error} onSubmit={submit} />
      ) : (
        <FinalState status={status} record={record} question={q} />
      )}
      {!pending && error && !(error instanceof ApiError && [409, 410].includes(error.status)) ? (
        <ErrorText error={error} />
      ) : null}
      {!pending && error instanceof ApiError && error.status === 409 ? (
        <p className="hint">Someone answered first.</p>
      ) : null}
      <ErrorText error={loadError} />
    </section>
  );
}

function FinalState({
  status,
  record,
  question: q,
}: {
  status: QuestionStatus;
  record: QuestionRecord | null;
  question: QuestionExtra;
}) {
  const answered =
    record && record.status === status && record.answer !== null && record.answer !== undefined;
  const fields = record?.fields ?? q.fields;
  return (
    <div className="q-final" role="status">
      {answered ? (
        <>
          {record.answer &&
          typeof record.answer === 'object' &&
          !Array.isArray(record.answer) &&
          fields.length ? (
            <>
              <p className="q-answer-head">Answer</p>
              <dl className="q-answer-rows">
                {answerRows(fields, record.answer as Record<string, unknown>).map((r) => (
                  <div key={r.label}>
                    <dt>{r.label}</dt>
                    <dd>{r.value}</dd>
                  </div>
                ))}
              </dl>
            </>
          ) : (
            <p>
              <span className="q-answer-head">Answer: </span>
              <strong className="q-answer">{answerText(record.answer)}</strong>
            </p>
          )}
          <p className="hint">
            {`Answered ${answeredByText(record.answeredBy)}`.trim()}
            {record.answeredAt ? (
              <>
                {' · '}
                <time dateTime={record.answeredAt}>{formatDate(record.answeredAt)}</time>
              </>
            ) : null}
          </p>
        </>
      ) : status === 'expired' ? (
        // (A default answer submitted at the deadline is not readable here: GET answers 410 once expired.)
        <p>Expired: nobody answered in time.</p>
      ) : status === 'cancelled' ? (
        <p>The sender cancelled this question.</p>
      ) : (
        <p className="hint">Loading the answer…</p>
      )}
    </div>
  );
}

function Controls({
  question: q,
  labelledBy,
  disabled,
  error,
  onSubmit,
}: {
  question: QuestionExtra;
  labelledBy: string;
  disabled: boolean;
  error: unknown;
  onSubmit: (answer: unknown) => Promise<void>;
}) {
  if (q.type === 'choice')
    return (
      <>
        <fieldset className="q-options" aria-labelledby={labelledBy}>
          {q.options.map((o) => (
            <button
              key={o}
              type="button"
              className={o === q.defaultOption ? 'primary' : undefined}
              disabled={disabled}
              onClick={() => void onSubmit(o)}
            >
              {o}
            </button>
          ))}
        </fieldset>
        <ErrorText error={error} />
      </>
    );
  if (q.type === 'multi')
    return <MultiForm question={q} labelledBy={labelledBy} {...{ disabled, error, onSubmit }} />;
  if (q.type === 'form')
    return <FieldsForm question={q} labelledBy={labelledBy} {...{ disabled, error, onSubmit }} />;
  return <TextForm question={q} labelledBy={labelledBy} {...{ disabled, error, onSubmit }} />;
}

/** A form that is checked here before it is sent (noValidate: the page's own texts, not the browser's). */
function AnswerForm({
  labelledBy,
  disabled,
  onSubmit,
  children,
}: {
  labelledBy: string;
  disabled: boolean;
  onSubmit: () => void;
  children: ReactNode;
}) {
  return (
    <form
      className="q-form"
      aria-labelledby={labelledBy}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      {children}
      <div className="q-submit">
        <button type="submit" className="primary" disabled={disabled}>
          Submit
        </button>
      </div>
    </form>
  );
}

/** One checkbox per option (the highlighted one in bold); `picked` keeps the order of checking. */
function Checks({
  options,
  highlighted = null,
  picked,
  disabled,
  onChange,
}: {
  options: readonly string[];
  highlighted?: string | null;
  picked: readonly string[];
  disabled: boolean;
  onChange: (picked: string[]) => void;
}) {
  return (
    <div className="q-checks">
      {options.map((o) => (
        <label key={o} className={o === highlighted ? 'check q-default' : 'check'}>
          <input
            type="checkbox"
            checked={picked.includes(o)}
            disabled={disabled}
            onChange={(e) => onChange(e.target.checked ? [...picked, o] : picked.filter((x) => x !== o))}
          />{' '}
          {o}
        </label>
      ))}
    </div>
  );
}

interface FormProps {
  question: QuestionExtra;
  labelledBy: string;
  disabled: boolean;
  error: unknown;
  onSubmit: (answer: unknown) => Promise<void>;
}

function MultiForm({ question: q, labelledBy, disabled, error, onSubmit }: FormProps) {
  const [picked, setPicked] = useState<string[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <AnswerForm
      labelledBy={labelledBy}
      disabled={disabled}
      onSubmit={() => {
        if (picked.length === 0) return setProblem('Choose at least one option.');
        setProblem(null);
        void onSubmit(q.options.filter((o) => picked.includes(o)));
      }}
    >
      <fieldset>
        <legend>Choose one or more</legend>
        <Checks
          options={q.options}
          highlighted={q.defaultOption}
          picked={picked}
          disabled={disabled}
          onChange={setPicked}
        />
      </fieldset>
      {problem ? (
        <p className="error" role="alert">
          {problem}
        </p>
      ) : null}
      <ErrorText error={error} />
    </AnswerForm>
  );
}

function TextForm({ question: q, labelledBy, disabled, error, onSubmit }: FormProps) {
  const id = useId();
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const json = q.format === 'json';
  return (
    <AnswerForm
      labelledBy={labelledBy}
      disabled={disabled}
      onSubmit={() => {
        const p = textAnswerProblem(text, q.format);
        setProblem(p);
        // JSON goes as typed: the server parses a string that is JSON.
        if (!p) void onSubmit(text);
      }}
    >
      <div className="field">
        <label htmlFor={id}>{json ? 'Your answer (JSON)' : 'Your answer'}</label>
        <textarea
          id={id}
          className={json ? 'mono' : undefined}
          rows={json ? 5 : 3}
          value={text}
          required
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? `${id}-error` : undefined}
          disabled={disabled}
          placeholder={json ? '{"ok": true}' : undefined}
          onChange={(e) => setText(e.target.value)}
        />
        {problem ? (
          <p id={`${id}-error`} className="error" role="alert">
            {problem}
          </p>
        ) : null}
      </div>
      <ErrorText error={error} />
    </AnswerForm>
  );
}

function FieldsForm({ question: q, labelledBy, disabled, error, onSubmit }: FormProps) {
  const [values, setValues] = useState<FormValues>(() => initialValues(q.fields));
  const [errors, setErrors] = useState<Record<string, string>>({});
  // A server 400 that names a field (`answer.{field}: …`) is shown next to it; others below the form.
  const serverText = error ? errorText(error) : '';
  const serverField = error instanceof ApiError && error.status === 400 ? fieldErrorOf(serverText) : null;
  const known = serverField && q.fields.some((f) => f.name === serverField.field) ? serverField : null;
  const shown = known ? { ...errors, [known.field]: errors[known.field] ?? known.text } : errors;
  const count = Object.keys(errors).length;
  return (
    <AnswerForm
      labelledBy={labelledBy}
      disabled={disabled}
      onSubmit={() => {
        const { answer, errors: found } = formAnswer(q.fields, values);
        setErrors(found);
        if (Object.keys(found).length === 0) void onSubmit(answer);
      }}
    >
      {q.fields.map((f) => (
        <FormField
          key={f.name}
          field={f}
          value={values[f.name] ?? ''}
          error={shown[f.name] ?? null}
          disabled={disabled}
          onChange={(v) => {
            setValues((p) => ({ ...p, [f.name]: v }));
            if (errors[f.name]) setErrors(({ [f.name]: _, ...rest }) => rest);
          }}
        />
      ))}
      {count > 0 ? (
        <p className="error" role="alert">
          {count === 1 ? 'One field needs attention.' : `${count} fields need attention.`}
        </p>
      ) : null}
      {error && !known ? <ErrorText error={error} /> : null}
      {known ? (
        <p className="error" role="alert">
          {serverText}
        </p>
      ) : null}
    </AnswerForm>
  );
}

function FormField({
  field: f,
  value,
  error,
  disabled,
  onChange,
}: {
  field: QuestionField;
  value: FieldValue;
  error: string | null;
  disabled: boolean;
  onChange: (v: FieldValue) => void;
}) {
  const id = useId();
  const label = fieldLabel(f);
  const errId = `${id}-error`;
  const invalid = error ? { 'aria-invalid': true, 'aria-describedby': errId } : {};
  const errorLine = error ? (
    <p id={errId} className="error field-error">
      {label}: {error}
    </p>
  ) : null;
  const star = f.required ? (
    <span className="q-required" aria-hidden="true">
      {' *'}
    </span>
  ) : null;
  const str = typeof value === 'string' ? value : '';

  if (f.type === 'boolean')
    return (
      <div className="field">
        <label className="check">
          <input
            type="checkbox"
            checked={value === true}
            disabled={disabled}
            onChange={(e) => onChange(e.target.checked)}
            {...invalid}
          />{' '}
          {label}
          {star}
        </label>
        {errorLine}
      </div>
    );
  if (f.type === 'multiselect') {
    const picked = Array.isArray(value) ? value : [];
    return (
      <fieldset className="field" {...(error ? { 'aria-describedby': errId } : {})}>
        <legend>
          {label}
          {f.required ? (
            <span className="q-required" aria-hidden="true">
              {' *'}
            </span>
          ) : null}
          {f.required ? <span className="sr-only"> (required)</span> : null}
        </legend>
        <Checks options={f.options ?? []} picked={picked} disabled={disabled} onChange={onChange} />
        {errorLine}
      </fieldset>
    );
  }
  let control: ReactNode;
  const common = {
    id,
    disabled,
    required: f.required || undefined,
    ...invalid,
  };
  if (f.type === 'textarea')
    control = (
      <textarea
        {...common}
        rows={3}
        value={str}
        placeholder={f.placeholder}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  else if (f.type === 'select')
    control = (
      <select {...common} value={str} onChange={(e) => onChange(e.target.value)}>
        <option value="">{f.placeholder ?? 'Choose…'}</option>
        {(f.options ?? []).map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  else
    control = (
      <input
        {...common}
        // Numbers are typed as text and checked like the server does (`must be a number`), with a
        // decimal keypad on phones.
        type={f.type === 'email' ? 'email' : f.type === 'date' ? 'date' : 'text'}
        inputMode={f.type === 'number' ? 'decimal' : f.type === 'email' ? 'email' : undefined}
        autoComplete={f.type === 'email' ? 'email' : 'off'}
        value={str}
        placeholder={f.placeholder}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {star}
      </label>
      {control}
      {errorLine}
    </div>
  );
}
