import type { AppContext } from '../../context';

// STAND-IN for the history helper's module (hb-common.md, Interface 2); replaced when main has it.
export interface HistoryKind {
  kind: string;
  upStatuses: string[];
  downStatuses: string[];
  maintenanceStatuses?: string[];
}
export interface CheckEntry {
  at: number;
  ok: boolean;
  status: string;
  responseTimeMs?: number | null;
  error?: string;
  extra?: Record<string, unknown>;
}
export function registerHistoryKind(_ctx: AppContext, _k: HistoryKind): void {}
export function recordStatus(
  _ctx: AppContext,
  _kind: string,
  _id: number,
  _status: string,
  _at: number,
): void {}
export function recordGap(_ctx: AppContext, _kind: string, _id: number, _from: number, _to: number): void {}
export function recordCheck(_ctx: AppContext, _kind: string, _id: number, _e: CheckEntry): void {}
export function forgetSource(_ctx: AppContext, _kind: string, _id: number): void {}
