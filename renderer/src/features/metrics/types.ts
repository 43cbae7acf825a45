/** Wire shapes of the metrics family (wire-families §8: sources, series, alerts). */

export type MetricSourceStatus = 'pending' | 'ok' | 'firing' | 'paused';

export interface MetricSource {
  id: number;
  appid: number;
  name: string;
  paused: boolean;
  status: MetricSourceStatus;
  /** The last accepted point. */
  lastCheckAt: string | null;
  createdAt: string;
  /** The full M token only in the create and rotate answers, else the masked hint. */
  token: string;
  /** `{publicUrl}/metric/{token}`, with the same full or masked token. */
  url: string;
}

/** The body of POST /metric-source and PUT /metric-source/{id} (partial). */
export interface MetricSourceInput {
  appid?: number;
  name?: string;
  paused?: boolean;
}

export type Tags = Record<string, string>;

/** One series (name + tag set) of a source: `GET /metric-source/{id}/metrics`. */
export interface Metric {
  id: number;
  name: string;
  tags: Tags;
  unit: string;
  description: string;
  lastValue: number | null;
  lastAt: string | null;
  count24h: number;
}

export type Bucket = '1m' | '1h' | '1d';

export interface SeriesPoint {
  at: string;
  min: number;
  max: number;
  avg: number;
  last: number;
  count: number;
}

/** `GET …/metrics/{mid}/series?bucket=&from=&to=`: UTC-aligned buckets, empty ones omitted. */
export interface SeriesAnswer {
  metric: { id: number; name: string; tags: Tags };
  bucket: Bucket;
  from: string;
  to: string;
  points: SeriesPoint[];
}

export type AlertCondition = 'above' | 'below' | 'absent';

export interface MetricAlert {
  id: number;
  sourceId: number;
  metric: string;
  tags: Tags;
  condition: AlertCondition;
  threshold: number | null;
  forSec: number;
  priority: number;
  message: string;
  enabled: boolean;
  state: 'ok' | 'firing';
  since: string | null;
  lastValue: number | null;
  createdAt?: string;
}

/** The body of POST …/alerts and PUT …/alerts/{aid}. */
export interface MetricAlertInput {
  metric: string;
  tags: Tags;
  condition: AlertCondition;
  threshold?: number | null;
  forSec: number;
  priority: number;
  message: string;
  enabled: boolean;
}

/** `POST /metric/{token}`'s answer. */
export interface IngestAnswer {
  accepted: number;
  rejected: { index: number; error: string }[];
  paused?: boolean;
}
