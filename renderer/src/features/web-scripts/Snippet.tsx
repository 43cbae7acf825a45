import { CopyField } from '../../components/ui';
import type { WebScript } from './types';
import { snippetExamples } from './webScripts';

/**
 * The snippet to paste into a page. The full token exists only in the create and rotate answers
 * (`shownOnce`); afterwards the server answers the masked one, shown for reading.
 */
export function Snippet({ script, shownOnce }: { script: WebScript; shownOnce: boolean }) {
  const headId = `snippet-${script.id}`;
  const [tag, ...rest] = snippetExamples(script.url);
  return (
    <section className={shownOnce ? 'card stack shown-once' : 'card stack'} aria-labelledby={headId}>
      <h2 id={headId}>Snippet</h2>
      {shownOnce ? (
        <div className="stack" role="status">
          <CopyField label="Snippet (shown once)" value={tag!.value} secret />
          <p className="hint">
            Copy it now into your pages’ <span className="mono">&lt;head&gt;</span>: Belfry keeps only a
            fingerprint of its token and cannot show it again. “New token” makes another one.
          </p>
        </div>
      ) : (
        <div className="stack">
          <CopyField label="Snippet (token masked)" value={tag!.value} />
          <p className="hint">
            The token is masked: the full snippet was shown once, when the script was made or its token last
            replaced. “New token” makes a new one (the old one stops working at once).
          </p>
        </div>
      )}
      <details open={shownOnce}>
        <summary>With a release, and capturing your own messages</summary>
        <div className="stack">
          {rest.map((e) =>
            shownOnce || !e.value.includes(script.url) ? (
              <CopyField key={e.label} label={e.label} value={e.value} />
            ) : (
              <div key={e.label} className="field">
                <span className="hint">{e.label}</span>
                <code className="mono example">{e.value}</code>
              </div>
            ),
          )}
          <p className="hint">
            <span className="mono">data-release</span> tags every event with your build, so source maps of
            that release resolve its stacks. <span className="mono">window.Belfry.capture(message)</span>{' '}
            reports something you caught; <span className="mono">window.Belfry.flush()</span> sends what is
            queued now. Events are sent every 5 s, at 20 queued, 1 s after an error and when the page is
            hidden; at most 100 a page a minute.
          </p>
        </div>
      </details>
    </section>
  );
}
