import { client } from '@/client/client.gen';
import type { RunOut, SessionOut } from '@/client';

// The calls of the branches API (API.md, "Branches"), in one place. They go through the generated
// client's instance (its base URL, token and error handling) with the contract's paths.

/** A node of a session's tree, from its root: each branch with the question it diverges after. */
export type BranchNode = {
  session: SessionOut;
  branched_after_run_id: string | null;
  /** The question (truncated) of the run it branched after; null for the root. */
  after_query?: string | null;
  children: BranchNode[];
};

/** A run of a branch's history: `inherited` marks the parent chain's runs up to the branch point (read-only here). */
export type BranchRun = RunOut & { inherited?: boolean };

export const isInherited = (run: RunOut | null | undefined): boolean => !!(run as BranchRun | null | undefined)?.inherited;

/** What happens to a deleted session's branches: they become sessions of their own, or go too. */
export type BranchesOnDelete = 'keep' | 'delete';

export async function branchSession(sessionId: string, afterRunId: string): Promise<SessionOut> {
  const res = await client.post<{ 201: SessionOut }, unknown, true>({
    security: [{ scheme: 'bearer', type: 'http' }],
    url: '/api/v1/sessions/{session_id}/branch',
    path: { session_id: sessionId },
    body: { after_run_id: afterRunId },
    headers: { 'Content-Type': 'application/json' },
  });
  return res.data;
}

export async function sessionTree(sessionId: string): Promise<BranchNode> {
  const res = await client.get<{ 200: BranchNode }, unknown, true>({
    security: [{ scheme: 'bearer', type: 'http' }],
    url: '/api/v1/sessions/{session_id}/tree',
    path: { session_id: sessionId },
  });
  return res.data;
}

export async function deleteSessionAndBranches(sessionId: string, branches: BranchesOnDelete | null): Promise<void> {
  await client.delete<{ 204: void }, unknown, true>({
    security: [{ scheme: 'bearer', type: 'http' }],
    url: '/api/v1/sessions/{session_id}',
    path: { session_id: sessionId },
    query: branches ? { branches } : undefined,
  });
}
