import type { BrowserStepResult } from './types';

/** A browser run's steps (`details.steps` of test-step, test and check-now): ok, time and the error. */
export function BrowserSteps({ steps }: { steps: BrowserStepResult[] }) {
  return (
    <div className="table-scroll">
      <table className="table" aria-label="Step results">
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Action</th>
            <th scope="col">Result</th>
            <th scope="col">Time</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((s, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: steps run in order
            <tr key={i} className={s.ok ? undefined : 'ping-failed'}>
              <td>{i + 1}</td>
              <td className="mono">{s.action}</td>
              <td>{s.ok ? 'ok' : (s.error ?? 'failed')}</td>
              <td>{s.durationMs} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What to do when the server finds no browser (docs/api.md "The browser"). */
export function NoBrowserHelp() {
  return (
    <div className="warning stack" role="note" aria-label="No browser found">
      <strong>This Belfry server found no Chrome, Edge or Chromium.</strong>
      <span>
        Browser workflows drive a browser installed on the machine the server runs on; Belfry downloads none.
        Install Google Chrome, Microsoft Edge or Chromium there (on Debian or Ubuntu:{' '}
        <code>apt install chromium</code>), or set <code>BELFRY_CHROMIUM_PATH</code> to the browser’s
        executable, then restart the server.
      </span>
    </div>
  );
}
