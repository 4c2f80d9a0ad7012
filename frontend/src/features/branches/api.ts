import {
  branchSession as branch,
  deleteSession as remove,
  sessionTree as tree,
  unpinFiles as unpin,
  type RunOut,
  type SessionOut,
  type TreeNode,
} from '@/client';

// The calls of the branches API (API.md, "Branches"), in one place.

/** A node of a session's tree, from its root: each branch with the question it diverges after (`after_query`). */
export type BranchNode = TreeNode;

export const isInherited = (run: RunOut | null | undefined): boolean => !!run?.inherited;

/** What happens to a deleted session's branches: they become sessions of their own, or go too. */
export type BranchesOnDelete = 'keep' | 'delete';

export async function branchSession(sessionId: string, afterRunId: string): Promise<SessionOut> {
  return (await branch({ path: { session_id: sessionId }, body: { after_run_id: afterRunId } })).data!;
}

export async function sessionTree(sessionId: string): Promise<BranchNode> {
  return (await tree({ path: { session_id: sessionId } })).data!;
}

export async function deleteSessionAndBranches(sessionId: string, branches: BranchesOnDelete | null): Promise<void> {
  await remove({ path: { session_id: sessionId }, query: branches ? { branches } : undefined });
}

/** Moves a branch to the latest version of every project file (its files were those its past read). */
export async function moveToLatestFiles(sessionId: string): Promise<SessionOut> {
  return (await unpin({ path: { session_id: sessionId } })).data!;
}
