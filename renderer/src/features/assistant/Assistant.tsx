import './assistant.css';
import { type KeyboardEvent, useCallback, useEffect, useId, useRef, useState } from 'react';
import { ApiError, del, get, post, query } from '../../api/client';
import type { AssistantMessage, AssistantReply, AssistantThread } from '../../api/types';
import { Link, navigate, useLocation } from '../../app/router';
import { Markdown } from '../../components/Markdown';
import { ErrorText, formatDate, useAction } from '../../components/ui';
import { assistantLang } from './links';
import { rememberProvider, useAssistantProvider } from './provider';

/** The server's limit on one message (docs/api.md, "Assistant"). */
export const MAX_MESSAGE = 4000;

/** A message sent and not yet answered, or whose sending failed (then shown with a Retry). */
interface Outgoing {
  text: string;
  threadId: number | null;
}

/**
 * The assistant (docs/assistant.md): threads on the left, latest first; the open thread's messages oldest
 * first, the assistant's as sanitised Markdown; a composer (Enter sends, Shift+Enter is a new line). The
 * open thread is in the address (`/chat?thread=`; `/assistant` itself belongs to the API), so Back and a
 * reload keep it. Without a model configured on the server the answers come from local rules, and the
 * page says how to configure one.
 */
export default function Assistant() {
  const { search } = useLocation();
  const threadId = Number(search.get('thread')) || null;
  const [threads, setThreads] = useState<AssistantThread[] | null>(null);
  const [messages, setMessages] = useState<AssistantMessage[]>([]);
  /** The thread `messages` belong to (undefined: none loaded yet); another one is shown dimmed meanwhile. */
  const [shownFor, setShownFor] = useState<number | null | undefined>(undefined);
  const provider = useAssistantProvider();
  const [draft, setDraft] = useState('');
  /** The question being sent, or one the server did not store (shown as a failed bubble). */
  const [outgoing, setOutgoing] = useState<Outgoing | null>(null);
  /** The last send's error and what Retry sends again. */
  const [failure, setFailure] = useState<{ error: unknown; retry: Outgoing } | null>(null);
  const [sending, setSending] = useState(false);
  /** The latest reply, for screen readers (a polite live region). */
  const [announced, setAnnounced] = useState('');
  const load = useAction();
  const act = useAction();
  const composer = useRef<HTMLTextAreaElement>(null);
  const end = useRef<HTMLDivElement>(null);
  const counterId = useId();
  /** Set by a send; once the composer is enabled again, it gets the focus back. */
  const refocus = useRef(false);
  useEffect(() => {
    if (!sending && refocus.current) {
      refocus.current = false;
      composer.current?.focus();
    }
  }, [sending]);

  const loadThreads = useCallback(
    () =>
      load.run(async () => {
        setThreads(await get<AssistantThread[]>('/assistant/threads'));
      }),
    [load.run],
  );
  useEffect(() => void loadThreads(), [loadThreads]);

  // The open thread's messages; an answer for a thread no longer open is dropped.
  const opened = useRef(threadId);
  opened.current = threadId;
  const loadMessages = useCallback(
    (id: number | null) =>
      load.run(async () => {
        const list = id ? await get<AssistantMessage[]>(`/assistant/threads/${id}/messages`) : [];
        if (opened.current !== id) return;
        setMessages(list);
        setShownFor(id);
      }),
    [load.run],
  );
  /** Set when a send itself opens a thread: its error and Retry stay. */
  const keepFailure = useRef(false);
  useEffect(() => {
    if (!keepFailure.current) setFailure(null);
    keepFailure.current = false;
    setOutgoing(null);
    void loadMessages(threadId);
  }, [threadId, loadMessages]);

  /** Shows thread `id` after a send: reloads it when open, else opens it (keeping the failure when `keep`). */
  const show = (id: number, keep: boolean) => {
    if (id === opened.current) return void loadMessages(id);
    opened.current = id;
    keepFailure.current = keep;
    navigate(`/chat${query({ thread: id })}`);
  };

  // The newest message (or the pending one) in view.
  // biome-ignore lint/correctness/useExhaustiveDependencies: scroll whenever what is shown grows
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [messages.length, outgoing, sending]);

  const send = async (out: Outgoing) => {
    setSending(true);
    setFailure(null);
    setOutgoing(out);
    const known = new Set(threads?.map((t) => t.id));
    try {
      const r = await post<AssistantReply>('/assistant/chat', {
        ...(out.threadId ? { threadId: out.threadId } : {}),
        message: out.text,
        lang: assistantLang(),
      });
      rememberProvider(r.provider);
      const now = new Date().toISOString();
      // Shown at once; the thread's stored messages replace these when they load.
      setMessages((prev) => [
        ...(out.threadId ? prev : []),
        { id: -2, role: 'user', content: out.text, createdAt: now },
        { id: -1, role: 'assistant', content: r.reply, createdAt: now },
      ]);
      setOutgoing(null);
      setAnnounced(r.reply);
      // The shown pair stays until the stored messages load (no flash of an empty thread).
      setShownFor(r.threadId);
      show(r.threadId, false);
      void loadThreads();
    } catch (err) {
      setFailure({ error: err, retry: out });
      // A provider failure (502) comes after the question was stored, in a new thread if none was open:
      // the thread is shown as stored, and Retry asks again there.
      if (err instanceof ApiError && err.status === 502) {
        const list = await get<AssistantThread[]>('/assistant/threads').catch(() => null);
        if (list) setThreads(list);
        const id = out.threadId ?? list?.find((t) => !known.has(t.id))?.id;
        if (id) {
          setOutgoing(null);
          setFailure({ error: err, retry: { text: out.text, threadId: id } });
          show(id, true);
        }
      }
    } finally {
      refocus.current = true;
      setSending(false);
    }
  };

  const submit = () => {
    const text = draft.trim();
    if (!text || sending || text.length > MAX_MESSAGE) return;
    setDraft('');
    void send({ text, threadId });
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      submit();
    }
  };

  const newThread = () => {
    navigate('/chat');
    composer.current?.focus();
  };
  const remove = (t: AssistantThread) =>
    act.run(async () => {
      if (!confirm(`Delete the conversation “${t.title}”?`)) return;
      await del(`/assistant/threads/${t.id}`);
      setThreads((prev) => prev?.filter((x) => x.id !== t.id) ?? null);
      if (t.id === threadId) navigate('/chat', true);
    });

  const stale = shownFor !== threadId;
  const remaining = MAX_MESSAGE - draft.length;

  return (
    <div className="assistant-page">
      <aside className="assistant-threads" aria-labelledby="assistant-threads-title">
        <div className="row">
          <h2 id="assistant-threads-title" className="grow">
            Threads
          </h2>
          <button type="button" onClick={newThread}>
            New thread
          </button>
        </div>
        {threads && threads.length === 0 ? <p className="empty">No threads yet.</p> : null}
        <ul aria-label="Threads">
          {threads?.map((t) => (
            <li key={t.id} className={t.id === threadId ? 'thread on' : 'thread'}>
              <Link
                to={`/chat${query({ thread: t.id })}`}
                aria-current={t.id === threadId ? 'page' : undefined}
                className="thread-link"
              >
                <span className="thread-title">{t.title}</span>
                <time className="hint" dateTime={t.updatedAt}>
                  {formatDate(t.updatedAt)}
                </time>
              </Link>
              <button
                type="button"
                className="ghost danger"
                aria-label={`Delete “${t.title}”`}
                onClick={() => void remove(t)}
                disabled={act.busy}
              >
                Delete
              </button>
            </li>
          ))}
        </ul>
        <ErrorText error={act.error} />
      </aside>
      <section className="assistant-chat" aria-labelledby="assistant-title">
        <h1 id="assistant-title">Assistant</h1>
        <ProviderLine provider={provider} />
        <ErrorText error={load.error} />
        <ol
          className={stale ? 'message-list stale' : 'message-list'}
          aria-label="Conversation"
          aria-busy={stale}
        >
          {messages.map((m) => (
            <li key={m.id} className={`bubble from-${m.role}`}>
              <span className="sr-only">{m.role === 'user' ? 'You:' : 'Assistant:'}</span>
              {m.role === 'assistant' ? (
                <Markdown source={m.content} />
              ) : (
                <p className="message-text">{m.content}</p>
              )}
            </li>
          ))}
          {outgoing ? (
            <li className={failure ? 'bubble from-user failed' : 'bubble from-user'}>
              <span className="sr-only">You:</span>
              <p className="message-text">{outgoing.text}</p>
            </li>
          ) : null}
        </ol>
        {!stale && !outgoing && messages.length === 0 ? (
          <p className="empty">
            Try “what is down?”, “which channel is noisy?” or “how much quota is left?”.
          </p>
        ) : null}
        {sending ? (
          <p className="thinking" role="status">
            Thinking…
          </p>
        ) : null}
        {failure ? (
          <div className="send-error row wrap">
            <ErrorText error={failure.error} />
            <button type="button" onClick={() => void send(failure.retry)} disabled={sending}>
              Retry
            </button>
          </div>
        ) : null}
        <p className="sr-only" aria-live="polite">
          {announced ? `Assistant replied: ${announced}` : ''}
        </p>
        <div ref={end} />
        <form
          className="composer"
          aria-label="Ask the assistant"
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <label htmlFor="assistant-message">Message</label>
          <textarea
            id="assistant-message"
            ref={composer}
            rows={3}
            value={draft}
            maxLength={MAX_MESSAGE}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={onKeyDown}
            disabled={sending}
            aria-describedby={counterId}
            placeholder="Ask about your channels, sources and quota"
          />
          <div className="row">
            <small id={counterId} className={remaining < 200 ? 'hint counter low' : 'hint counter'}>
              {draft.length.toLocaleString('en')} / {MAX_MESSAGE.toLocaleString('en')} characters. Enter
              sends, Shift+Enter starts a new line.
            </small>
            <span className="grow" />
            <button type="submit" className="primary" disabled={sending || !draft.trim()}>
              {sending ? 'Sending…' : 'Send'}
            </button>
          </div>
        </form>
      </section>
    </div>
  );
}

/** Who answers: local rules (with how to configure a model) or the configured model's name. */
function ProviderLine({ provider }: { provider: string | null }) {
  if (!provider) return null;
  if (provider === 'local')
    return (
      <p className="hint provider">
        Answers from local rules. For an AI model, set <code>BELFRY_ASSISTANT_URL</code> and{' '}
        <code>BELFRY_ASSISTANT_MODEL</code> on the server.
      </p>
    );
  return (
    <p className="hint provider">
      Model: <strong>{provider}</strong>
    </p>
  );
}
