import type { AppContext } from '../../context';

// STAND-IN for the history helper's registry (hb-common.md, Interface 2); replaced when main has it.
export interface SourceSummary {
  kind: string;
  id: number;
  name: string;
  appid: number;
  status: string;
  paused: boolean;
  lastCheckAt: number | null;
  statusSince: number | null;
  userId: number;
}
export interface SourceKind {
  kind: string;
  listForChannels(ctx: AppContext, channelIds: number[]): SourceSummary[];
  find(ctx: AppContext, id: number): SourceSummary | undefined;
}
export interface ChannelHealthProvider {
  summarize(ctx: AppContext, channelIds: number[]): Map<number, Record<string, unknown>>;
}
export function registerSourceKind(_ctx: AppContext, _k: SourceKind): void {}
export function registerChannelHealth(_ctx: AppContext, _p: ChannelHealthProvider): void {}
