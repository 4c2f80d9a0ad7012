import { useQueries } from '@tanstack/react-query';
import { useState } from 'react';
import type { SessionOut } from '@/client';
import type { BranchNode } from './api';
import { treeQuery } from './queries';

/** A row of the sidebar's session tree. */
export type TreeRow = {
  session: SessionOut;
  /** 0 for a session of its own, 1 for its branch, 2 for a branch of that… */
  depth: number;
  /** Its direct branches (the rows under it when open). */
  children: number;
  /** Every branch below it, at any depth. */
  descendants: number;
  open: boolean;
};

/**
 * The project's sessions as a tree, in the list's order at each level: a branch under its parent,
 * a closed session's branches left out. A branch whose parent is not in the list (deleted, or
 * not listed) stands as a session of its own.
 */
export function flattenTree(sessions: SessionOut[], closed: ReadonlySet<string>): TreeRow[] {
  const ids = new Set(sessions.map((s) => s.id));
  const kids = new Map<string, SessionOut[]>();
  for (const s of sessions) {
    const parent = s.parent_session_id && ids.has(s.parent_session_id) ? s.parent_session_id : null;
    if (parent) kids.set(parent, [...(kids.get(parent) ?? []), s]);
  }
  const count = (id: string, seen: Set<string>): number =>
    (kids.get(id) ?? []).reduce((n, k) => (seen.has(k.id) ? n : (seen.add(k.id), n + 1 + count(k.id, seen))), 0);
  const rows: TreeRow[] = [];
  const visit = (s: SessionOut, depth: number, seen: Set<string>) => {
    if (seen.has(s.id)) return; // a cycle in bad data must not hang the sidebar
    seen.add(s.id);
    const children = kids.get(s.id) ?? [];
    const open = !closed.has(s.id);
    rows.push({ session: s, depth, children: children.length, descendants: count(s.id, new Set([s.id])), open });
    if (open) for (const k of children) visit(k, depth + 1, seen);
  };
  const seen = new Set<string>();
  for (const s of sessions) if (!s.parent_session_id || !ids.has(s.parent_session_id)) visit(s, 0, seen);
  return rows;
}

/**
 * A branch's title as its row under its parent reads it: a title made of the parent's ("<parent> —
 * branch after Q2") drops the parent's part, which the row above says.
 */
export function titleUnder(session: SessionOut, parent: SessionOut | undefined): string {
  const title = session.title || 'Untitled session';
  const prefix = parent?.title ? `${parent.title} — ` : null;
  return prefix && title.startsWith(prefix) && title.length > prefix.length ? title.slice(prefix.length) : title;
}

/** session id → the question it diverges after, from the trees of the sessions that have branches. */
export function questionsOf(trees: (BranchNode | undefined)[]): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (n: BranchNode) => {
    if (n.after_query) out.set(n.session.id, n.after_query);
    n.children?.forEach(walk);
  };
  trees.forEach((t) => t && walk(t));
  return out;
}

/** The questions branches diverge after: one tree read per session of its own that has branches. */
export function useBranchQuestions(rows: TreeRow[]): Map<string, string> {
  const roots = rows.filter((r) => r.depth === 0 && r.children > 0).map((r) => r.session.id);
  const trees = useQueries({ queries: roots.map((id) => ({ ...treeQuery(id), meta: { silent: true } })) });
  return questionsOf(trees.map((t) => t.data));
}

/** The sessions as a foldable tree (the sidebar's and the project page's): the rows shown, the
 * question each branch diverges after, the sessions by id (for a branch's parent) and the fold. */
export function useSessionTree(sessions: SessionOut[]) {
  const [closed, setClosed] = useState<ReadonlySet<string>>(new Set());
  const rows = flattenTree(sessions, closed);
  const questions = useBranchQuestions(rows);
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const toggle = (id: string) =>
    setClosed((c) => {
      const next = new Set(c);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  return { rows, questions, byId, toggle };
}
