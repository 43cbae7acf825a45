/** Wire shapes of maintenance windows (docs/api.md "Maintenance windows"). */

/** ISO weekday: 1 = Monday … 7 = Sunday. */
export type WeekDay = 1 | 2 | 3 | 4 | 5 | 6 | 7;

export type WindowSchedule =
  | { type: 'once'; startsAt: string; endsAt: string }
  | { type: 'weekly'; timezone: string; days: WeekDay[]; start: string; end: string };

/** A heartbeat (`heartbeat`) or a monitor of any kind. */
export interface SourceRef {
  kind: string;
  id: number;
}

/** The body of POST /maintenance-window and PUT /maintenance-window/{id} (PUT replaces the record). */
export interface MaintenanceInput {
  name: string;
  channelIds: number[];
  includeSubtree: boolean;
  monitors: SourceRef[];
  schedule: WindowSchedule;
  enabled: boolean;
}

export interface MaintenanceWindow extends MaintenanceInput {
  id: number;
  /** Enabled and inside an occurrence now. */
  active: boolean;
  /** The current occurrence while active, else the next; null when disabled or none left. */
  nextStart: string | null;
  nextEnd: string | null;
  coveredChannelIds: number[];
  createdAt: string;
}
