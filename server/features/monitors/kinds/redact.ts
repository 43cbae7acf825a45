import { type CheckOutcome, SECRET_MASK } from '../kind';
import type { RequestFields } from './http';
import { SECRET_NAME } from './validate';

/**
 * The secret values one check sends (§0.3: variables and headers with secret names, basic-auth passwords).
 * A failing request's text can quote them — `ERR_INVALID_URL: invalid URL https://x/?key=…` once a secret
 * variable was substituted, a server echoing a token into a body excerpt — so every text of an outcome is
 * passed through `redact` before it leaves the kind (lastError, the down message, the test answer).
 */
export class SecretValues {
  private readonly values = new Set<string>();

  add(value: string | null | undefined): void {
    if (!value) return;
    // as written, and as a URL carries it once encoded
    for (const v of [value, encodeURIComponent(value), encodeURI(value)]) this.values.add(v);
  }

  /** The values of the entries whose names are secret (variables, headers). */
  addNamed(entries: Record<string, string>): void {
    for (const [k, v] of Object.entries(entries)) if (SECRET_NAME.test(k)) this.add(v);
  }

  /** A request's secret header values and basic-auth password. */
  addRequest(r: Pick<RequestFields, 'headers' | 'basicAuth'>): void {
    this.addNamed(r.headers);
    this.add(r.basicAuth?.password);
  }

  /** `text` with every secret value replaced by `********` (longest first, so no part of one is left). */
  redactText(text: string): string {
    let out = text;
    for (const v of [...this.values].sort((a, b) => b.length - a.length))
      out = out.split(v).join(SECRET_MASK);
    return out;
  }

  /** The outcome with its error and every string of its details redacted. */
  redact<K extends object>(o: CheckOutcome<K>): CheckOutcome<K> {
    if (this.values.size === 0) return o;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.redactText(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === 'object')
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
      return v;
    };
    return {
      ...o,
      ...(o.error === undefined ? {} : { error: this.redactText(o.error) }),
      details: walk(o.details) as Record<string, unknown>,
    };
  }
}
