import type { Channel } from '../../api/types';

export interface TreeNode {
  channel: Channel;
  children: TreeNode[];
  depth: number;
}

/** Channels as a tree by parentId; a channel whose parent is not visible (shared, deleted) is a root. */
export function buildTree(channels: Channel[]): TreeNode[] {
  const byId = new Map(channels.map((c) => [c.id, c]));
  const kids = new Map<number | null, Channel[]>();
  for (const c of channels) {
    const parent = c.parentId !== undefined && byId.has(c.parentId) ? c.parentId : null;
    kids.set(parent, [...(kids.get(parent) ?? []), c]);
  }
  const seen = new Set<number>();
  const walk = (parent: number | null, depth: number): TreeNode[] =>
    (kids.get(parent) ?? [])
      .filter((c) => !seen.has(c.id) && seen.add(c.id))
      .map((c) => ({ channel: c, depth, children: walk(c.id, depth + 1) }));
  return walk(null, 0);
}

export function flatten(nodes: TreeNode[]): TreeNode[] {
  return nodes.flatMap((n) => [n, ...flatten(n.children)]);
}

/** The channel and every descendant id (for live messages in a folder view). */
export function subtreeIds(channels: Channel[], rootId: number): Set<number> {
  const ids = new Set([rootId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const c of channels)
      if (c.parentId !== undefined && ids.has(c.parentId) && !ids.has(c.id)) {
        ids.add(c.id);
        grew = true;
      }
  }
  return ids;
}
