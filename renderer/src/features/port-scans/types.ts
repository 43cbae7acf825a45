/** Wire shapes of verified hosts and port scans (docs/api.md "Verified hosts", "Port scans"). */

export type ProofMethod = 'http' | 'dns';

export interface VerifiedHost {
  id: number;
  host: string;
  method: ProofMethod;
  /** 32 characters [a-z0-9]; public: the user publishes it. */
  token: string;
  verified: boolean;
  verifiedAt: string | null;
  checkedAt: string | null;
  lastError: string | null;
  /** null for dns. */
  httpPort: number | null;
  /** The server's steps for this method, in English. */
  instructions: string;
  createdAt: string;
}

export type ScanStatus = 'queued' | 'running' | 'done' | 'cancelled' | 'failed';

export interface OpenPort {
  port: number;
  service?: string;
  banner?: string;
}

export interface PortScan {
  id: number;
  appid: number;
  name: string;
  paused: false;
  status: ScanStatus;
  lastCheckAt: string | null;
  createdAt: string;
  host: string;
  /** `top100`, `top1000` or merged ranges (`22-23,80-100,443`). */
  ports: string;
  concurrency: number;
  timeoutMs: number;
  notes: string;
  /** scanned ÷ portCount, 3 decimals, rounded down; 1 only when done. */
  progress: number;
  portCount: number;
  scanned: number;
  open: OpenPort[];
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

/** The body of POST /port-scan. */
export interface ScanInput {
  appid: number;
  host: string;
  ports: string;
  concurrency: number;
  timeoutMs: number;
  name?: string;
}

/** `port-scan:progress` on `/ws?events=1`: `open` is a count. */
export interface ProgressFrame {
  id: number;
  appid: number;
  status: ScanStatus;
  progress: number;
  scanned: number;
  portCount: number;
  open: number;
}

/** The fields of a port monitor the scan page needs (to link an open port to its monitor). */
export interface PortMonitorRef {
  id: number;
  kind: 'port-monitor';
  name: string;
  host: string;
  port: number;
}
