import { GitBranch } from 'lucide-react';
import type { RunOut } from '@/client';
import { Button } from '@/components/ui/button';
import type { ArrivalQuestion } from './arrival';
import { useAskInNewSession, useBranchFrom } from './mutations';

/** "Branch from here" on a finished question: a new branch after it, opened with an empty question box. */
export function BranchFromHere({ onBranch, pending }: { onBranch: () => void; pending: boolean }) {
  return (
    <Button
      variant="ghost"
      size="sm"
      className="h-7 px-2"
      disabled={pending}
      title="Start a new branch after this question, with the variables as they were then"
      data-testid="branch-from-here"
      onClick={onBranch}
    >
      <GitBranch /> Branch from here
    </Button>
  );
}

/**
 * What a session's questions can branch: after any finished run, and an edit of a question that is
 * not the last, asked in a branch after the question before it (the first question: in a new session).
 */
export function useRunBranching(projectId: string, sessionId: string, title: string) {
  const branch = useBranchFrom(projectId);
  const fresh = useAskInNewSession(projectId);
  return {
    pending: branch.isPending || fresh.isPending,
    /** A branch after `run` (the branch's own or an inherited run: both are in this session's history). */
    branchAfter: (run: RunOut) => branch.mutate({ sessionId, afterRunId: run.id }),
    /** The edited question `ask`, of the question that comes after `previous` (null: the first question). */
    editEarlier: (previous: RunOut | null, ask: ArrivalQuestion) =>
      previous ? branch.mutate({ sessionId, afterRunId: previous.id, ask }) : fresh.mutate({ ask, fromTitle: title }),
  };
}
