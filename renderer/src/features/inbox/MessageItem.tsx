import { useEffect, useMemo, useRef } from 'react';
import type { Channel, Message } from '../../api/types';
import { isMarkdown, Markdown } from '../../components/Markdown';
import { formatDate, PriorityBadge } from '../../components/ui';
import { QuestionCard } from './QuestionCard';
import { questionOf } from './question';
import { Screenshot } from './Screenshot';

export function MessageItem({
  message: m,
  channel,
  highlighted,
  onRead,
  onDelete,
  onAnswered,
}: {
  message: Message;
  channel: Channel | undefined;
  highlighted: boolean;
  onRead: () => void;
  onDelete: () => void;
  /** A question message answered from its card: the server marked it read. */
  onAnswered: () => void;
}) {
  const ref = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (highlighted) ref.current?.scrollIntoView({ block: 'center' });
  }, [highlighted]);
  const unread = !m.read;
  const question = useMemo(() => questionOf(m.extras), [m.extras]);
  const text = isMarkdown(m.extras) ? (
    <Markdown source={m.message} />
  ) : (
    <p className="message-text">{m.message}</p>
  );
  return (
    <li
      ref={ref}
      id={`message-${m.id}`}
      className={`message${unread ? ' unread' : ''}${highlighted ? ' highlighted' : ''}`}
      aria-label={`${unread ? 'Unread: ' : ''}${m.title || channel?.name || 'Message'}`}
    >
      <div className="message-head">
        {channel?.image ? <img src={channel.image} alt="" className="logo" /> : null}
        <h2>{m.title || channel?.name || 'Message'}</h2>
        <PriorityBadge priority={m.priority} />
        {unread ? <span className="dot" title="Unread" /> : null}
      </div>
      <div className="message-meta">
        <span>{channel?.name ?? `Channel ${m.appid}`}</span>
        {m.senderName && m.senderName !== channel?.name ? <span> · {m.senderName}</span> : null}
        <span> · </span>
        <time dateTime={m.date}>{formatDate(m.date)}</time>
      </div>
      {question ? (
        <QuestionCard
          question={question}
          text={text}
          canAnswer={!(channel?.shared && channel.sharePermission === 'view')}
          onAnswered={onAnswered}
        />
      ) : (
        text
      )}
      {typeof m.extras?.['service::screenshot'] === 'string' ? (
        <Screenshot shotKey={m.extras['service::screenshot']} />
      ) : null}
      <div className="message-actions">
        {unread ? (
          <button type="button" onClick={onRead} aria-label={`Mark read: “${m.title || 'message'}”`}>
            Mark read
          </button>
        ) : (
          <span className="hint">Read</span>
        )}
        <button
          type="button"
          className="danger"
          onClick={onDelete}
          aria-label={`Delete “${m.title || 'message'}”`}
        >
          Delete
        </button>
      </div>
    </li>
  );
}
