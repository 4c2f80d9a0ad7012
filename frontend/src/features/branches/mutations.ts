import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { createSession } from '@/client';
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

/** Deletes a session; one with branches says what becomes of them. */
export function useDeleteSessionTree(projectId: string) {
  const qc = useQueryClient();
  return useMutation({
    // The dialog says why a delete failed (and turns `has_branches` into the choice).
    meta: { silent: true },
    mutationFn: ({ id, branches }: { id: string; branches: BranchesOnDelete | null }) => deleteSessionAndBranches(id, branches),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: sessionKeys.project(projectId) });
      void qc.invalidateQueries({ queryKey: branchKeys.all });
      void qc.invalidateQueries({ queryKey: sessionKeys.all });
    },
  });
}
