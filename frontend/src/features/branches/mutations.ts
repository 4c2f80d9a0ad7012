import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { createSession, type SessionOut } from '@/client';
import { sessionKeys } from '@/features/sessions/queries';
import { branchSession, deleteSessionAndBranches, type BranchesOnDelete } from './api';
import type { Arrival, ArrivalQuestion } from './arrival';
import { branchKeys } from './queries';


/**
 * Makes a branch after a run and opens it: with `ask`, the branch asks that question at once (an
 * earlier question edited); without, its question box takes the focus ("Branch from here").
 * `sessionId` is the session the run belongs to (an inherited run's own session, for a branch of a branch).
 */
export function useBranchFrom(projectId: string) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  return useMutation({
    mutationFn: ({ sessionId, afterRunId }: { sessionId: string; afterRunId: string; ask?: ArrivalQuestion }) => branchSession(sessionId, afterRunId),
    onSuccess: (branch, { ask }) => {
      void qc.invalidateQueries({ queryKey: sessionKeys.project(projectId) });
      void qc.invalidateQueries({ queryKey: branchKeys.all });
      const arrival: Arrival = ask ? { ask } : { focus: true };
      void navigate(`/projects/${projectId}/sessions/${branch.id}`, { state: { arrival } });
    },
  });
}

/**
 * The first question edited: a branch after nothing is not a branch, so the edited question starts
 * a new plain session of the project, which says why it is there.
 */
export function useAskInNewSession(projectId: string) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  return useMutation({
    mutationFn: async ({ ask }: { ask: ArrivalQuestion; fromTitle: string }) =>
      (await createSession({ path: { project_id: projectId }, body: { title: ask.query.length > 60 ? `${ask.query.slice(0, 57).trimEnd()}…` : ask.query } })).data!,
    onSuccess: (session, { ask, fromTitle }) => {
      void qc.invalidateQueries({ queryKey: sessionKeys.project(projectId) });
      const arrival: Arrival = {
        ask,
        note: `The first question of “${fromTitle}”, edited: a new session starts here (a branch needs a question before it). The original session is unchanged.`,
      };
      void navigate(`/projects/${projectId}/sessions/${session.id}`, { state: { arrival } });
    },
  });
}

/** Deletes a session; one with branches says what becomes of them. `gone`: every id that goes (it and, deleted too, its branches). */
export function useDeleteSessionTree(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    // The dialog says why a delete failed (and turns `has_branches` into the choice).
    meta: { silent: true },
    mutationFn: ({ id, branches }: { id: string; branches: BranchesOnDelete | null; gone: string[] }) => deleteSessionAndBranches(id, branches),
    onSuccess: (_, { gone }) => {
      // What is gone is not read again (a 404 each); the rest of the tree changed (kept branches stand alone).
      const mentionsGone = (key: readonly unknown[]) => key.some((k) => typeof k === 'string' && gone.includes(k));
      // The list first, so the sidebar asks nothing more of what went (its branches kept stand alone).
      qc.setQueryData<{ items: SessionOut[]; total: number }>(sessionKeys.project(projectId), (list) =>
        list && {
          ...list,
          items: list.items
            .filter((s) => !gone.includes(s.id))
            .map((s) => (s.parent_session_id && gone.includes(s.parent_session_id) ? { ...s, parent_session_id: null } : s)),
        },
      );
      qc.removeQueries({ predicate: (q) => mentionsGone(q.queryKey) });
      void qc.invalidateQueries({ predicate: (q) => (q.queryKey[0] === 'sessions' || q.queryKey[0] === 'branches') && !mentionsGone(q.queryKey) });
      void qc.invalidateQueries({ queryKey: sessionKeys.project(projectId) });
    },
  });
}
