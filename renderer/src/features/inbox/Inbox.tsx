import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { del, get, post, query } from '../../api/client';
import { desktop } from '../../api/desktop';
import type { Channel, Message, MessagePage } from '../../api/types';
import { useLive, useSignals } from '../../app/live';
import { navigate, useLocation } from '../../app/router';
import { ErrorText, useAction } from '../../components/ui';
import { InsightsCard } from '../assistant/InsightsCard';
import { buildTree, subtreeIds, type TreeNode } from '../channels/tree';
import { HealthDot } from '../heartbeats/HealthDot';
import { FirstMessage } from './FirstMessage';
import { MessageItem } from './MessageItem';

const PAGE = 50;

export function Inbox() {
  const { search: params, hash } = useLocation();
  const channelId = Number(params.get('channel')) || null;
  const [channels, setChannels] = useState<Channel[]>([]);
  const [messages, setMessages] = useState<Message[]>([]);
  const [since, setSince] = useState<number | undefined>(undefined);
  const [loaded, setLoaded] = useState(false);
  const [q, setQ] = useState(params.get('q') ?? '');
  const [activeQ, setActiveQ] = useState(params.get('q') ?? '');
  const [unreadOnly, setUnreadOnly] = useState(false);
  const { state: live, subscribe } = useLive();
  const load = useAction();
  const act = useAction();
  const sentinel = useRef<HTMLDivElement>(null);

  const loadChannels = useCallback(async () => {
    try {
      setChannels(await get<Channel[]>('/application'));
    } catch (err) {
      load.setError(err);
    }
  }, [load.setError]);
  useEffect(() => void loadChannels(), [loadChannels]);
  // Shares accepted, left or revoked change the channel tree.
  useSignals(() => void loadChannels());

  const pageUrl = useCallback(
    (cursor?: number) => {
      if (activeQ.trim().length >= 2)
        return `/message/search${query({ q: activeQ.trim(), appId: channelId, recursive: channelId ? 1 : undefined, limit: PAGE, since: cursor })}`;
      if (channelId)
        return `/application/${channelId}/message${query({ limit: PAGE, since: cursor, recursive: 1 })}`;
      return `/message${query({ limit: PAGE, since: cursor })}`;
    },
    [activeQ, channelId],
  );

  // Which list is shown (channel + search). A page that answers after the view changed belongs to
  // the old list and is dropped, the first page and the "older" pages alike.
  const view = useRef(0);
  // While a view loads, the old list stays on screen, dimmed, and live messages for the new view wait
  // here; they join the first page when it comes (those it does not hold yet are newer than it).
  const arrived = useRef<Message[] | null>(null);
  useEffect(() => {
    const at = ++view.current;
    arrived.current = [];
    setLoaded(false);
    setSince(undefined);
    // What arrived live while loading and `page` lacks, newest first; later messages go straight in.
    const takeArrived = (page: readonly Message[] = []) => {
      const held = new Set(page.map((m) => m.id));
      const early = (arrived.current ?? []).filter((m) => !held.has(m.id)).sort((a, b) => b.id - a.id);
      arrived.current = null;
      return early;
    };
    void load.run(async () => {
      let page: MessagePage;
      try {
        page = await get<MessagePage>(pageUrl());
      } catch (err) {
        // The error is shown, and so is what arrived live meanwhile.
        if (view.current === at) setMessages(takeArrived());
        throw err;
      }
      if (view.current !== at) return;
      setMessages([...takeArrived(page.messages), ...page.messages]);
      setSince(page.paging.since);
      setLoaded(true);
    });
  }, [pageUrl, load.run]);

  const loadMore = useCallback(async () => {
    if (!since || load.busy) return;
    const at = view.current;
    await load.run(async () => {
      const page = await get<MessagePage>(pageUrl(since));
      if (view.current !== at) return;
      setMessages((prev) => {
        const ids = new Set(prev.map((m) => m.id));
        return [...prev, ...page.messages.filter((m) => !ids.has(m.id))];
      });
      setSince(page.paging.since);
    });
  }, [since, pageUrl, load.busy, load.run]);

  // Endless scroll: load the next page when the end of the list comes into view.
  useEffect(() => {
    const el = sentinel.current;
    if (!el || !since) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) void loadMore();
    });
    io.observe(el);
    return () => io.disconnect();
  }, [since, loadMore]);

  // Live: new messages arrive over /ws without a reload.
  const visibleIds = useMemo(
    () => (channelId ? subtreeIds(channels, channelId) : null),
    [channels, channelId],
  );
  const filterRef = useRef({ visibleIds, searching: activeQ.trim().length >= 2 });
  filterRef.current = { visibleIds, searching: activeQ.trim().length >= 2 };
  useEffect(
    () =>
      subscribe((m) => {
        const f = filterRef.current;
        if (f.searching) return;
        if (f.visibleIds && !f.visibleIds.has(m.appid)) return;
        if (arrived.current) arrived.current.push(m);
        else setMessages((prev) => (prev.some((p) => p.id === m.id) ? prev : [m, ...prev]));
      }),
    [subscribe],
  );

  // After the socket comes back, fetch the newest page once: what was sent while it was down never
  // arrives as a frame. (More than a page's worth missed leaves a gap until the next load.)
  const pageUrlRef = useRef(pageUrl);
  pageUrlRef.current = pageUrl;
  const wasOpen = useRef(false);
  useEffect(() => {
    if (live !== 'open') return;
    if (!wasOpen.current) {
      wasOpen.current = true;
      return;
    }
    if (filterRef.current.searching || arrived.current) return; // search is not live; a load is coming
    const at = view.current;
    get<MessagePage>(pageUrlRef.current()).then(
      (page) => {
        if (view.current !== at) return;
        // The list is newest first, so what it lacks of the newest page is what is newer than its head.
        setMessages((prev) => [...page.messages.filter((m) => m.id > (prev[0]?.id ?? 0)), ...prev]);
      },
      () => {},
    );
  }, [live]);

  const byId = useMemo(() => new Map(channels.map((c) => [c.id, c])), [channels]);
  const tree = useMemo(() => buildTree(channels), [channels]);
  const shown = unreadOnly ? messages.filter((m) => !m.read) : messages;
  const unreadShown = messages.filter((m) => !m.read);

  const markRead = (ids: number[]) =>
    act.run(async () => {
      if (!ids.length) return;
      await post('/message/read', { ids });
      const set = new Set(ids);
      setMessages((prev) => prev.map((m) => (set.has(m.id) ? { ...m, read: true } : m)));
      void desktop()?.unreadChanged();
    });
  const markAllRead = () =>
    act.run(async () => {
      if (channelId) {
        await post(`/application/${channelId}/message/read?recursive=1`);
        setMessages((prev) => prev.map((m) => ({ ...m, read: true })));
        void desktop()?.unreadChanged();
      } else await markRead(unreadShown.map((m) => m.id).slice(0, 1000));
    });
  // Answering a question marks its message read on the server (wire-families §7.3).
  const answered = (id: number) => {
    setMessages((prev) => prev.map((m) => (m.id === id ? { ...m, read: true } : m)));
    void desktop()?.unreadChanged();
  };
  const remove = (id: number) =>
    act.run(async () => {
      await del(`/message/${id}`);
      setMessages((prev) => prev.filter((m) => m.id !== id));
      void desktop()?.unreadChanged();
    });

  const select = (id: number | null) => navigate(id ? `/inbox?channel=${id}` : '/inbox');
  const title = channelId ? (byId.get(channelId)?.name ?? 'Channel') : 'All messages';
  const searching = activeQ.trim().length >= 2;

  return (
    <div className="inbox">
      <aside className="channel-tree" aria-label="Channels">
        <h2 className="sr-only">Channels</h2>
        <ul>
          <li>
            <button
              type="button"
              className={channelId === null ? 'tree-item on' : 'tree-item'}
              onClick={() => select(null)}
              aria-current={channelId === null ? 'true' : undefined}
            >
              All messages
            </button>
          </li>
          {tree.map((n) => (
            <TreeItem key={n.channel.id} node={n} selected={channelId} onSelect={select} />
          ))}
        </ul>
      </aside>
      <section className="messages" aria-labelledby="inbox-title">
        <div className="inbox-head">
          <h1 id="inbox-title">{searching ? `Search: ${activeQ}` : title}</h1>
          <output className={`live ${live}`} title="Live updates over the message socket">
            {live === 'open' ? 'Live' : live === 'connecting' ? 'Connecting…' : 'Offline, retrying'}
          </output>
        </div>
        {channelId || searching ? null : <InsightsCard />}
        <form
          className="toolbar"
          aria-label="Search and filter"
          onSubmit={(e) => {
            e.preventDefault();
            setActiveQ(q);
          }}
        >
          <label className="sr-only" htmlFor="search">
            Search messages
          </label>
          <input
            id="search"
            type="search"
            placeholder="Search messages"
            value={q}
            onChange={(e) => setQ(e.target.value)}
          />
          <button type="submit">Search</button>
          {searching ? (
            <button
              type="button"
              onClick={() => {
                setQ('');
                setActiveQ('');
              }}
            >
              Clear
            </button>
          ) : null}
          <label className="check">
            <input type="checkbox" checked={unreadOnly} onChange={(e) => setUnreadOnly(e.target.checked)} />{' '}
            Unread only
          </label>
          <button
            type="button"
            onClick={() => void markAllRead()}
            disabled={act.busy || !loaded || unreadShown.length === 0}
          >
            Mark all read
          </button>
        </form>
        {q.trim().length === 1 ? <p className="hint">Type at least 2 characters to search.</p> : null}
        <ErrorText error={load.error} />
        <ErrorText error={act.error} />
        {loaded && messages.length === 0 ? (
          searching ? (
            <p className="empty">No messages match “{activeQ}”.</p>
          ) : (
            <FirstMessage channels={channels} channelId={channelId} onChannelsChanged={loadChannels} />
          )
        ) : null}
        <ol
          className={!loaded && load.busy ? 'message-list stale' : 'message-list'}
          aria-label="Messages"
          aria-busy={!loaded && load.busy}
        >
          {shown.map((m) => (
            <MessageItem
              key={m.id}
              message={m}
              channel={byId.get(m.appid)}
              highlighted={hash === `#message-${m.id}`}
              onRead={() => void markRead([m.id])}
              onDelete={() => void remove(m.id)}
              onAnswered={() => answered(m.id)}
            />
          ))}
        </ol>
        {since ? (
          <div ref={sentinel} className="more">
            <button type="button" onClick={() => void loadMore()} disabled={load.busy}>
              {load.busy ? 'Loading…' : 'Load older messages'}
            </button>
          </div>
        ) : loaded && messages.length > 0 ? (
          <p className="hint end">That is everything.</p>
        ) : null}
        {!loaded && load.busy ? <p className="loading">Loading…</p> : null}
      </section>
    </div>
  );
}

function TreeItem({
  node,
  selected,
  onSelect,
}: {
  node: TreeNode;
  selected: number | null;
  onSelect: (id: number) => void;
}) {
  const c = node.channel;
  return (
    <li>
      <button
        type="button"
        className={selected === c.id ? 'tree-item on' : 'tree-item'}
        onClick={() => onSelect(c.id)}
        aria-current={selected === c.id ? 'true' : undefined}
      >
        {c.image ? (
          <img src={c.image} alt="" className="logo" />
        ) : (
          <span className="logo placeholder" aria-hidden="true" />
        )}
        <span>{c.name}</span>
        <HealthDot channel={c} />
        {c.shared ? <span className="tag">shared</span> : null}
      </button>
      {node.children.length ? (
        <ul>
          {node.children.map((n) => (
            <TreeItem key={n.channel.id} node={n} selected={selected} onSelect={onSelect} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}
