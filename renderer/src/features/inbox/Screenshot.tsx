import './screenshot.css';
import { useEffect, useState } from 'react';
import { getBlob } from '../../api/client';
import { Dialog, ErrorText } from '../../components/ui';

/**
 * A browser workflow's failure screenshot (`GET /browser-shot/{key}`, docs/api.md "Browser workflows"):
 * fetched with the session's auth header as a blob and shown from an object URL; a thumbnail that opens
 * the full 1280×900 image in a dialog.
 */
export function Screenshot({
  shotKey,
  label = 'Screenshot of the failed step',
}: {
  shotKey: string;
  label?: string;
}) {
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [open, setOpen] = useState(false);
  useEffect(() => {
    let live = true;
    let made: string | null = null;
    setUrl(null);
    setError(null);
    getBlob(`/browser-shot/${encodeURIComponent(shotKey)}`).then(
      (blob) => {
        if (!live) return;
        made = URL.createObjectURL(blob);
        setUrl(made);
      },
      (err) => live && setError(err),
    );
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [shotKey]);
  if (error) return <ErrorText error={error} />;
  if (!url)
    return (
      <p className="shot-thumb placeholder" aria-busy="true">
        Loading screenshot…
      </p>
    );
  return (
    <>
      <button
        type="button"
        className="shot-thumb"
        onClick={() => setOpen(true)}
        aria-label={`${label}: open larger`}
      >
        <img src={url} alt={label} />
      </button>
      <Dialog title={label} open={open} onClose={() => setOpen(false)}>
        <img src={url} alt={label} className="shot-large" />
      </Dialog>
    </>
  );
}
