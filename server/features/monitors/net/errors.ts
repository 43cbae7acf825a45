/**
 * The request-step error texts of a check (§2.3), from what node:net/tls/http raised. A TLS failure is
 * labelled by the caller (`TLS error:` for HTTP, `TLS handshake failed:` for port checks).
 */
export function netErrorText(err: unknown, tlsLabel: string): string {
  const e = err as NodeJS.ErrnoException & { library?: string; hostname?: string };
  const code = typeof e?.code === 'string' ? e.code : '';
  const detail = typeof e?.message === 'string' && e.message !== '' ? e.message : String(err);
  if (code === 'EBELFRYRESOLVE') return detail;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `DNS lookup failed: ${e.hostname ?? detail}`;
  if (isTlsError(code, e.library)) return `${tlsLabel}: ${detail}`;
  return code ? `${code}: ${detail}` : detail;
}

/** OpenSSL's certificate verification codes, node's TLS codes and anything the SSL library raised. */
function isTlsError(code: string, library: string | undefined): boolean {
  return (
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    /^(CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_|INVALID_CA|PATH_LENGTH_|ERR_CERT)/.test(code) ||
    (library ?? '').toLowerCase().includes('ssl')
  );
}

export function timeoutText(timeoutSec: number): string {
  return `timeout after ${timeoutSec} s`;
}

/** `work`'s result, or null as soon as `signal` aborts (a DNS lookup cannot be cancelled, only left behind). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise<T | null>((resolve, reject) => {
    const onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
