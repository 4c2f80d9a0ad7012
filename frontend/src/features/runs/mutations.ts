import { useMutation, useQueryClient } from '@tanstack/react-query';
import { answerRunApiV1RunsRunIdInputPost, approveRunApiV1RunsRunIdApprovalPost, type ApprovalDecision } from '@/client';
import { runKeys } from './queries';
import { isFollowedError } from './run-errors';
import { attachRun } from './run-stream';

/**
 * After a reply (or a 409 saying the run no longer waits for one), follow the run: its stream
 * carries the reply and what comes next. A stream already open is reused; a run whose stream is
 * gone (after a reload, or answered elsewhere) is re-attached from the last event seen.
 */
function useFollowRun(sessionId: string, runId: string) {
  const qc = useQueryClient();
  return () => {
    void attachRun(sessionId, runId);
    void qc.invalidateQueries({ queryKey: runKeys.session(sessionId) });
  };
}

/** POST /runs/{id}/input: the answer to the agent's question. */
export function useAnswerRun(sessionId: string, runId: string) {
  const follow = useFollowRun(sessionId, runId);
  return useMutation({
    mutationFn: async (answer: string) =>
      (await answerRunApiV1RunsRunIdInputPost({ path: { run_id: runId }, body: { answer } })).data!,
    onSuccess: follow,
    onError: (e) => isFollowedError(e) && follow(),
  });
}

/** POST /runs/{id}/approval: approve, edit or reject the code a run in review mode waits with. */
export function useDecideRun(sessionId: string, runId: string) {
  const follow = useFollowRun(sessionId, runId);
  return useMutation({
    mutationFn: async (body: ApprovalDecision) => (await approveRunApiV1RunsRunIdApprovalPost({ path: { run_id: runId }, body })).data!,
    onSuccess: follow,
    onError: (e) => isFollowedError(e) && follow(),
  });
}
