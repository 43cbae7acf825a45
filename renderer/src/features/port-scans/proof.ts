import type { VerifiedHost } from './types';

export const PROOF_PATH = '/.well-known/belfry-verification.txt';
export const TXT_PREFIX = 'belfry-verification=';

export type ProofSteps =
  | { method: 'http'; url: string; content: string }
  | { method: 'dns'; name: string; value: string };

/**
 * The values to copy for a host's proof, read from the server's `instructions` (so the page shows what
 * the server will check), else built from the record the way docs/api.md describes them.
 */
export function proofSteps(h: VerifiedHost): ProofSteps {
  if (h.method === 'http') {
    const m = /^Serve the text (\S+) at (\S+), then /.exec(h.instructions);
    if (m) return { method: 'http', content: m[1]!, url: m[2]! };
    const host = h.host.includes(':') ? `[${h.host}]` : h.host;
    const port = h.httpPort && h.httpPort !== 80 ? `:${h.httpPort}` : '';
    return { method: 'http', content: h.token, url: `http://${host}${port}${PROOF_PATH}` };
  }
  const m = /^Add a TXT record to (\S+): (\S+), then /.exec(h.instructions);
  if (m) return { method: 'dns', name: m[1]!, value: m[2]! };
  return { method: 'dns', name: h.host, value: `${TXT_PREFIX}${h.token}` };
}
