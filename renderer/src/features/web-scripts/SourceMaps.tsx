import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { api, del, get } from '../../api/client';
import { ErrorText, Field, formatDate, useAction } from '../../components/ui';
import type { SourceMap } from './types';

function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Source maps of a script: upload (file, the minified file's URL, a release), list, delete. */
export function SourceMaps({ scriptId }: { scriptId: number }) {
  const [maps, setMaps] = useState<SourceMap[] | null>(null);
  const [url, setUrl] = useState('');
  const [release, setRelease] = useState('');
  const [bump, setBump] = useState(0);
  const fileRef = useRef<HTMLInputElement>(null);
  const load = useAction();
  const act = useAction();
  const headId = useId();
  const base = `/web-script/${scriptId}/sourcemaps`;
  // biome-ignore lint/correctness/useExhaustiveDependencies: `bump` is the refetch trigger
  useEffect(() => {
    void load.run(async () => setMaps(await get<SourceMap[]>(base)));
  }, [base, bump, load.run]);

  const upload = (e: FormEvent) => {
    e.preventDefault();
    const file = fileRef.current?.files?.[0];
    void act.run(async () => {
      const fd = new FormData();
      if (file) fd.append('file', file);
      fd.append('url', url.trim());
      if (release.trim()) fd.append('release', release.trim());
      await api<SourceMap>('POST', base, { body: fd });
      setUrl('');
      setRelease('');
      if (fileRef.current) fileRef.current.value = '';
      setBump((n) => n + 1);
    });
  };

  return (
    <section className="card stack" aria-labelledby={headId}>
      <h2 id={headId}>Source maps</h2>
      <p className="hint">
        Upload the <span className="mono">.map</span> of a minified file and stacks from it show your original
        files, lines and names. The URL is the minified file’s (
        <span className="mono">https://…/app.min.js</span>) or{' '}
        <span className="mono">~/assets/app.min.js</span> for any host; with a release, events of that release
        use it first. CI can upload with Basic credentials.
      </p>
      <form className="stack" onSubmit={upload} aria-label="Upload a source map">
        <div className="grid2">
          <Field label="Source map file">
            {(id) => <input id={id} ref={fileRef} type="file" accept=".map,application/json" required />}
          </Field>
          <Field label="Minified file URL">
            {(id) => (
              <input
                id={id}
                className="mono"
                value={url}
                onChange={(e) => setUrl(e.target.value)}
                placeholder="https://example.com/assets/app.min.js"
                required
              />
            )}
          </Field>
          <Field label="Release" hint="Optional: the data-release of the pages using it">
            {(id) => <input id={id} value={release} onChange={(e) => setRelease(e.target.value)} />}
          </Field>
        </div>
        <ErrorText error={act.error} />
        <div className="actions">
          <button type="submit" className="primary" disabled={act.busy}>
            Upload source map
          </button>
        </div>
      </form>
      <ErrorText error={load.error} />
      {maps && maps.length === 0 ? <p className="empty">No source maps.</p> : null}
      <ul className="rows" aria-label="Source maps">
        {(maps ?? []).map((m) => (
          <li key={m.id} className="ws-map" aria-label={`${m.url}${m.release ? ` @ ${m.release}` : ''}`}>
            <div className="ws-issue-main">
              <span className="mono ws-url">{m.url}</span>
              <span className="hint">
                {m.release ? `release ${m.release}` : 'any release'} · {size(m.size)} · {m.sources.length}{' '}
                source{m.sources.length === 1 ? '' : 's'} · {formatDate(m.createdAt)}
              </span>
            </div>
            <button
              type="button"
              className="danger"
              onClick={() =>
                void act.run(async () => {
                  if (!confirm(`Delete the source map of ${m.url}?`)) return;
                  await del(`${base}/${m.id}`);
                  setBump((n) => n + 1);
                })
              }
            >
              Delete<span className="sr-only"> the map of {m.url}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
