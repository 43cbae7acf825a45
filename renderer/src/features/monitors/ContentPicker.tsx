import { type FormEvent, useId, useState } from 'react';
import { post } from '../../api/client';
import { ErrorText, useAction } from '../../components/ui';
import type { SelectorCandidate } from './types';

/**
 * "Pick the text you want to watch": the page's URL and a piece of its text go to
 * `POST /content-monitor/suggest-selector`; the user picks one of the candidates (selector, its text,
 * how many elements match), which fills the selector field.
 */
export function ContentPicker({
  url,
  render,
  onPick,
  Heading,
}: {
  /** One level below the form's heading. */
  Heading: 'h2' | 'h3';
  url: string;
  render: 'html' | 'browser';
  onPick: (selector: string) => void;
}) {
  const [text, setText] = useState('');
  const [candidates, setCandidates] = useState<SelectorCandidate[] | null>(null);
  const [failure, setFailure] = useState('');
  const [picked, setPicked] = useState('');
  const act = useAction();
  const titleId = useId();
  const textId = useId();

  const find = (e?: FormEvent) => {
    e?.preventDefault();
    void act.run(async () => {
      setFailure('');
      setPicked('');
      const r = await post<{ candidates: SelectorCandidate[]; error?: string }>(
        '/content-monitor/suggest-selector',
        { url: url.trim(), text, render },
      );
      setCandidates(r.candidates);
      setFailure(r.error ?? (r.candidates.length ? '' : `No element of the page contains “${text}”.`));
    });
  };

  return (
    <section className="mon-picker stack" aria-labelledby={titleId}>
      <Heading id={titleId}>Pick the text you want to watch</Heading>
      <p className="hint">
        Type a piece of the text as the page shows it now (a price, a version, a status word). Belfry finds
        the elements that contain it and suggests selectors, the most specific first.
      </p>
      <div className="row">
        <label className="sr-only" htmlFor={textId}>
          Text on the page
        </label>
        <input
          id={textId}
          className="grow"
          placeholder="Text on the page"
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            // Enter inside the monitor form would save it: here it searches.
            if (e.key === 'Enter') find(e);
          }}
        />
        <button type="button" onClick={() => find()} disabled={act.busy || !url.trim() || !text.trim()}>
          {act.busy ? 'Looking…' : 'Find selectors'}
        </button>
      </div>
      {!url.trim() ? <small className="hint">Enter the page’s URL first.</small> : null}
      <ErrorText error={act.error} />
      {failure ? (
        <p className="error" role="alert">
          {failure}
        </p>
      ) : null}
      {candidates?.length ? (
        <ul className="rows mon-candidates" aria-label="Suggested selectors">
          {candidates.map((c) => (
            <li key={c.selector} className={picked === c.selector ? 'on' : undefined}>
              <div className="grow">
                <code className="mono">{c.selector}</code>
                <span className="hint">
                  {' '}
                  — {c.count} element{c.count === 1 ? '' : 's'}
                </span>
                <div className="mon-candidate-text">{c.text}</div>
              </div>
              <button
                type="button"
                // The visible words first (WCAG 2.5.3), then which selector.
                aria-label={`${picked === c.selector ? 'In use' : 'Use this'}: ${c.selector}`}
                onClick={() => {
                  setPicked(c.selector);
                  onPick(c.selector);
                }}
              >
                {picked === c.selector ? 'In use' : 'Use this'}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
