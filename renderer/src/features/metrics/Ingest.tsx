import { CopyField } from '../../components/ui';
import { ingestExamples, PROMETHEUS_SAMPLE } from './metrics';
import type { MetricSource } from './types';

/**
 * The ingest URL and ready-made lines. The full URL exists only in the create and rotate answers
 * (`shownOnce`); afterwards the server answers the masked one, which is shown for reading.
 */
export function Ingest({ source, shownOnce }: { source: MetricSource; shownOnce: boolean }) {
  const headId = `ingest-${source.id}`;
  return (
    <section className={shownOnce ? 'card stack shown-once' : 'card stack'} aria-labelledby={headId}>
      <h2 id={headId}>Ingest URL</h2>
      {shownOnce ? (
        <div className="stack" role="status">
          <CopyField label="Ingest URL (shown once)" value={source.url} secret />
          <p className="hint">
            Copy it now: Belfry keeps only a fingerprint of its token and cannot show it again. “New ingest
            URL” makes another one.
          </p>
        </div>
      ) : (
        <div className="stack">
          <CopyField label="Ingest URL (token masked)" value={source.url} />
          <p className="hint">
            The token in this URL is masked: the full URL was shown once, when the source was made or its URL
            last replaced. “New ingest URL” makes a new one (the old one stops working).
          </p>
        </div>
      )}
      <details open={shownOnce}>
        <summary>Examples: curl with JSON, Prometheus text, node_exporter</summary>
        <div className="stack">
          {ingestExamples(source.url).map((e) =>
            shownOnce ? (
              <CopyField key={e.label} label={e.label} value={e.value} />
            ) : (
              <div key={e.label} className="field">
                <span className="hint">{e.label}</span>
                <code className="mono example">{e.value}</code>
              </div>
            ),
          )}
          <div className="field">
            <span className="hint">
              metrics.txt (Prometheus text format 0.0.4; every sample line is a series)
            </span>
            <pre className="mono example">{PROMETHEUS_SAMPLE}</pre>
          </div>
          <p className="hint">
            POST only; no credentials: the token in the URL is the key. JSON is one{' '}
            <span className="mono">{'{name, value, at?, tags?}'}</span> or{' '}
            <span className="mono">{'{metrics: [...]}'}</span> with up to 1,000 points;{' '}
            <span className="mono">at</span> is RFC 3339 or unix seconds (default: now). Names match{' '}
            <span className="mono">[a-zA-Z_:][a-zA-Z0-9_:.-]*</span>, up to 10 tags a point, up to 1,000
            series a source. <span className="mono"># HELP</span> lines become the series’ description.
          </p>
        </div>
      </details>
    </section>
  );
}
