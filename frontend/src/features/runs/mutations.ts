import { answerRun, approveRun, type ApprovalDecision, type RunOut } from '@/client';
import { isFollowedError } from './run-errors';

/** The user's replies to a waiting run: the answer to its question, the decision on its code. */
export type ReplyActions = {
  /** POST /runs/{id}/input: the answer to the agent's question. */
  answer: (runId: string, answer: string) => Promise<RunOut>;
  /** POST /runs/{id}/approval: approve, edit or reject the code a run in review mode waits with. */
  decide: (runId: string, decision: ApprovalDecision) => Promise<RunOut>;
};

/**
 * The replies, each followed by `follow(runId)` once taken (or refused because the run no longer
 * waits for it: answered elsewhere, or ended): the run's stream carries the reply and what comes next.
 */
export function replyActions(follow: (runId: string) => void): ReplyActions {
  const thenFollow = async (runId: string, reply: Promise<{ data?: RunOut }>) => {
    try {
      const { data } = await reply;
      follow(runId);
      return data!;
    } catch (e) {
      if (isFollowedError(e)) follow(runId);
      throw e;
    }
  };
  return {
    answer: (runId, answer) => thenFollow(runId, answerRun({ path: { run_id: runId }, body: { answer } })),
    decide: (runId, body) => thenFollow(runId, approveRun({ path: { run_id: runId }, body })),
  };
}
