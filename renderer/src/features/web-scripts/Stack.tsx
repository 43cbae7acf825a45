import type { StackFrame } from './types';

/** `file:line:col`. */
export function where(p: { file: string; line: number; col: number }): string {
  return `${p.file}:${p.line}:${p.col}`;
}

/** Runs of frames: each in-app frame alone, consecutive library frames together (shown collapsed). */
export function frameRuns(frames: StackFrame[]): { library: boolean; frames: StackFrame[] }[] {
  const runs: { library: boolean; frames: StackFrame[] }[] = [];
  for (const f of frames) {
    const last = runs.at(-1);
    if (!f.inApp && last?.library) last.frames.push(f);
    else runs.push({ library: !f.inApp, frames: [f] });
  }
  return runs;
}

function FrameRow({ f }: { f: StackFrame }) {
  const name = f.original?.name ?? f.fn;
  const printed = where(f);
  const shown = f.original ? where(f.original) : printed;
  return (
    <li
      className={`ws-frame ${f.inApp ? 'in-app' : 'library'}`}
      title={f.original ? `minified: ${printed}` : undefined}
    >
      <span className="mono">
        at <span className="ws-frame-fn">{name ?? '(anonymous)'}</span>{' '}
        <span className="ws-frame-at">{shown}</span>
      </span>
      {f.original ? (
        <span className="mono ws-frame-min">
          minified: {f.fn ? `${f.fn} ` : ''}
          {printed}
        </span>
      ) : null}
    </li>
  );
}

/**
 * The latest event's stack, top first: original positions where a source map covers a frame (the
 * minified one below it and on hover), the page's own frames emphasised, library frames folded.
 */
export function Stack({ frames }: { frames: StackFrame[] }) {
  return (
    <ol className="ws-frames" aria-label="Stack">
      {frameRuns(frames).map((run, i) =>
        run.library ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: runs follow the stack's fixed order
          <li key={i}>
            <details className="ws-libs">
              <summary>
                {run.frames.length === 1 ? '1 library frame' : `${run.frames.length} library frames`}
              </summary>
              <ol className="ws-frames">
                {run.frames.map((f, j) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: frames have no id and never reorder
                  <FrameRow key={j} f={f} />
                ))}
              </ol>
            </details>
          </li>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: runs follow the stack's fixed order
          <FrameRow key={i} f={run.frames[0]!} />
        ),
      )}
    </ol>
  );
}
