import './assistant.css';
import { useCallback, useEffect, useState } from 'react';
import { get, query, session } from '../../api/client';
import type { Insight, Insights } from '../../api/types';
import { Link } from '../../app/router';
import { ErrorText, formatDate, useAction } from '../../components/ui';
import { assistantLang, insightHref } from './links';
import { rememberProvider, useAssistantProvider } from './provider';

/** How many insights the card lists; the rest are counted. */
export const SHOWN = 5;
const CACHE = 'belfry.insights';
const COLLAPSED = 'belfry.insights.collapsed';
const DISMISSED = 'belfry.insights.dismissed';
const SEVERITY_ORDER = { critical: 0, warning: 1, info: 2 } as const;
const SEVERITY_LABEL = { critical: 'Critical', warning: 'Warning', info: 'Info' } as const;

/** What an insight is about (kind and links, not the wording, which polishing changes). */
const about = (i: Insight) => `${i.kind}:${i.links.map((l) => `${l.kind}${l.id}`).join(',')}`;
const signature = (items: readonly Insight[]) => items.map(about).join('|');

/** Whose insights the session cache holds: the end of the device token (the whole one is in localStorage). */
const owner = () => session.token?.slice(-8) ?? '';

function stored(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}
function store(key: string, value: string | null): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // Private windows may refuse storage: the card then forgets its state on reload, nothing worse.
  }
}

/**
 * The assistant's insights on the inbox (docs/api.md, "Assistant"): what looks wrong (a source down
 * for over an hour, a noisy channel, quota nearly spent, …), most severe first, each linking to the
 * channel or source it is about. Nothing is shown while loading or when there is nothing to say; the
 * last answer is remembered for the session, so a return to the inbox shows it at once instead of
 * shifting the messages down a moment later. Collapsing is remembered; dismissing hides the card until
 * the insights are about something else.
 */
export function InsightsCard() {
  const [insights, setInsights] = useState<Insights | null>(() => {
    try {
      const kept = JSON.parse(sessionStorage.getItem(CACHE) ?? 'null') as {
        owner: string;
        insights: Insights;
      } | null;
      // Only this sign-in's: another account signed in in this tab must not see them, even for a moment.
      return kept && kept.owner === owner() ? kept.insights : null;
    } catch {
      return null;
    }
  });
  const [collapsed, setCollapsed] = useState(() => stored(COLLAPSED) === '1');
  const [dismissed, setDismissed] = useState(() => stored(DISMISSED));
  const act = useAction();
  const provider = useAssistantProvider();
  /** A polish that came back in the rules' words (the model failed, or is no longer configured). */
  const [unpolished, setUnpolished] = useState(false);

  const fetchInsights = useCallback(
    (opts: { refresh?: boolean; polish?: boolean } = {}) =>
      act.run(async () => {
        const i = await get<Insights>(
          `/assistant/insights${query({ refresh: opts.refresh ? 1 : undefined, polish: opts.polish ? 1 : undefined, lang: assistantLang() })}`,
        );
        setInsights(i);
        if (i.polished) rememberProvider(i.provider);
        else if (i.model !== undefined) rememberProvider(i.model ?? 'local');
        setUnpolished(!!opts.polish && !i.polished);
        try {
          sessionStorage.setItem(CACHE, JSON.stringify({ owner: owner(), insights: i }));
        } catch {
          // As above: no session cache, the card still works.
        }
      }),
    [act.run],
  );
  useEffect(() => void fetchInsights(), [fetchInsights]);

  if (!insights || insights.items.length === 0) return null;
  const sig = signature(insights.items);
  if (dismissed === sig) return null;
  const items = [...insights.items].sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
  const worst = items[0]?.severity ?? 'info';
  const toggle = () => {
    store(COLLAPSED, collapsed ? null : '1');
    setCollapsed(!collapsed);
  };
  const dismiss = () => {
    store(DISMISSED, sig);
    setDismissed(sig);
  };

  return (
    <section className={`card insights ${worst}`} aria-labelledby="insights-title">
      <div className="row wrap insights-head">
        <h2 id="insights-title" className="grow">
          Insights <span className="hint">({items.length})</span>
        </h2>
        <button
          type="button"
          className="ghost"
          aria-expanded={!collapsed}
          aria-controls="insights-body"
          onClick={toggle}
        >
          {collapsed ? 'Show' : 'Hide'}
        </button>
        <button type="button" className="ghost" onClick={dismiss} aria-label="Dismiss insights">
          Dismiss
        </button>
      </div>
      {collapsed ? null : (
        <div id="insights-body" className="stack">
          <ul className="message-list" aria-label="Insights">
            {items.slice(0, SHOWN).map((i) => (
              <li key={`${about(i)}:${i.title}`} className={`insight ${i.severity}`}>
                <span className={`severity ${i.severity}`}>{SEVERITY_LABEL[i.severity]}</span>
                <div className="grow">
                  <strong className="insight-title">{i.title}</strong>
                  <p className="insight-detail">{i.detail}</p>
                  {i.links.length ? (
                    <p className="insight-links">
                      {i.links.map((l) => {
                        const href = insightHref(l);
                        return href ? (
                          <Link key={`${l.kind}${l.id}`} to={href}>
                            {l.label}
                          </Link>
                        ) : (
                          <span key={`${l.kind}${l.id}`}>{l.label}</span>
                        );
                      })}
                    </p>
                  ) : null}
                </div>
              </li>
            ))}
          </ul>
          {items.length > SHOWN ? <p className="hint">{items.length - SHOWN} more not shown.</p> : null}
          <ErrorText error={act.error} />
          {unpolished ? (
            <p className="hint" role="status">
              The model did not reword them this time; these are the rules’ words.
            </p>
          ) : null}
          <div className="actions">
            <button type="button" onClick={() => void fetchInsights({ refresh: true })} disabled={act.busy}>
              {act.busy ? 'Refreshing…' : 'Refresh'}
            </button>
            {provider && provider !== 'local' ? (
              <button type="button" onClick={() => void fetchInsights({ polish: true })} disabled={act.busy}>
                Polish with AI
              </button>
            ) : null}
            <Link to="/chat">Ask the assistant</Link>
            <span className="hint">
              {insights.polished ? `Worded by ${insights.provider}, ` : ''}as of{' '}
              {formatDate(insights.generatedAt)}
            </span>
          </div>
        </div>
      )}
    </section>
  );
}
